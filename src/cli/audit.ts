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
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import type { PairCounts, PairStat, UnknownKeyWarning } from '../UnknownKeys.js'
import { emptyPairCounts, formatWarning, pairStats } from '../UnknownKeys.js'
import type { Catalogue } from './check.js'
import { catalogueOf, checkCall, toleratedOf, warningRecord } from './check.js'
import { isRecord, own } from '../internal/guards.js'
import type { Palette } from './color.js'
import { callIdOf, describeError } from '../internal/results.js'
import { fmix32 } from '../internal/StringMap.js'

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

// A call is the same call when its id, tool name and arguments text are the same.
// Calls are filed by id and tool (a short key, cheap to hash), each with the arguments
// text it carried; arguments longer than ARGS_KEPT are kept as their length and a
// 64-bit digest, so the memory of counted calls stays small however large they are.
// A request body repeats every earlier call, so this runs once per call per request.
const ARGS_KEPT = 64

const argsText = (args: unknown): string => {
  let text: string
  if (typeof args === 'string') text = args
  else {
    try {
      text = JSON.stringify(args) ?? ''
    } catch {
      text = ''
    }
  }
  return text.length <= ARGS_KEPT ? text : `#${text.length}:${digest64(text)}`
}

/** Files a call; true when it was not filed before. */
const fileCall = (filed: Map<string, string | ReadonlyArray<string>>, id: string, tool: string, args: unknown): boolean => {
  const key = `${id}\u0000${tool}`
  const text = argsText(args)
  const had = filed.get(key)
  if (had === undefined) {
    filed.set(key, text)
    return true
  }
  if (typeof had === 'string') {
    if (had === text) return false
    filed.set(key, [had, text])
    return true
  }
  if (had.includes(text)) return false
  filed.set(key, [...had, text])
  return true
}

// Two independent 32-bit FNV-1a passes (different offset bases and primes), each
// finalised: 64 bits, with the length beside them, for telling calls apart. A request
// body repeats every earlier call, so this runs once per call per request; a crypto
// digest per call cost more than parsing the request.
const digest64 = (s: string): string => {
  let a = 0x811c9dc5 | 0
  let b = 0x050c5d1f | 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x01000197)
  }
  return `${(fmix32(a) >>> 0).toString(36)}.${(fmix32(b) >>> 0).toString(36)}`
}

// Whether two parsed JSON values are the same JSON (own keys, in order). A session's
// requests repeat the same tool list, so the catalogue of the last one usually
// answers the next, for a walk that allocates nothing.
const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as string
    if (k !== kb[i] || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false
  }
  return true
}

const kindOf = (u: unknown): string =>
  u === null ? 'null' : Array.isArray(u) ? 'an array' : typeof u === 'object' ? 'an object' : `a ${typeof u}`

