// brig serve's claim-time options through the real e2b SDK (tests/integration/serve.bats):
// create's envs and metadata (seen by commands and by list/getInfo), and
// the lease: timeoutMs, setTimeout, connect's timeoutMs, the sandbox gone
// at its deadline. Environment as serve_sdk.mjs. One "ok"/"not ok" line per
// check; exit 1 when any failed.
import { Sandbox, SandboxError, SandboxNotFoundError } from 'e2b'

const { KEY1, POOL } = process.env
let failed = 0
function check (name, cond, got = '') {
  console.log(`${cond ? 'ok' : 'not ok'} - ${name}${cond ? '' : ' (got ' + got + ')'}`)
  if (!cond) failed++
}
async function throws (name, fn, cls, re) {
  try {
    const v = await fn()
    check(name, false, 'no error: ' + JSON.stringify(v))
  } catch (e) {
    check(name, e instanceof cls && (!re || re.test(e.message)), `${e?.name}: ${e?.message}`)
  }
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const opts = { apiKey: KEY1 }

// bad options are refused naming the field, and consume no member
await throws('create: an env key with "=" is refused naming envVars',
  () => Sandbox.create(POOL, { ...opts, envs: { 'A=B': 'x' } }), SandboxError, /400: envVars/)
await throws('create: a metadata key the claim refuses names metadata',
  () => Sandbox.create(POOL, { ...opts, metadata: { 'k y': 'x' } }), SandboxError, /400: metadata/)

// envs and metadata
const meta = { owner: 'alice', team: 'a b&=c%20' }
const sbx = await Sandbox.create(POOL, { ...opts, envs: { GREETING: 'hello there', X2: 'y' }, metadata: meta,
  timeoutMs: 60000 })
const env = (await sbx.commands.run('env')).stdout
check('envs: every command has them', env.includes('GREETING=hello there\n') && env.includes('X2=y\n'), env)
const own = await sbx.commands.run('echo "$GREETING"', { envs: { GREETING: 'mine' } })
check('envs: a command\'s own envs win', own.stdout === 'mine\n', JSON.stringify(own.stdout))
const info = await sbx.getInfo()
check('getInfo: the metadata', JSON.stringify(info.metadata) === JSON.stringify(meta), JSON.stringify(info.metadata))
const left = info.endAt.getTime() - Date.now()
check('getInfo: endAt is the timeout away', left > 55000 && left <= 61000, left)
const found = await Sandbox.list({ ...opts, query: { metadata: { team: 'a b&=c%20' } } }).nextItems()
check('list: the metadata filter finds it', found.length === 1 && found[0].sandboxId === sbx.sandboxId &&
  found[0].metadata.owner === 'alice', JSON.stringify(found))
const none = await Sandbox.list({ ...opts, query: { metadata: { owner: 'bob' } } }).nextItems()
check('list: another value finds nothing', none.length === 0, JSON.stringify(none))

// connect lengthens the lease, never shortens it
await Sandbox.connect(sbx.sandboxId, { ...opts, timeoutMs: 120000 })
const longer = (await sbx.getInfo()).endAt.getTime() - Date.now()
check('connect: a longer timeout lengthens the lease', longer > 115000 && longer <= 121000, longer)
await Sandbox.connect(sbx.sandboxId, { ...opts, timeoutMs: 10000 })
const kept = (await sbx.getInfo()).endAt.getTime() - Date.now()
check('connect: a shorter timeout leaves it', kept > 110000, kept)

// a short lease, lengthened by setTimeout, then over: the sandbox is gone
// within a second of its deadline
const short = await Sandbox.create(POOL, { ...opts, timeoutMs: 2000 })
await short.commands.run('sleep 1000', { background: true, timeoutMs: 0 })
await short.setTimeout(4000)
const deadline = Date.now() + 4000
await sleep(2600)
check('setTimeout: still running past the first deadline', (await short.isRunning()) === true)
let gone = 0
while (Date.now() < deadline + 5000) {
  if (!(await short.isRunning())) {
    gone = Date.now()
    break
  }
  await sleep(50)
}
console.log('gone ' + (gone - deadline) + ' ms after the deadline')
check('timeout: gone at the deadline', gone >= deadline - 1100 && gone <= deadline + 1000, gone - deadline)
await throws('timeout: getInfo is SandboxNotFoundError', () => short.getInfo(), SandboxNotFoundError)
await throws('timeout: setTimeout is SandboxNotFoundError', () => short.setTimeout(5000), SandboxNotFoundError)
const listed = await Sandbox.list(opts).nextItems()
check('timeout: list has only the other', listed.length === 1 && listed[0].sandboxId === sbx.sandboxId,
  JSON.stringify(listed.map((s) => s.sandboxId)))
check('kill: the first', (await sbx.kill()) === true)
console.log('SHORT ' + short.sandboxId)
console.log(failed ? `${failed} checks failed` : 'all checks passed')
process.exit(failed ? 1 : 0)
