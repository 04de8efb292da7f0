// What the audit's construct tests share: the paths a schema's compiled check reports for some arguments, an
// object schema, and the drafts' `$schema` URIs.
import { compileSchema, diffKeys } from '../../src/index.js'

/** The rendered path of every key the check of `parameters` reports in `args`, in order. */
export const paths = (parameters: unknown, args: unknown): ReadonlyArray<string> =>
  diffKeys(compileSchema(parameters))(args as Record<string, unknown>).map((k) => k.path)

/** An object schema declaring `properties`, with `more` beside them. */
export const obj = (properties: Record<string, unknown>, more: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...more,
})

export const DRAFT_4 = 'http://json-schema.org/draft-04/schema#'
export const DRAFT_6 = 'http://json-schema.org/draft-06/schema#'
export const DRAFT_7 = 'http://json-schema.org/draft-07/schema#'
export const DRAFT_2019 = 'https://json-schema.org/draft/2019-09/schema'
export const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema'