/**
 * A new replay state (creating state is an effect: each call gives a fresh one);
 * `tolerate` adds names never reported to `reason`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const newAuditor = (tolerate: ReadonlyArray<string> = []): Auditor => {
  const tolerated = toleratedOf(tolerate)
  // the same counts as the combinator's: a pair is reported once it is counted
  let counts: PairCounts = emptyPairCounts
  const filed = new Map<string, string | ReadonlyArray<string>>()
  let requests = 0
  let callsRead = 0
  let repeatedCalls = 0
  let callsAudited = 0
  let warnings = 0
  let lastTools: unknown = undefined
  let lastCatalogue: Catalogue | undefined

  const catalogueFor = (tools: unknown): Catalogue => {
    if (lastCatalogue !== undefined && sameJson(tools, lastTools)) return lastCatalogue
    lastTools = tools
    return (lastCatalogue = catalogueOf(tolerated)(tools))
  }

  const request = (body: unknown, where: Location): ReadonlyArray<LocatedWarning> | string => {
    if (!isRecord(body)) return `expected a chat-completion request body (an object with "messages"), got ${kindOf(body)}`
    const messages = own(body, 'messages')
    if (!Array.isArray(messages)) {
      return `expected a chat-completion request body, but "messages" is ${messages === undefined ? 'missing' : kindOf(messages)}`
    }
    requests++
    // built only when the request holds a call not counted yet: most requests repeat
    // calls already seen
    let catalogue: Catalogue | undefined
    const tools = own(body, 'tools')
    let out: Array<LocatedWarning> | undefined
    for (const message of messages) {
      const calls = own(message, 'tool_calls')
      if (!Array.isArray(calls)) continue
      for (const call of calls) {
        const fn = own(call, 'function')
        const name = own(fn, 'name')
        const args = own(fn, 'arguments')
        const id = callIdOf(call)
        const tool = typeof name === 'string' ? name : ''
        if (!fileCall(filed, id, tool, args)) {
          repeatedCalls++
          continue
        }
        callsRead++
        if (typeof name !== 'string') continue
        catalogue ??= catalogueFor(tools)
        const [check, next] = checkCall(catalogue, name, args, id)(counts)
        counts = next
        if (check._tag === 'NotAudited') continue
        callsAudited++
        if (check.warning !== undefined) {
          warnings++
          ;(out ??= []).push({ ...check.warning, file: where.file, line: where.line })
        }
      }
    }
    return out ?? []
  }

  const summary = (): Omit<AuditSummary, 'files' | 'unusableFiles' | 'badRecords'> => ({
    requests,
    callsRead,
    repeatedCalls,
    callsAudited,
    warnings,
    undeclared: pairStats(counts),
  })

  return { request, summary }
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
  new Promise<void>((resolve, reject) => {
    let mode: 'start' | 'lines' | 'held' = 'start'
    let lineNo = 0
    let held: Array<string> = []
    let heldFrom = 1
    let standalone = 0

    const asLine = (text: string, n: number): void => {
      if (text.trim() === '') return
      const p = tryParse(text)
      if (p.ok) sink.record(p.value, n)
      else sink.problem(n, `not valid JSON (${p.message})`)
    }

    const replayHeld = (): void => {
      const lines = held
      held = []
      for (let i = 0; i < lines.length; i++) asLine(lines[i] as string, heldFrom + i)
    }

    const rl = createInterface({ input, crlfDelay: Infinity })
    // readline re-emits its input's error; one handler settles the read
    let failed = false
    rl.once('error', (e) => {
      failed = true
      reject(e)
      rl.close()
    })
    rl.on('line', (raw) => {
      lineNo++
      const line = lineNo === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw
      if (mode === 'lines') return asLine(line, lineNo)
      if (mode === 'held') {
        held.push(line)
        if (startsLikeRecord(line) && tryParse(line).ok && ++standalone >= 2) {
          mode = 'lines'
          replayHeld()
        }
        return
      }
      if (line.trim() === '') return
      const p = tryParse(line)
      if (p.ok) {
        mode = 'lines'
        sink.record(p.value, lineNo)
      } else {
        mode = 'held'
        heldFrom = lineNo
        held.push(line)
      }
    })
    rl.once('close', () => {
      if (failed) return
      if (mode === 'held') {
        const text = held.join('\n')
        const p = tryParse(text)
        if (p.ok) {
          held = []
          sink.record(p.value, null)
        } else if (held.some((l) => startsLikeRecord(l) && tryParse(l).ok)) {
          replayHeld()
        } else {
          held = []
          sink.problem(null, `neither one JSON document nor JSON Lines: ${withLine(p.message, text)}`)
        }
      }
      resolve()
    })
  })

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

const openInput = (file: string, io: AuditIO): Readable => (file === '-' ? io.stdin : createReadStream(file))

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
  const auditor = newAuditor(options.tolerate)
  let unusableFiles = 0
  let badRecords = 0
  const { outColor: oc, errColor: ec } = io

  const say = (w: LocatedWarning): void => {
    if (options.json) {
      io.out(warningRecord(w, { file: w.file, line: w.line }))
    } else {
      const at = w.line === null ? w.file : `${w.file}:${w.line}`
      io.out(`${oc.dim(at + ':')} ${oc.yellow(formatWarning(w))}`)
    }
  }

  for (const file of files) {
    const label = file === '-' ? '<stdin>' : file
    let accepted = 0
    const problem = (line: number | null, message: string): void => {
      badRecords++
      io.err(`${ec.red('toolstack audit:')} ${line === null ? label : `${label}:${line}`}: ${message}`)
    }
    const one = (body: unknown, where: Location, element: number | undefined): void => {
      let result: ReadonlyArray<LocatedWarning> | string
      try {
        result = auditor.request(body, where)
      } catch (e) {
        result = `could not be audited (${describeError(e)})`
      }
      if (typeof result === 'string') {
        problem(where.line, element === undefined ? result : `element ${element}: ${result}`)
        return
      }
      accepted++
      for (const w of result) say(w)
    }
    try {
      await readRecords(openInput(file, io), {
        record: (value, line) => {
          const where: Location = { file: label, line }
          if (Array.isArray(value)) value.forEach((body, i) => one(body, where, i + 1))
          else one(value, where, undefined)
        },
        problem,
      })
    } catch (e) {
      unusableFiles++
      io.err(`${ec.red('toolstack audit:')} ${label}: cannot read: ${describeOpenError(e)}`)
      continue
    }
    if (accepted === 0) {
      unusableFiles++
      io.err(`${ec.red('toolstack audit:')} ${label}: no readable request body in it`)
    }
  }

  const summary: AuditSummary = { files: files.length, unusableFiles, badRecords, ...auditor.summary() }
  if (options.json) io.out(JSON.stringify({ type: 'summary', ...summary }))
  else for (const line of drawSummary(summary, oc)) io.out(line)

  if (unusableFiles > 0) return 2
  return options.failOnWarn && summary.warnings > 0 ? 1 : 0
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
