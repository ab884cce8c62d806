// brig serve driven by the real e2b SDK, through its public API only
// (tests/integration/serve.bats). Environment: E2B_API_URL and
// E2B_SANDBOX_URL (the server), KEY1 and KEY2 (two keys of its key file),
// POOL (a pool of two members). Prints one "ok"/"not ok" line per check and
// exits 1 when any failed.
import {
  Sandbox, CommandExitError, AuthenticationError, SandboxNotFoundError, ServiceBusyError,
} from 'e2b'

const { KEY1, KEY2, POOL } = process.env
let failed = 0
function check (name, cond, got = '') {
  console.log(`${cond ? 'ok' : 'not ok'} - ${name}${cond ? '' : ' (got ' + got + ')'}`)
  if (!cond) failed++
}
async function throws (name, fn, cls) {
  try {
    const v = await fn()
    check(name, false, 'no error: ' + JSON.stringify(v))
  } catch (e) {
    check(name, e instanceof cls, `${e?.name}: ${e?.message}`)
    return e
  }
}

const sbx = await Sandbox.create(POOL, { apiKey: KEY1 })
check('create: a sandbox from the pool', /^sb[0-9a-f]{20}$/.test(sbx.sandboxId), sbx.sandboxId)

// a foreground command: streamed callbacks, per-command env
const out = []
const err = []
const r = await sbx.commands.run('echo hi; echo "$X" >&2; echo there', {
  envs: { X: 'from-env' }, onStdout: (d) => out.push(d), onStderr: (d) => err.push(d),
})
check('run: exit code 0', r.exitCode === 0, JSON.stringify(r))
check('run: stdout', r.stdout === 'hi\nthere\n', JSON.stringify(r.stdout))
check('run: onStdout saw the output', out.join('') === 'hi\nthere\n', JSON.stringify(out))
check('run: onStderr saw the env', err.join('') === 'from-env\n', JSON.stringify(err))

// a command runs inside the container, not on the host
const inside = await sbx.commands.run('hostname')
check('run: inside the container', inside.stdout.trim() === 'brig', JSON.stringify(inside.stdout))

// a failing command
const e = await throws('run: non-zero exit is CommandExitError',
  () => sbx.commands.run('echo out; echo bad >&2; exit 3'), CommandExitError)
check('run: exit code, stdout, stderr of the failure',
  e?.exitCode === 3 && e?.stdout === 'out\n' && e?.stderr === 'bad\n' && e?.error === 'exit status 3',
  JSON.stringify({ c: e?.exitCode, o: e?.stdout, s: e?.stderr, e: e?.error }))

// a background command, listed, signalled, and its end seen
const bg = await sbx.commands.run('sleep 1000', { background: true, timeoutMs: 0 })
check('background: a pid', Number.isInteger(bg.pid) && bg.pid > 0, bg.pid)
const procs = await sbx.commands.list()
check('list: the background command', procs.some((p) => p.pid === bg.pid && p.args.includes('sleep 1000')),
  JSON.stringify(procs))
check('kill: true', (await sbx.commands.kill(bg.pid)) === true)
const k = await throws('kill: wait() ends with CommandExitError', () => bg.wait(), CommandExitError)
check('kill: signal: killed', k?.exitCode === -1 && k?.error === 'signal: killed',
  JSON.stringify({ c: k?.exitCode, e: k?.error }))
check('kill: an unknown pid is false', (await sbx.commands.kill(999999)) === false)
const after = await sbx.commands.list()
check('list: the killed command is gone', !after.some((p) => p.pid === bg.pid), JSON.stringify(after))

// stdin, then disconnect and connect again
const cat = await sbx.commands.run('cat', { background: true, stdin: true })
await sbx.commands.sendStdin(cat.pid, 'piped\n')
await cat.closeStdin()
const catr = await cat.wait()
check('stdin: sendStdin and closeStdin', catr.stdout === 'piped\n', JSON.stringify(catr))
const late = await sbx.commands.run('sleep 1; echo late', { background: true })
await late.disconnect()
const again = await sbx.commands.connect(late.pid)
const lr = await again.wait()
check('connect: a process outlives its stream', lr.stdout.includes('late'), JSON.stringify(lr))

