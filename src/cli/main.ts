#!/usr/bin/env node
// The bin entry: the only module that does something when loaded. Everything else
// lives in importable modules that do nothing at import.
import { main } from './program.js'
import { describeError } from '../internal/describe.js'

main(process.argv).then(
  (status) => {
    process.exitCode = status
  },
  (e: unknown) => {
    process.stderr.write(`toolstack: ${describeError(e)}\n`)
    process.exitCode = 2
  },
)
