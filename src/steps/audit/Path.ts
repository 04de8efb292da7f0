/**
 * Where a key sits in a call's arguments: as segments a machine reads (object keys, and marks for "every
 * element of an array" and "every entry of a record"), and as the one rendered path every warning, count and
 * log line uses (`opts.encodng`, `edits[].oldtext`, `headers.*.vaule`).
 *
 * @since 0.1.0
 */

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One step from the arguments' root: an object key (the string itself, exactly as sent), every element of an
 * array (`{ each: 'element' }`, rendered `[]`), or every entry of a record, an object whose keys are data (its
 * values declared by `additionalProperties`: `{ each: 'entry' }`, rendered `.*`).
 *
 * @since 0.1.0
 * @category model
 */
export type Segment = string | EachElement | EachEntry

/**
 * @since 0.1.0
 * @category model
 */
export interface EachElement {
  readonly each: 'element'
}

/**
 * @since 0.1.0
 * @category model
 */
export interface EachEntry {
  readonly each: 'entry'
}

/**
 * The mark for every element of an array (one value, shared).
 *
 * @since 0.1.0
 * @category model
 */
export const ELEMENT: EachElement = Object.freeze({ each: 'element' })

/**
 * The mark for every entry of a record (one value, shared).
 *
 * @since 0.1.0
 * @category model
 */
export const ENTRY: EachEntry = Object.freeze({ each: 'entry' })

// -------------------------------------------------------------------------------------
// paths
// -------------------------------------------------------------------------------------

// a top-level key is shown as is unless it could be taken for a path (or for the record mark); below the top,
// a name that is not a plain word is quoted (`opts["a.b"]`), so no two places share a path. A scan of char
// codes rather than a RegExp: every repeated undeclared key is rendered again (the flat figures of
// docs/performance.md)
const needsQuotes = (key: string, below: boolean): boolean => {
  if (key === '' || key === '*') return true
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i)
    // . [ ] " and, below the top, a space
    if (c === 0x2e || c === 0x5b || c === 0x5d || c === 0x22 || (below && c === 0x20)) return true
  }
  return false
}

/**
 * The path of `key` in the object at `at` (`''` for the arguments' root).
 *
 * @example
 * import { pathOf } from 'toolstack'
 * assert.strictEqual(pathOf('', 'haed'), 'haed')
 * assert.strictEqual(pathOf('opts', 'encodng'), 'opts.encodng')
 * assert.strictEqual(pathOf('opts', 'a.b'), 'opts["a.b"]')
 * assert.strictEqual(pathOf('edits[]', 'oldtext'), 'edits[].oldtext')
 * assert.strictEqual(pathOf('headers.*', 'vaule'), 'headers.*.vaule')
 *
 * @since 0.1.0
 * @category paths
 */
export const pathOf = (at: string, key: string): string =>
  at === ''
    ? needsQuotes(key, false)
      ? `[${JSON.stringify(key)}]`
      : key
    : needsQuotes(key, true)
      ? `${at}[${JSON.stringify(key)}]`
      : `${at}.${key}`

/**
 * The path of a place given as segments (`''` for the root).
 *
 * @example
 * import { ELEMENT, ENTRY, renderPlace } from './Path.js'
 * assert.strictEqual(renderPlace(['edits', ELEMENT]), 'edits[]')
 * assert.strictEqual(renderPlace(['headers', ENTRY, 'a b']), 'headers.*["a b"]')
 *
 * @since 0.1.0
 * @category paths
 */
export const renderPlace = (segments: ReadonlyArray<Segment>): string => {
  let at = ''
  for (const s of segments)
    at = typeof s === 'string' ? pathOf(at, s) : s.each === 'element' ? `${at}[]` : at === '' ? '*' : `${at}.*`
  return at
}
