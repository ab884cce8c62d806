// brig serve's /files through the real e2b SDK (tests/integration/serve.bats):
// files.write then files.read of a text and a 5 MiB binary (octet-stream
// and multipart), a multi-file write, errors for a missing file and a
// directory, and a write through a magic link refused. Environment as
// serve_sdk.mjs, plus OUTSIDE (a host path the container must not reach).
import { Sandbox, FileNotFoundError, InvalidArgumentError } from 'e2b'
import { createHash, randomBytes } from 'node:crypto'

const { KEY1, POOL, OUTSIDE } = process.env
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
  }
}
const sha = (b) => createHash('sha256').update(b).digest('hex')

const sbx = await Sandbox.create(POOL, { apiKey: KEY1 })
const w = await sbx.files.write('/tmp/d/e/hello.txt', 'hello, files\n')
check('write: the entry', w.path === '/tmp/d/e/hello.txt' && w.name === 'hello.txt' && w.type === 'file',
  JSON.stringify(w))
check('read: text round trip', (await sbx.files.read('/tmp/d/e/hello.txt')) === 'hello, files\n')
check('write: inside the container', (await sbx.commands.run('cat /tmp/d/e/hello.txt')).stdout === 'hello, files\n')
await sbx.files.write('/tmp/d/e/hello.txt', 'shorter\n')
check('write: replaces', (await sbx.files.read('/tmp/d/e/hello.txt')) === 'shorter\n')

const big = randomBytes(5 * 1024 * 1024)
await sbx.files.write('/tmp/big.bin', new Blob([big]))
const back = Buffer.from(await sbx.files.read('/tmp/big.bin', { format: 'bytes' }))
check('read: 5 MiB binary round trip (multipart)', back.length === big.length && sha(back) === sha(big),
  back.length)
const inside = (await sbx.commands.run('sha256sum /tmp/big.bin')).stdout.split(' ')[0]
check('write: the container has the same bytes', inside === sha(big), inside)
await sbx.files.write('/tmp/big2.bin', new Blob([big]).stream())
const back2 = Buffer.from(await sbx.files.read('/tmp/big2.bin', { format: 'bytes' }))
check('read: 5 MiB binary round trip (octet-stream)', sha(back2) === sha(big), back2.length)
const empty = await sbx.files.write('/tmp/empty', '')
check('write: an empty file', empty.path === '/tmp/empty' && (await sbx.files.read('/tmp/empty')) === '')

const multi = await sbx.files.write([{ path: '/tmp/m/1.txt', data: 'one' }, { path: '/tmp/m/2.txt', data: 'two' }])
check('write: several files', multi.length === 2 && (await sbx.files.read('/tmp/m/2.txt')) === 'two',
  JSON.stringify(multi))

await throws('read: a missing file is FileNotFoundError', () => sbx.files.read('/tmp/nope'), FileNotFoundError)
await throws('read: a directory is InvalidArgumentError', () => sbx.files.read('/tmp/m'), InvalidArgumentError)
await throws('write: onto a directory is InvalidArgumentError', () => sbx.files.write('/tmp/m', 'x'),
  InvalidArgumentError)

// out of the root through symlinks: a magic link is refused, a plain one
// stays inside the container's root
await sbx.commands.run(`ln -s /proc/self/root/tmp /tmp/magic; ln -s ../../../../..${OUTSIDE} /tmp/up`)
await throws('write: through a magic link is refused', () => sbx.files.write('/tmp/magic/brig-serve-escape-probe', 'escaped'),
  InvalidArgumentError)
let upOk = true
try { await sbx.files.write('/tmp/up/owned', 'escaped') } catch { upOk = false }
console.log('up write ' + (upOk ? 'landed inside' : 'refused'))
await sbx.kill()
console.log(failed ? `${failed} checks failed` : 'all checks passed')
process.exit(failed ? 1 : 0)
