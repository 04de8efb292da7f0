/**
 * `toolstack audit`: replays the audit over recorded chat-completion request bodies.
 *
 * The input is read as JSON Lines when its first non-blank line parses on its own,
 * and as one JSON document otherwise (see `readRecords`). Each call is counted once
 * across every request and every file: a request body repeats the conversation so
 * far, so the same call comes back in each later request. A call is the same call
 * when its id, tool name and arguments string are the same.
 *
 * @since 0.1.0
 */
import { createReadStream } from 'node:fs'
import type { Readable } from 'node:stream'
import type { PairCounts, PairStat, UnknownKeyWarning } from '../index.js'
import { emptyPairCounts, formatWarning, pairStats } from '../index.js'
import type { Catalogue } from './check.js'
import { catalogueOf, checkCall, toleratedOf, warningRecord } from './check.js'
import { hasOwn, isRecord, own } from '../internal/guards.js'
import type { Palette } from './color.js'
import { callIdOf } from '../internal/calls.js'
import { describeError } from '../internal/describe.js'
import { argsText, newCallSet } from './callset.js'
import type { LineSink } from './lines.js'
import { readLines } from './lines.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Where a record came from: `line` is its line in a JSON Lines input, `null` in a
 * whole JSON document (whose records have no line of their own).
 *
 * @since 0.1.0
 * @category model
 */
export interface Location {
  readonly file: string
  readonly line: number | null
}

/**
 * A warning, where it was found.
 *
 * @since 0.1.0
 * @category model
 */
export interface LocatedWarning extends UnknownKeyWarning, Location {}

/**
 * What one run read and found.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditSummary {
  readonly files: number
  /** Files that could not be read, or held no readable request body. */
  readonly unusableFiles: number
  readonly requests: number
  /** Records that could not be read (not JSON, or not a request body). */
  readonly badRecords: number
  /** Distinct calls. */
  readonly callsRead: number
  /** Calls seen again in a later request, not counted twice. */
  readonly repeatedCalls: number
  /** Calls to a tool declared with at least one property, with arguments that read as an object. */
  readonly callsAudited: number
  readonly warnings: number
  /** For each (tool, undeclared key) pair: how many distinct calls carried it, and the id of the first. */
  readonly undeclared: ReadonlyArray<PairStat>
}

/**
 * The replay's state over one run. It lives only as long as the run that created it.
 *
 * @since 0.1.0
 * @category model
 */
export interface Auditor {
  /** Audits one request body; returns the warnings it raised, or a problem in words. */
  readonly request: (body: unknown, where: Location) => ReadonlyArray<LocatedWarning> | string
  readonly summary: () => Omit<AuditSummary, 'files' | 'unusableFiles' | 'badRecords'>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

// A parsed JSON value read once: an object's own keys in order and the shape under
// each, an array's items, anything else the value itself. A session's requests repeat
// the same tool list, so each request compares its tool list with the last one's shape,
// and the last catalogue usually answers; that walk makes no key arrays (`for…in` reads the object's own keys in the order `Object.keys` gives them).
interface Shape {
  readonly value: unknown
  /** An object's own keys, in order; `undefined` for anything else. */
  readonly keys: ReadonlyArray<string> | undefined
  /** An object's values or an array's items; `undefined` for anything else. */
  readonly items: ReadonlyArray<Shape> | undefined
}

const shapeOf = (value: unknown): Shape => {
  if (typeof value !== 'object' || value === null) return { value, keys: undefined, items: undefined }
  const items: Array<Shape> = []
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) items.push(shapeOf(value[i]))
    return { value, keys: undefined, items }
  }
  const keys = Object.keys(value)
  for (const k of keys) items.push(shapeOf((value as Record<string, unknown>)[k]))
  return { value, keys, items }
}

