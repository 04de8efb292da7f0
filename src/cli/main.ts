#!/usr/bin/env node
// The bin entry: the only module that does something when loaded. Everything else
// lives in importable modules that do nothing at import.
import { main } from './program.js'
import { describeError } from './text.js'

const flushed = (stream: NodeJS.WriteStream): Promise<void> =>
  new Promise((resolve) => (stream.writable && !stream.destroyed ? stream.write('', () => resolve()) : resolve()))

main(process.argv)
  .catch((e: unknown) => {
    process.stderr.write(`toolstack: ${describeError(e)}\n`)
    return 2
  })
  .then(async (status) => {
    // the command is done once its output is out; a handle it leaves open (a host
    // holding the proxy's stdin, a process holding the server's stdout) must not keep
    // it alive
    await Promise.all([flushed(process.stdout), flushed(process.stderr)])
    process.exit(status)
  })
