/**
 * `toolstack audit`: replays the audit over recorded request bodies (OpenAI chat
 * completions and Responses, Anthropic Messages: see `formats.ts`).
 *
 * The input is read as JSON Lines when its first non-blank line parses on its own,
 * and as one JSON document otherwise (see `readRecords`). Each call is counted once
 * across every request and every file: a request body repeats the conversation so
 * far, so the same call comes back in each later request. A call is the same call
 * when its id, tool name and arguments string are the same.
 *
 * @since 0.1.0
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import type { Readable } from 'node:stream'
import type { Catalogue } from '../extend.js'
import type { SeenSet, PairStat, UnknownKeyWarning } from './check.js'
import {
  catalogueTolerating,
  checkCall,
  emptySeenSet,
  firstOf,
  formatWarning,
  MAX_KEYS_SHOWN,
  MAX_RECORD_CHARS,
  pairStats,
  warningFields,
} from './check.js'
import type { Palette } from './color.js'
import type { Format, UnknownShape } from './formats.js'
import { FORMAT_NAMES, readRequest } from './formats.js'
import type { RecordSink } from './records.js'
import { readRecords } from './records.js'
import { cut, describeError, escapeControls, jsonLine, plural, shown } from './text.js'

/** Where a record came from: `line` is `null` in a whole JSON document. @since 0.1.0 */
export interface Location {
  readonly file: string
  readonly line: number | null
}

/** @since 0.1.0 */
export interface LocatedWarning extends UnknownKeyWarning, Location {}