/** Whether `a` is the same JSON (own keys, in order) as the value whose shape `s` is, that value unchanged since. */
const matches = (a: unknown, s: Shape): boolean => {
  if (a === s.value) return true
  const items = s.items
  if (items === undefined || typeof a !== 'object' || a === null) return false
  const keys = s.keys
  if (keys === undefined) {
    if (!Array.isArray(a) || a.length !== items.length) return false
    for (let i = 0; i < items.length; i++) if (!matches(a[i], items[i] as Shape)) return false
    return true
  }
  if (Array.isArray(a)) return false
  let i = 0
  for (const k in a) {
    // inherited keys, which `Object.keys` leaves out, come after the own ones
    if (!hasOwn(a, k)) continue
    if (i === keys.length || k !== keys[i] || !matches((a as Record<string, unknown>)[k], items[i] as Shape)) return false
    i++
  }
  return i === keys.length
}

const kindOf = (u: unknown): string =>
  u === null ? 'null' : Array.isArray(u) ? 'an array' : typeof u === 'object' ? 'an object' : `a ${typeof u}`

const NO_WARNINGS: ReadonlyArray<LocatedWarning> = Object.freeze([])

// The replay's state, as a class for the same reason as the call set's.
class Replay {
  private readonly tolerated: ReadonlySet<string>
  // the same counts as the combinator's: a pair is reported once it is counted
  private counts: PairCounts = emptyPairCounts
  private readonly counted = newCallSet()
  private requests = 0
  private callsRead = 0
  private repeatedCalls = 0
  private callsAudited = 0
  private warnings = 0
  // the last tool list's shape and catalogue; none when it could not be read into a
  // shape (too deep), and then each request builds its own
  private last: { readonly shape: Shape; readonly catalogue: Catalogue } | undefined = undefined
  // The calls of the request before, in the order walked: id, tool name and arguments
  // (when a string). A request body repeats the one before it and adds to it, so most
  // calls are known by comparing them with the call in the same place there: no
  // digest to make, no lookup. A place is written once its call is counted, so each
  // holds a call counted, whatever happens to the request that writes it.
  private readonly seenId: Array<string> = []
  private readonly seenTool: Array<string> = []
  private readonly seenArgs: Array<string | undefined> = []
  private seenCount = 0

  constructor(tolerate: ReadonlyArray<string>) {
    this.tolerated = toleratedOf(tolerate)
  }

  private catalogueFor(tools: unknown): Catalogue {
    const last = this.last
    if (last !== undefined && matches(tools, last.shape)) return last.catalogue
    const catalogue = catalogueOf(this.tolerated)(tools as ReadonlyArray<unknown>)
    try {
      this.last = { shape: shapeOf(tools), catalogue }
    } catch {
      this.last = undefined
    }
    return catalogue
  }

  request(body: unknown, where: Location): ReadonlyArray<LocatedWarning> | string {
    if (!isRecord(body)) return `expected a chat-completion request body (an object with "messages"), got ${kindOf(body)}`
    const messages = own(body, 'messages')
    if (!Array.isArray(messages)) {
      return `expected a chat-completion request body, but "messages" is ${messages === undefined ? 'missing' : kindOf(messages)}`
    }
    this.requests++
    // built only when the request holds a call not counted yet: most requests repeat
    // calls already seen
    let catalogue: Catalogue | undefined
    const tools = own(body, 'tools')
    const { seenId, seenTool, seenArgs } = this
    let out: Array<LocatedWarning> | undefined
    let n = 0
    for (const message of messages) {
      const calls = own(message, 'tool_calls')
      if (!Array.isArray(calls)) continue
      for (const call of calls) {
        const fn = own(call, 'function')
        const name = own(fn, 'name')
        const args = own(fn, 'arguments')
        const id = callIdOf(call)
        const tool = typeof name === 'string' ? name : ''
        const raw = typeof args === 'string' ? args : undefined
        const repeat =
          (n < this.seenCount && raw !== undefined && raw === seenArgs[n] && id === seenId[n] && tool === seenTool[n]) ||
          !this.counted.add(id, tool, argsText(args))
        seenId[n] = id
        seenTool[n] = tool
        seenArgs[n] = raw
        n++
        if (repeat) {
          this.repeatedCalls++
          continue
        }
        this.callsRead++
        if (typeof name !== 'string') continue
        catalogue ??= this.catalogueFor(tools)
        const [check, next] = checkCall(catalogue, name, args, id)(this.counts)
        this.counts = next
        if (check._tag === 'NotAudited') continue
        this.callsAudited++
        if (check.warning !== undefined) {
          this.warnings++
          ;(out ??= []).push({ ...check.warning, file: where.file, line: where.line })
        }
      }
    }
    this.seenCount = n
    // what a longer request before held is let go
    if (seenId.length > n) {
      seenId.length = n
      seenTool.length = n
      seenArgs.length = n
    }
    return out ?? NO_WARNINGS
  }

