// A real redis-server for the store's tests and its figure: started on a free port of 127.0.0.1 with no
// persistence, killed (as a crash would) or stopped, and started again on the same port.
import { spawn, spawnSync } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { createServer, connect } from 'node:net'

/** A redis-server the tests started. */
export interface RedisServer {
  readonly port: number
  /** `redis://127.0.0.1:PORT`. */
  readonly url: string
  readonly pid: () => number | undefined
  /** Kills it with SIGKILL, as a crash would, and waits until it is gone. */
  readonly kill: () => Promise<void>
  /** Starts it again on the same port (empty: it keeps nothing). */
  readonly restart: () => Promise<void>
  /** Stops it for good; safe to call twice. */
  readonly stop: () => Promise<void>
}

/** Whether `redis-server` is on PATH. */
export const hasRedisServer = (): boolean => spawnSync('redis-server', ['--version']).status === 0

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const address = s.address()
      s.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })

const answers = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.setTimeout(500)
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (d) => {
      socket.destroy()
      resolve(d.toString().startsWith('+PONG'))
    })
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => {
      socket.destroy()
      resolve(false)
    })
  })

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()))

/** Starts a redis-server on a free port of 127.0.0.1 and waits until it answers PING. */
export const startRedis = async (): Promise<RedisServer> => {
  // a machine without it fails here, saying what to install, not later on a refused connection
  if (!hasRedisServer()) throw new Error('redis-server is not on PATH: apt-get install -y redis-server (see README)')
  const port = await freePort()
  let child: ChildProcess | undefined
  const launch = async (): Promise<void> => {
    const c = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
      { stdio: 'ignore' },
    )
    child = c
    const end = Date.now() + 10_000
    while (!(await answers(port))) {
      if (c.exitCode !== null) throw new Error(`redis-server exited with ${c.exitCode} on port ${port}`)
      if (Date.now() > end) throw new Error(`redis-server did not answer on port ${port}`)
      await new Promise((r) => setTimeout(r, 25))
    }
  }
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const c = child
    child = undefined
    if (c === undefined) return
    c.kill(signal)
    await exited(c)
  }
  await launch()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: () => child?.pid,
    kill: () => end('SIGKILL'),
    restart: launch,
    stop: () => end('SIGTERM'),
  }
}
