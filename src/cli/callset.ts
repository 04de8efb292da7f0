/**
 * The calls `toolstack audit` has counted: a request body repeats the conversation so
 * far, so each call is filed once and recognised when it comes back.
 *
 * @since 0.1.0
 */
import { fmix32 } from '../internal/StringMap.js'

// A call is the same call when its id, tool name and arguments text are the same;
// arguments longer than ARGS_KEPT are kept as their length and a 64-bit digest, so the
// memory of counted calls stays small however large they are.
const ARGS_KEPT = 64

/**
 * A call's arguments as the set keeps them: the text itself when short, else its
 * length and a 64-bit digest.
 *
 * @since 0.1.0
 * @category utils
 */
export const argsText = (args: unknown): string => {
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

/**
 * The calls counted so far.
 *
 * @since 0.1.0
 * @category model
 */
export interface CallSet {
  /** Counts a call (id, tool name, arguments text); true when it was not counted before. */
  readonly add: (id: string, tool: string, text: string) => boolean
}

// The calls counted live as long as the run. Kept as strings and entries on the JS
// heap, they were copied by young-generation collections, then moved to the old one,
// and the heap grew, run after run (where this was measured, a page of memory touched
// for the first time cost as much as parsing a few kilobytes). So they are kept as bytes in typed arrays, in
// pages of a fixed size that are filled and never copied. An entry is four 32-bit
// words (the lengths of its id and arguments text, its tool by number, since a run
// names few tools, and its hash), then the characters of its id and text, one byte
// each; a call with a character beyond U+00FF (rare in ids and arguments) is kept as
// a string instead. An open-addressing table, at most half full, finds entries by
// hash, seeded per set so that no input can choose its collisions; a call is counted
// when an entry has its tool and the same characters.
const PAGE_BYTES = 1 << 16
const PAGE_WORDS = PAGE_BYTES >> 2
// an entry is known by its page and its first word there, in one number (a table slot
// holds it plus one, 0 being empty): the page above bit 14, and at most 2^17 pages
const WORD_BITS = 14
const MAX_PAGES = 1 << 17
const HEADER_WORDS = 4

// A class, not closures: its methods are the same functions in every run, so code
// optimised for one run's set stays right for the next one's.
class PagedCallSet implements CallSet {
  private readonly seed = (Math.random() * 0x100000000) | 0
  private readonly toolNumbers = new Map<string, number>()
  private readonly wide = new Set<string>()
  private readonly bytePages: Array<Uint8Array> = []
  private readonly wordPages: Array<Int32Array> = []
  // the page being filled (-1: none yet), and how many of its words are used
  private filling = -1
  private used = PAGE_WORDS
  private slots = new Int32Array(1 << 10)
  private count = 0

  constructor(private readonly finish: (h: number) => number) {}

  add(id: string, toolName: string, text: string): boolean {
    let bits = 0
    for (let i = 0; i < id.length; i++) bits |= id.charCodeAt(i)
    for (let i = 0; i < text.length; i++) bits |= text.charCodeAt(i)
    if (bits > 0xff) {
      const key = `${id.length}:${toolName.length}:${id}${toolName}${text}`
      if (this.wide.has(key)) return false
      this.wide.add(key)
      return true
    }
    let tool = this.toolNumbers.get(toolName)
    if (tool === undefined) this.toolNumbers.set(toolName, (tool = this.toolNumbers.size))
    const h = this.hashOf(id, tool, text)
    const slots = this.slots
    const mask = slots.length - 1
    let s = h & mask
    for (let e = slots[s] as number; e !== 0; e = slots[s] as number) {
      if (this.isEntry(e - 1, h, id, tool, text)) return false
      s = (s + 1) & mask
    }
    const ref = this.place(HEADER_WORDS + ((id.length + text.length + 3) >> 2))
    const words = this.wordPages[ref >>> WORD_BITS] as Int32Array
    const bytes = this.bytePages[ref >>> WORD_BITS] as Uint8Array
    const w = ref & (PAGE_WORDS - 1)
    words[w] = id.length
    words[w + 1] = text.length
    words[w + 2] = tool
    words[w + 3] = h
    let p = (w + HEADER_WORDS) << 2
    for (let i = 0; i < id.length; i++) bytes[p++] = id.charCodeAt(i)
    for (let i = 0; i < text.length; i++) bytes[p++] = text.charCodeAt(i)
    slots[s] = ref + 1
    if (++this.count * 2 > slots.length) this.grow()
    return true
  }

  private hashOf(id: string, tool: number, text: string): number {
    let h = this.seed ^ 0x811c9dc5
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193)
    h = Math.imul(h ^ (0x10000 + tool), 0x01000193)
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
    return this.finish(h) | 0
  }

  private isEntry(ref: number, h: number, id: string, tool: number, text: string): boolean {
    const words = this.wordPages[ref >>> WORD_BITS] as Int32Array
    const w = ref & (PAGE_WORDS - 1)
    if (words[w + 3] !== h || words[w] !== id.length || words[w + 1] !== text.length || words[w + 2] !== tool) return false
    const bytes = this.bytePages[ref >>> WORD_BITS] as Uint8Array
    let p = (w + HEADER_WORDS) << 2
    for (let i = 0; i < id.length; i++) if (bytes[p++] !== id.charCodeAt(i)) return false
    for (let i = 0; i < text.length; i++) if (bytes[p++] !== text.charCodeAt(i)) return false
    return true
  }

  private newPage(size: number): number {
    if (this.bytePages.length === MAX_PAGES) throw new RangeError('too many distinct calls to count')
    const page = new Uint8Array(size)
    this.bytePages.push(page)
    this.wordPages.push(new Int32Array(page.buffer))
    return this.bytePages.length - 1
  }

  // room for an entry of `words` words: its reference
  private place(words: number): number {
    // a call too long for a page has one of its own, and the page being filled stays
    if (words > PAGE_WORDS) return this.newPage(words << 2) << WORD_BITS
    if (this.used + words > PAGE_WORDS) {
      this.filling = this.newPage(PAGE_BYTES)
      this.used = 0
    }
    const ref = (this.filling << WORD_BITS) | this.used
    this.used += words
    return ref
  }

  private grow(): void {
    const old = this.slots
    const bigger = new Int32Array(old.length * 2)
    const mask = bigger.length - 1
    for (let k = 0; k < old.length; k++) {
      const e = old[k] as number
      if (e === 0) continue
      const ref = e - 1
      let s = ((this.wordPages[ref >>> WORD_BITS] as Int32Array)[(ref & (PAGE_WORDS - 1)) + 3] as number) & mask
      while (bigger[s] !== 0) s = (s + 1) & mask
      bigger[s] = e
    }
    this.slots = bigger
  }
}

/**
 * An empty set of calls. `finish` is the last step of each hash (tests pass a constant,
 * so that every call collides with every other and only characters tell them apart).
 *
 * @since 0.1.0
 * @category constructors
 */
export const newCallSet = (finish: (h: number) => number = fmix32): CallSet => new PagedCallSet(finish)

// Two independent 32-bit FNV-1a passes (different offset bases and primes), each
// finalised: 64 bits, with the length beside them, for telling calls apart. A crypto
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