/** What one run read and found. @since 0.1.0 */
export interface AuditSummary {
  readonly files: number
  /** Files that could not be read, or held no readable request body. */
  readonly unusableFiles: number
  readonly requests: number
  /** The requests of each format read. */
  readonly formats: Readonly<Record<Format, number>>
  /** Records that could not be read (not JSON, too long, or not a request body). */
  readonly badRecords: number
  /** The records of an unknown shape, by what they look like: the first {@link MAX_SHAPES} shapes seen. */
  readonly unknownShapes: ReadonlyArray<{ readonly shape: string; readonly records: number }>
  /** The records of an unknown shape past those, counted but not named; only when there were some. */
  readonly otherShapeRecords?: number
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

/** The replay's state over one run. @since 0.1.0 */
export interface Auditor {
  /** Audits one request body; returns its warnings, or an `UnknownShape` when it is not a request body. */
  readonly request: (body: unknown, where: Location) => ReadonlyArray<LocatedWarning> | UnknownShape
  readonly summary: () => Omit<AuditSummary, 'files' | 'unusableFiles' | 'badRecords' | 'unknownShapes'>
}

// An id, tool name or arguments text longer than this is remembered by its length and a SHA-256 digest, so
// the memory of counted calls stays small however large a call is (a 10 MB id costs what a short one does).
export const KEPT_CHARS = 64

// a text itself when short, else its length and SHA-256 digest: what is remembered of it stays small
const keptText = (text: string, most: number): string =>
  text.length <= most ? text : `#${text.length}:${createHash('sha256').update(text).digest('base64')}`

const argsText = (args: unknown): string => {
  let text: string
  try {
    text = typeof args === 'string' ? args : (JSON.stringify(args) ?? '')
  } catch {
    text = ''
  }
  return keptText(text, KEPT_CHARS)
}

/**
 * What is remembered of a call to tell it from the others: its id, tool name (`''` when it is no string) and
 * arguments text, each itself when short, else its length and digest, so each is at most a few dozen characters.
 *
 * @since 0.1.0
 */
export const rememberedCall = (id: string, name: unknown, args: unknown): readonly [string, string, string] => [
  keptText(id, KEPT_CHARS),
  typeof name === 'string' ? keptText(name, KEPT_CHARS) : '',
  argsText(args),
]

// A log repeats the same tools in every request: each distinct list of a tool's declarations is compiled once
// (compiling was a sixth of the command's time: the audit's throughput figure of docs/performance.md), by its
// JSON text (a request body is JSON, so the text says all of it), at most CATALOGUES lists kept, the oldest
// dropped first. Only lists of at most CACHED_CHARS are kept (the largest real tool here, Notion's, is 5.5 KB), so
// what the cache holds stays bounded whatever a log declares; a larger one is compiled for each call, as before.
export const CATALOGUES = 256
export const CACHED_CHARS = 64 * 1024
const DECLARATIONS_KEPT = 1024

/** `compile`, made once per distinct list of declarations (at most {@link CATALOGUES} kept). @since 0.1.0 */
export const compiledOnce = (
  compile: (declarations: ReadonlyArray<unknown>) => Catalogue,
): ((declarations: ReadonlyArray<unknown>) => Catalogue) => {
  const kept = new Map<string, Catalogue>()
  return (declarations) => {
    let text: string
    try {
      text = JSON.stringify(declarations)
    } catch {
      // not JSON after all (a body handed in by a program, with a cycle): compiled, not kept
      return compile(declarations)
    }
    if (text.length > CACHED_CHARS) return compile(declarations)
    const key = keptText(text, DECLARATIONS_KEPT)
    const had = kept.get(key)
    if (had !== undefined) return had
    const made = compile(declarations)
    if (kept.size >= CATALOGUES) kept.delete(kept.keys().next().value as string)
    kept.set(key, made)
    return made
  }
}

const NO_WARNINGS: ReadonlyArray<LocatedWarning> = Object.freeze([])

const READS = Object.values(FORMAT_NAMES).join(', ')

/** Returns a fresh replay state; `tolerate` adds names to the always-tolerated `reason`. @since 0.1.0 */
export const newAuditor = (tolerate: ReadonlyArray<string> = []): Auditor => {
  const catalogueFor = compiledOnce(catalogueTolerating(tolerate))
  // id → [tool, args, tool, args, …] of the calls counted with that id
  const counted = new Map<string, Array<string>>()
  const isNew = (id: string, tool: string, args: string): boolean => {
    const same = counted.get(id)
    if (same === undefined) return (void counted.set(id, [tool, args]), true)
    for (let i = 0; i < same.length; i += 2) if (same[i] === tool && same[i + 1] === args) return false
    same.push(tool, args)
    return true
  }
  // the combinator's seen-set: each (tool, key) pair is reported once
  let seen: SeenSet = emptySeenSet
  let requests = 0
  let callsRead = 0
  let repeatedCalls = 0
  let callsAudited = 0
  let warnings = 0
  const formats: Record<Format, number> = { chat: 0, responses: 0, anthropic: 0 }

  const request = (body: unknown, where: Location): ReadonlyArray<LocatedWarning> | UnknownShape => {
    const read = readRequest(body)
    if ('_tag' in read) return read
    requests++
    formats[read.format]++
    let out: Array<LocatedWarning> | undefined
    read.calls((id, name, args) => {
      if (!isNew(...rememberedCall(id, name, args))) return void repeatedCalls++
      callsRead++
      if (typeof name !== 'string') return
      // a catalogue of the called tool only: a request lists many tools but carries few new calls
      const [check, next] = checkCall(catalogueFor(read.declarationsOf(name)), name, args, id)(seen)
      seen = next
      if (check._tag === 'NotAudited') return
      callsAudited++
      if (check.warning !== undefined) {
        warnings++
        ;(out ??= []).push({ ...check.warning, file: where.file, line: where.line })
      }
    })
    return out ?? NO_WARNINGS
  }

  return {
    request,
    summary: () => ({
      requests,
      formats: { ...formats },
      callsRead,
      repeatedCalls,
      callsAudited,
      warnings,
      undeclared: pairStats(seen),
    }),
  }
}

/** @since 0.1.0 */
export interface AuditOptions {
  readonly json: boolean
  readonly failOnWarn: boolean
  /** Argument names never reported, besides `reason`. */
  readonly tolerate: ReadonlyArray<string>
  /** The longest line (or whole document) read; a longer one is a bad record. */
  readonly maxLineBytes?: number
}

/** The effects the command needs, passed in. @since 0.1.0 */
export interface AuditIO {
  readonly stdin: Readable
  readonly out: (line: string) => void
  readonly err: (line: string) => void
  /** Colours for `out` and `err`. */
  readonly outColor: Palette
  readonly errColor: Palette
}

// 256 KiB a read, not the default 64: each read is a round trip to the thread pool
const READ_CHUNK = 1 << 18

const openInput = (file: string, io: AuditIO): Readable =>
  file === '-' ? io.stdin : createReadStream(file, { highWaterMark: READ_CHUNK })

const OPEN_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory',
}
const describeOpenError = (e: unknown): string =>
  OPEN_ERRORS[String((e as { readonly code?: unknown } | null)?.code)] ?? describeError(e)

