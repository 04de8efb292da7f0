#!/usr/bin/env node
// The bin entry: the only module with side effects on load; every other module does nothing at import.
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
    // exit once the output is flushed: an open handle (the host holding the proxy's stdin, a server's
    // child holding its stdout) must not keep the process alive
    await Promise.all([flushed(process.stdout), flushed(process.stderr)])
    process.exit(status)
  })