  summary(): Omit<AuditSummary, 'files' | 'unusableFiles' | 'badRecords'> {
    return {
      requests: this.requests,
      callsRead: this.callsRead,
      repeatedCalls: this.repeatedCalls,
      callsAudited: this.callsAudited,
      warnings: this.warnings,
      undeclared: pairStats(this.counts),
    }
  }
}

/**
 * A new replay state (creating state is an effect: each call gives a fresh one);
 * `tolerate` adds names never reported to `reason`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const newAuditor = (tolerate: ReadonlyArray<string> = []): Auditor => {
  const replay = new Replay(tolerate)
  return { request: (body, where) => replay.request(body, where), summary: () => replay.summary() }
}

// -------------------------------------------------------------------------------------
// reading
// -------------------------------------------------------------------------------------

/**
 * What a reader reports: a parsed record (a request body, or an array of them), or a
 * problem at a line (`null`: the input as a whole).
 *
 * @since 0.1.0
 * @category model
 */
export interface RecordSink {
  readonly record: (value: unknown, line: number | null) => void
  readonly problem: (line: number | null, message: string) => void
}

type Parsed = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }

const tryParse = (text: string): Parsed => {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (e) {
    return { ok: false, message: describeError(e) }
  }
}

const startsLikeRecord = (line: string): boolean => {
  const c = line.charCodeAt(0)
  return c === 0x7b /* { */ || c === 0x5b /* [ */
}

// JSON.parse's message names a character position; a line number is what a person
// can go to.
const withLine = (message: string, text: string): string => {
  const m = /position (\d+)/.exec(message)
  if (m === null) return message
  const pos = Number(m[1])
  let line = 1
  for (let i = text.indexOf('\n'); i !== -1 && i < pos; i = text.indexOf('\n', i + 1)) line++
  return `${message} (line ${line})`
}

/**
 * Reads records from a stream, line by line, holding no more than one line at a time
 * once it knows the input is JSON Lines.
 *
 * The decision: when the first non-blank line parses on its own, the input is JSON
 * Lines. Otherwise lines are held until either two more lines that begin with `{` or
 * `[` parse on their own (then it is JSON Lines with a bad first record, and the held
 * lines are replayed as such), or the input ends and the held text is parsed as one
 * JSON document. A document that does not parse is replayed as JSON Lines when any
 * of its lines parses on its own, and is one problem otherwise.
 *
 * @since 0.1.0
 * @category reading
 */
export const readRecords = (input: Readable, sink: RecordSink): Promise<void> =>
  new Promise<void>((resolve, reject) => readLines(input, new RecordReader(sink, resolve, reject)))

// The line sink of `readRecords`, a class for the reason `readLines` is one.
class RecordReader implements LineSink {
  private mode: 'start' | 'lines' | 'held' = 'start'
  private lineNo = 0
  private held: Array<string> = []
  private heldFrom = 1
  private standalone = 0