/**
 * Runs `toolstack audit` over `files` (`-` is stdin) and returns the exit status: 2
 * when stdin is named more than once, a file could not be read, a record was unusable, or
 * `failOnWarn` found nothing to audit; else 1 when `failOnWarn` and a warning was raised; else 0.
 * Until it returns, the process's exit code is 2 (see `failingUntilDone`).
 *
 * @since 0.1.0
 */
export const runAudit = (files: ReadonlyArray<string>, options: AuditOptions, io: AuditIO): Promise<number> =>
  failingUntilDone(() => {
    const twice = stdinNamedTwice(files)
    if (twice === undefined) return audit(files, options, io)
    io.err(`${io.errColor.red('toolstack audit:')} ${twice}`)
    return Promise.resolve(2)
  })

// Node exits with `process.exitCode` when its event loop runs dry while the run is still pending (an input that
// neither ends nor fails, as a second "-" once was): until the run completes, that code is 2, so such an end can
// never look like a clean run. Restored afterwards, for a program that runs the audit in-process.
const failingUntilDone = async <A>(run: () => Promise<A>): Promise<A> => {
  const before = process.exitCode
  process.exitCode = 2
  try {
    return await run()
  } finally {
    process.exitCode = before
  }
}

// stdin is one stream, read to its end once: a second "-" could only read nothing, so it is a usage error
const stdinNamedTwice = (files: ReadonlyArray<string>): string | undefined => {
  const times = files.filter((f) => f === '-').length
  return times <= 1 ? undefined : `"-" (stdin) is named ${times} times: stdin can be read only once (exit status 2)`
}

/** How many shapes of unknown records the summary names; the records of any other shape are counted. @since 0.1.0 */
export const MAX_SHAPES = 100