// files: list, makeDir, exists, getInfo, rename, remove, inside the container
await sbx.commands.run('mkdir -p /tmp/w && echo hello >/tmp/w/a.txt && ln -s / /tmp/w/top')
const ls = await sbx.files.list('/tmp/w')
check('files.list: a file and a symlink', ls.some((e) => e.name === 'a.txt' && e.type === 'file' &&
  Number(e.size) === 6 && e.path === '/tmp/w/a.txt') && ls.some((e) => e.name === 'top'), JSON.stringify(ls))
check('files.makeDir: true', (await sbx.files.makeDir('/tmp/w/new/deeper')) === true)
check('files.makeDir: false when it exists', (await sbx.files.makeDir('/tmp/w/new/deeper')) === false)
check('files.exists: true', (await sbx.files.exists('/tmp/w/a.txt')) === true)
check('files.exists: false', (await sbx.files.exists('/tmp/w/nope')) === false)
const info = await sbx.files.getInfo('/tmp/w/a.txt')
check('files.getInfo', info.type === 'file' && info.name === 'a.txt', JSON.stringify(info))
const moved = await sbx.files.rename('/tmp/w/a.txt', '/tmp/w/sub/b.txt')
check('files.rename', moved.path === '/tmp/w/sub/b.txt', JSON.stringify(moved))
check('files.rename: moved inside', (await sbx.commands.run('cat /tmp/w/sub/b.txt')).stdout === 'hello\n')
const top = await sbx.files.list('/tmp/w/top')
check('files.list: "/" through a symlink is the container\'s', top.some((e) => e.path === '/tmp/w/top/tmp'),
  JSON.stringify(top.map((e) => e.path)))
await sbx.files.remove('/tmp/w')
check('files.remove: recursive', (await sbx.files.exists('/tmp/w')) === false)

// the control plane: list, a second key, a wrong key, pagination, an empty pool
const sbx2 = await Sandbox.create(POOL, { apiKey: KEY1 })
const page = Sandbox.list({ apiKey: KEY1, limit: 1 })
const ids = []
while (page.hasNext) ids.push(...(await page.nextItems()).map((s) => s.sandboxId))
check('list: both sandboxes, one per page', ids.length === 2 && ids.includes(sbx.sandboxId) &&
  ids.includes(sbx2.sandboxId), JSON.stringify(ids))
const other = await Sandbox.list({ apiKey: KEY2 }).nextItems()
check('list: a second key sees none of them', other.length === 0, JSON.stringify(other))
await throws('connect: a second key gets SandboxNotFoundError',
  () => Sandbox.connect(sbx.sandboxId, { apiKey: KEY2 }), SandboxNotFoundError)
check('kill: a second key cannot', (await Sandbox.kill(sbx.sandboxId, { apiKey: KEY2 })) === false)
await throws('create: a wrong key is AuthenticationError',
  () => Sandbox.create(POOL, { apiKey: 'not-a-key' }), AuthenticationError)
await throws('create: an empty pool is ServiceBusyError',
  () => Sandbox.create(POOL, { apiKey: KEY1 }), ServiceBusyError)
const same = await Sandbox.connect(sbx.sandboxId, { apiKey: KEY1 })
check('connect: the owner gets it back', (await same.commands.run('echo back')).stdout === 'back\n')

// kill releases: the sandbox is gone for its owner and for envd
check('kill: true for the owner', (await sbx.kill()) === true)
check('kill: isRunning() is false after', (await sbx.isRunning()) === false)
check('kill: a second kill is false', (await Sandbox.kill(sbx.sandboxId, { apiKey: KEY1 })) === false)
check('kill: the other sandbox', (await sbx2.kill()) === true)
const left = await Sandbox.list({ apiKey: KEY1 }).nextItems()
check('list: nothing left', left.length === 0, JSON.stringify(left))

console.log(failed ? `${failed} checks failed` : 'all checks passed')
process.exit(failed ? 1 : 0)