  constructor(
    private readonly sink: RecordSink,
    private readonly resolve: () => void,
    readonly error: (e: unknown) => void,
  ) {}

  // parsed first: a blank line never parses, and most lines are not blank
  private asLine(text: string, n: number): void {
    let value: unknown
    try {
      value = JSON.parse(text) as unknown
    } catch (e) {
      if (text.trim() !== '') this.sink.problem(n, `not valid JSON (${describeError(e)})`)
      return
    }
    this.sink.record(value, n)
  }

  private replayHeld(): void {
    const lines = this.held
    this.held = []
    for (let i = 0; i < lines.length; i++) this.asLine(lines[i] as string, this.heldFrom + i)
  }

  line(raw: string): void {
    const n = ++this.lineNo
    const line = n === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw
    if (this.mode === 'lines') return this.asLine(line, n)
    if (this.mode === 'held') {
      this.held.push(line)
      if (startsLikeRecord(line) && tryParse(line).ok && ++this.standalone >= 2) {
        this.mode = 'lines'
        this.replayHeld()
      }
      return
    }
    if (line.trim() === '') return
    const p = tryParse(line)
    if (p.ok) {
      this.mode = 'lines'
      this.sink.record(p.value, n)
    } else {
      this.mode = 'held'
      this.heldFrom = n
      this.held.push(line)
    }
  }

  end(): void {
    if (this.mode === 'held') {
      const held = this.held
      const text = held.join('\n')
      const p = tryParse(text)
      if (p.ok) {
        this.held = []
        this.sink.record(p.value, null)
      } else if (held.some((l) => startsLikeRecord(l) && tryParse(l).ok)) {
        this.replayHeld()
      } else {
        this.held = []
        this.sink.problem(null, `neither one JSON document nor JSON Lines: ${withLine(p.message, text)}`)
      }
    }
    this.resolve()
  }
}

// -------------------------------------------------------------------------------------
// command
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface AuditOptions {
  readonly json: boolean
  readonly failOnWarn: boolean
  /** Argument names never reported, besides `reason`. */
  readonly tolerate: ReadonlyArray<string>
}

/**
 * The effects the command needs, passed in.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditIO {
  readonly stdin: Readable
  readonly out: (line: string) => void
  readonly err: (line: string) => void
  /** Colours for `out` and `err`. */
  readonly outColor: Palette
  readonly errColor: Palette
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

// A file is read 256 KiB at a time, not the stream default of 64: each read is a round
// trip to the thread pool, and lines are cut from the bytes, so a bigger chunk costs
// nothing more per line (it bounds the memory held besides one line).
const READ_CHUNK = 1 << 18

const openInput = (file: string, io: AuditIO): Readable => (file === '-' ? io.stdin : createReadStream(file, { highWaterMark: READ_CHUNK }))

const describeOpenError = (e: unknown): string => {
  const code = typeof e === 'object' && e !== null ? (e as { readonly code?: unknown }).code : undefined
  switch (code) {
    case 'ENOENT':
      return 'no such file'
    case 'EACCES':
    case 'EPERM':
      return 'permission denied'
    case 'EISDIR':
      return 'is a directory'
    default:
      return describeError(e)
  }
}

/**
 * Runs `toolstack audit` over `files` (`-` is stdin) and returns the exit status: 2
 * when a file could not be read or held no readable request body, else 1 when
 * `failOnWarn` and a warning was raised, else 0.
 *
 * @since 0.1.0
 * @category command
 */