const audit = async (files: ReadonlyArray<string>, options: AuditOptions, io: AuditIO): Promise<number> => {
  const auditor = newAuditor(options.tolerate)
  const { outColor: oc, errColor: ec } = io
  let unusableFiles = 0
  let badRecords = 0
  // each distinct shape costs a key here, so only the first MAX_SHAPES are kept, however many a log holds
  const unknownShapes = new Map<string, number>()
  let otherShapeRecords = 0
  const countShape = (shape: string): void => {
    const records = unknownShapes.get(shape)
    if (records !== undefined || unknownShapes.size < MAX_SHAPES) unknownShapes.set(shape, (records ?? 0) + 1)
    else otherShapeRecords++
  }

  const report = (w: LocatedWarning): void => {
    if (options.json) io.out(jsonLine({ ...warningFields(w), file: w.file, line: w.line }))
    else
      io.out(
        `${oc.dim(escapeControls(w.line === null ? w.file : `${w.file}:${w.line}`) + ':')} ${oc.yellow(escapeControls(formatWarning(w)))}`,
      )
  }

  for (const file of files) {
    const label = file === '-' ? '<stdin>' : file
    let accepted = 0
    const problem = (line: number | null, message: string): void => {
      badRecords++
      io.err(
        `${ec.red('toolstack audit:')} ${escapeControls(`${line === null ? label : `${label}:${line}`}: ${message}`)}`,
      )
    }
    const one = (body: unknown, where: Location, element: number | undefined): void => {
      const at = (message: string): void =>
        problem(where.line, element === undefined ? message : `element ${element}: ${message}`)
      let result: ReadonlyArray<LocatedWarning> | UnknownShape
      try {
        result = auditor.request(body, where)
      } catch (e) {
        return at(`could not be audited (${describeError(e)})`)
      }
      if ('_tag' in result) {
        countShape(result.shape)
        return at(`not a request body this command reads (${READS}): ${result.shape}`)
      }
      accepted++
      for (const w of result) report(w)
    }
    const sink: RecordSink = {
      record: (value, line) => {
        const where: Location = { file: label, line }
        if (Array.isArray(value)) value.forEach((body, i) => one(body, where, i + 1))
        else one(value, where, undefined)
      },
      problem,
    }
    try {
      await readRecords(openInput(file, io), sink, options.maxLineBytes)
    } catch (e) {
      unusableFiles++
      io.err(`${ec.red('toolstack audit:')} ${escapeControls(`${label}: cannot read: ${describeOpenError(e)}`)}`)
      continue
    }
    if (accepted === 0) {
      unusableFiles++
      io.err(`${ec.red('toolstack audit:')} ${escapeControls(label)}: no readable request body in it`)
    }
  }

  const shapes = [...unknownShapes]
    .map(([shape, records]) => ({ shape, records }))
    .sort((a, b) => b.records - a.records)
  const summary: AuditSummary = {
    files: files.length,
    unusableFiles,
    badRecords,
    unknownShapes: shapes,
    ...(otherShapeRecords === 0 ? {} : { otherShapeRecords }),
    ...auditor.summary(),
  }
  if (options.json) io.out(jsonLine(summaryRecord(summary)))
  else for (const line of drawSummary(summary, oc)) io.out(line)

  // a run that audited nothing must not look like a clean one
  const nothing = nothingAudited(summary)
  if (nothing !== undefined)
    io.err(
      `${ec.red('toolstack audit:')} ${nothing}${options.failOnWarn ? ' (--fail-on-warn: exit status 2, since nothing was audited)' : ''}`,
    )
  // 2 takes precedence over 1: warnings in the readable input tell nothing about the unreadable part
  if (unusableFiles > 0 || badRecords > 0 || (options.failOnWarn && nothing !== undefined)) return 2
  return options.failOnWarn && summary.warnings > 0 ? 1 : 0
}

const nothingAudited = (s: AuditSummary): string | undefined => {
  if (s.requests === 0 || s.callsAudited > 0) return undefined
  if (s.callsRead === 0) {
    return (
      `${plural(s.requests, 'request')} read, but no tool call in any: nothing was audited. ` +
      "Calls are read from OpenAI chat completions' tool_calls, OpenAI Responses' function_call items " +
      "and Anthropic Messages' tool_use blocks (not from legacy function_call messages)."
    )
  }
  return (
    `${plural(s.callsRead, 'call')} read, but none could be audited: a call is audited when its request ` +
    'declares its tool with at least one property, and its arguments are a JSON object.'
  )
}

/** A tool's undeclared keys as the summary shows them: the first {@link MAX_KEYS_SHOWN}, and how many. @since 0.1.0 */
export interface ToolKeys {
  readonly tool: string
  readonly listed: ReadonlyArray<PairStat>
  /** How many undeclared keys the tool has, those `listed` among them. */
  readonly keys: number
}

/**
 * The summary's pairs by tool, in their order, each tool's list cut as a warning's lists are: the summary of a
 * tool that drew 100,000 distinct keys is one short line (and a short record), which still says how many.
 *
 * @since 0.1.0
 */
