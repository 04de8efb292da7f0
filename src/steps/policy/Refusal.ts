/**
 * Why the permission policy did not run a call, and how that is described to a model: who refused, why, and
 * what to do instead.
 *
 * @since 0.1.0
 */
import type { ArgsProblem } from '../../kernel/model.js'
import { drawArgsProblem } from '../Args.js'
import type { Rule } from './Rule.js'
import { drawRule } from './Rule.js'
import type { ProtectedFile } from './evaluate.js'
import type { Standing } from '../pins/Review.js'
import { drawDriftRefusal } from '../pins/Events.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Why a call was not run. Rendered for the model by `drawRefusal`.
 *
 * @since 0.1.0
 * @category model
 */
export type Refusal =
  | { readonly _tag: 'MalformedCall' }
  | {
      readonly _tag: 'DeniedByRule'
      readonly tool: string
      readonly rule: Rule
      readonly unevaluable: ReadonlyArray<string>
    }
  | { readonly _tag: 'DeniedByGrant'; readonly tool: string; readonly rule: Rule }
  /** A location touches a file no call may (the gateway's own: configuration, store, log). */
  | { readonly _tag: 'ProtectedFile'; readonly tool: string; readonly arg: string; readonly file: ProtectedFile }
  /** A location could not be checked against the files no call may touch. */
  | { readonly _tag: 'ProtectedUnchecked'; readonly tool: string; readonly unevaluable: ReadonlyArray<string> }
  | { readonly _tag: 'DeclinedByUser'; readonly tool: string; readonly remembered: Rule | undefined }
  /** No one could be asked; `definitionChanged` when a grant was set aside because the tool's definition changed. */
  | { readonly _tag: 'NoOneToAsk'; readonly tool: string; readonly definitionChanged?: boolean }
  /** The tool's definition changed since it was pinned, and its calls are refused until an operator accepts it. */
  | { readonly _tag: 'DefinitionChanged'; readonly tool: string; readonly standing: Standing }
  /** Asked from inside `onAsk` (a callback that calls its own stack): it cannot wait for the answer it is part of. */
  | { readonly _tag: 'AskedWhileAsking'; readonly tool: string }
  | { readonly _tag: 'UnreadableArguments'; readonly tool: string; readonly problem: ArgsProblem }
  | { readonly _tag: 'AskFailed'; readonly tool: string; readonly error: string }
  | { readonly _tag: 'UnclearAnswer'; readonly tool: string; readonly problem: string }
  | { readonly _tag: 'InvalidRule'; readonly tool: string; readonly problem: string }

// -------------------------------------------------------------------------------------
// destructors
// -------------------------------------------------------------------------------------

const quote = (s: string): string => JSON.stringify(s)

/**
 * A refusal in words a model can act on: who refused, why, and what to do instead.
 *
 * @example
 * import { drawRefusal } from 'toolstack'
 * assert.strictEqual(
 *   drawRefusal({
 *     _tag: 'DeniedByRule',
 *     tool: 'fs_write',
 *     rule: { tool: 'fs_write', decision: 'deny', note: 'the repo is read-only' },
 *     unevaluable: [],
 *   }),
 *   'The permission policy refused this call to "fs_write" (rule: deny "fs_write"). Reason: the repo is read-only. It was not run; do not retry it as is.',
 * )
 *
 * @since 0.1.0
 * @category destructors
 */
export const drawRefusal = (r: Refusal): string => {
  switch (r._tag) {
    case 'MalformedCall':
      return (
        'The permission policy could not read this tool call, so it was not run. ' +
        'Send a call with an id and a function { name, arguments }.'
      )
    case 'DeniedByRule': {
      const reason = r.rule.note === undefined ? 'none was given' : r.rule.note
      const unchecked =
        r.unevaluable.length === 0
          ? ''
          : ` Its location could not be checked (${r.unevaluable.join('; ')}), so the rule applied to be safe; ` +
            'a call with a clean absolute path may be treated differently.'
      return (
        `The permission policy refused this call to ${quote(r.tool)} (rule: ${drawRule(r.rule)}). ` +
        `Reason: ${reason}.${unchecked} It was not run; do not retry it as is.`
      )
    }
    case 'DeniedByGrant': {
      const note = r.rule.note === undefined ? '' : `; ${r.rule.note}`
      return (
        `The user has refused calls like this to ${quote(r.tool)} for this session (rule: ${drawRule(r.rule)}${note}). ` +
        'It was not run; do not retry it, and ask the user if you need it.'
      )
    }
    case 'ProtectedFile':
      return (
        `The permission policy refused this call to ${quote(r.tool)}: its ${quote(r.arg)} reaches ${r.file.path}, ` +
        `${r.file.what}, which no tool call may touch (read, write, move or delete, itself or a directory holding it). ` +
        'It was not run; do not retry it.'
      )
    case 'ProtectedUnchecked':
      return (
        `The permission policy refused this call to ${quote(r.tool)}: its location could not be checked against ` +
        `the files no tool call may touch (${r.unevaluable.join('; ')}). It was not run; ` +
        'send each location as a clean absolute path.'
      )
    case 'DeclinedByUser':
      return r.remembered === undefined
        ? `The user declined this call to ${quote(r.tool)}. ` +
            'It was not run; do not retry it unchanged, and ask the user how to proceed.'
        : `The user declined this call to ${quote(r.tool)} and refused calls like it for this session ` +
            `(rule: ${drawRule(r.remembered)}). It was not run; do not retry it, and ask the user how to proceed.`
    case 'NoOneToAsk':
      return (
        `${needsPermission(r.tool)}${r.definitionChanged === true ? ' again: its definition changed since the user allowed it' : ''}, ` +
        'and no one is available to give it, so it was not run. ' +
        `Use a tool the policy allows, or ask the user to allow ${quote(r.tool)}.`
      )
    case 'DefinitionChanged':
      return drawDriftRefusal(r.standing)
    case 'AskedWhileAsking':
      return (
        `${needsPermission(r.tool)}, and it was made while the user was being asked about another call, ` +
        'so it cannot wait for an answer; it was not run. Make it once that question is answered.'
      )
    case 'UnreadableArguments':
      return (
        `${needsPermission(r.tool)}, but it cannot be shown to them: ${drawArgsProblem(r.problem)}. ` +
        'It was not run; send the arguments as a JSON object.'
      )
    case 'AskFailed':
      return (
        `${needsPermission(r.tool)}, and asking failed (${r.error}), so it was not run. ` +
        'Try again later, or ask the user to allow it.'
      )
    case 'UnclearAnswer':
      return (
        `${needsPermission(r.tool)}, and the answer could not be understood (${r.problem}), so it was not run. ` +
        'Ask the user again.'
      )
    case 'InvalidRule':
      return (
        `This call to ${quote(r.tool)} was answered "always", but the rule to remember is invalid (${r.problem}), ` +
        'so nothing was remembered and the call was not run. Ask the user again.'
      )
  }
}

const needsPermission = (tool: string): string => `This call to ${quote(tool)} needs the user's permission`