export const runAudit = async (files: ReadonlyArray<string>, options: AuditOptions, io: AuditIO): Promise<number> => {
  const run = new AuditRun(options, io)
  let unusableFiles = 0
  const ec = io.errColor

  for (const file of files) {
    const label = file === '-' ? '<stdin>' : file
    const audit = new FileAudit(run, label)
    try {
      await readRecords(openInput(file, io), audit)
    } catch (e) {
      unusableFiles++
      io.err(`${ec.red('toolstack audit:')} ${label}: cannot read: ${describeOpenError(e)}`)
      continue
    }
    if (audit.accepted === 0) {
      unusableFiles++
      io.err(`${ec.red('toolstack audit:')} ${label}: no readable request body in it`)
    }
  }

  const summary: AuditSummary = { files: files.length, unusableFiles, badRecords: run.badRecords, ...run.replay.summary() }
  if (options.json) io.out(JSON.stringify({ type: 'summary', ...summary }))
  else for (const line of drawSummary(summary, io.outColor)) io.out(line)

  if (unusableFiles > 0) return 2
  return options.failOnWarn && summary.warnings > 0 ? 1 : 0
}

// What a run shares across its files. This and FileAudit are classes for the reason
// `readLines` is one.
class AuditRun {
  readonly replay: Replay
  badRecords = 0

  constructor(
    private readonly options: AuditOptions,
    readonly io: AuditIO,
  ) {
    this.replay = new Replay(options.tolerate)
  }

  say(w: LocatedWarning): void {
    const { io } = this
    if (this.options.json) {
      io.out(warningRecord(w, { file: w.file, line: w.line }))
    } else {
      const at = w.line === null ? w.file : `${w.file}:${w.line}`
      io.out(`${io.outColor.dim(at + ':')} ${io.outColor.yellow(formatWarning(w))}`)
    }
  }
}

// The records of one file.
class FileAudit implements RecordSink {
  accepted = 0

  constructor(
    private readonly run: AuditRun,
    private readonly label: string,
  ) {}

  record(value: unknown, line: number | null): void {
    const where: Location = { file: this.label, line }
    if (Array.isArray(value)) value.forEach((body, i) => this.one(body, where, i + 1))
    else this.one(value, where, undefined)
  }

  problem(line: number | null, message: string): void {
    const { run, label } = this
    run.badRecords++
    run.io.err(`${run.io.errColor.red('toolstack audit:')} ${line === null ? label : `${label}:${line}`}: ${message}`)
  }

  private one(body: unknown, where: Location, element: number | undefined): void {
    let result: ReadonlyArray<LocatedWarning> | string
    try {
      result = this.run.replay.request(body, where)
    } catch (e) {
      result = `could not be audited (${describeError(e)})`
    }
    if (typeof result === 'string') {
      this.problem(where.line, element === undefined ? result : `element ${element}: ${result}`)
      return
    }
    this.accepted++
    for (const w of result) this.run.say(w)
  }
}

/**
 * The summary for a person: one line of figures, then one line per tool with its
 * undeclared keys and how many calls carried each.
 *
 * @since 0.1.0
 * @category command
 */
export const drawSummary = (s: AuditSummary, c: Palette): ReadonlyArray<string> => {
  const figures = [
    plural(s.files, 'file'),
    plural(s.requests, 'request'),
    `${plural(s.callsRead, 'call')} read` + (s.repeatedCalls > 0 ? ` (${plural(s.repeatedCalls, 'repeat')} not counted again)` : ''),
    `${s.callsAudited} audited`,
    plural(s.warnings, 'warning'),
  ]
  if (s.badRecords > 0) figures.push(plural(s.badRecords, 'bad record'))
  if (s.unusableFiles > 0) figures.push(plural(s.unusableFiles, 'unusable file'))
  const lines = [`${c.bold('toolstack audit:')} ${figures.join(', ')}`]
  const byTool = new Map<string, Array<PairStat>>()
  for (const k of s.undeclared) {
    const list = byTool.get(k.tool)
    if (list === undefined) byTool.set(k.tool, [k])
    else list.push(k)
  }
  for (const [tool, keys] of byTool) {
    lines.push(`  ${c.cyan(tool)}: ${keys.map((k) => `${JSON.stringify(k.key)} in ${plural(k.calls, 'call')}`).join(', ')}`)
  }
  return lines
}