export const undeclaredByTool = (undeclared: ReadonlyArray<PairStat>): ReadonlyArray<ToolKeys> => {
  const byTool = new Map<string, Array<PairStat>>()
  for (const k of undeclared) {
    const list = byTool.get(k.tool)
    if (list === undefined) byTool.set(k.tool, [k])
    else list.push(k)
  }
  return [...byTool].map(([tool, keys]) => ({ tool, listed: firstOf(keys, MAX_KEYS_SHOWN).shown, keys: keys.length }))
}

/**
 * The summary as a `--json` record: its lists bounded as the text summary bounds them. `undeclared` holds the
 * first {@link MAX_KEYS_SHOWN} pairs of each tool, and `undeclaredKeyCounts` (only when a list was cut) how many
 * each cut tool has in all; a tool name is cut as a warning record cuts it.
 *
 * @since 0.1.0
 */
export const summaryRecord = (s: AuditSummary): Readonly<Record<string, unknown>> => {
  const tools = undeclaredByTool(s.undeclared)
  const cutTools = tools.filter((t) => t.keys > t.listed.length)
  return {
    type: 'summary',
    ...s,
    undeclared: tools.flatMap((t) => t.listed.map((k) => ({ ...k, tool: recordText(k.tool) }))),
    ...(cutTools.length === 0
      ? {}
      : { undeclaredKeyCounts: cutTools.map((t) => ({ tool: recordText(t.tool), keys: t.keys })) }),
  }
}

const recordText = (s: string): string => cut(s, MAX_RECORD_CHARS)

/**
 * The summary for a person: one line of totals, then one line per shape of unknown records, then one line per
 * tool naming its first {@link MAX_KEYS_SHOWN} undeclared keys (then how many more) and how many calls carried
 * each. Every name is escaped, and cut as a warning line cuts it.
 *
 * @since 0.1.0
 */
export const drawSummary = (s: AuditSummary, c: Palette): ReadonlyArray<string> => {
  const formats = (Object.keys(s.formats) as Array<Format>).filter((f) => s.formats[f] > 0)
  const kinds =
    formats.length === 1
      ? FORMAT_NAMES[formats[0] as Format]
      : formats.map((f) => `${s.formats[f]} ${FORMAT_NAMES[f]}`).join(', ')
  const figures = [
    plural(s.files, 'file'),
    plural(s.requests, 'request') + (formats.length === 0 ? '' : ` (${kinds})`),
    `${plural(s.callsRead, 'call')} read` +
      (s.repeatedCalls > 0 ? ` (${plural(s.repeatedCalls, 'repeat')} not counted again)` : ''),
    `${s.callsAudited} audited`,
    plural(s.warnings, 'warning'),
  ]
  if (s.badRecords > 0) figures.push(plural(s.badRecords, 'bad record'))
  if (s.unusableFiles > 0) figures.push(plural(s.unusableFiles, 'unusable file'))
  const lines = [`${c.bold('toolstack audit:')} ${figures.join(', ')}`]
  for (const { shape, records } of s.unknownShapes)
    lines.push(`  ${plural(records, 'record')} of an unknown shape: ${escapeControls(shape)}`)
  if (s.otherShapeRecords !== undefined)
    lines.push(`  ${plural(s.otherShapeRecords, 'record')} of other unknown shapes (the first ${MAX_SHAPES} are named)`)
  for (const { tool, listed, keys } of undeclaredByTool(s.undeclared)) {
    const named = listed.map((k) => `${JSON.stringify(k.key)} in ${plural(k.calls, 'call')}`).join(', ')
    const more = keys > listed.length ? ` and ${keys - listed.length} more` : ''
    lines.push(`  ${c.cyan(shown(tool))}: ${escapeControls(named)}${more}`)
  }
  return lines
}
