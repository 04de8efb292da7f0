// A PreToolUse hook's input as Claude Code sends it, and a hook run as the SDK runs it: shared by the audit's and
// the policy's hook tests. The input's fields may be anything, as a hostile or newer CLI may send.
import type { HookCallback, HookInput, PreToolUseHookInput } from '@anthropic-ai/claude-agent-sdk'

export const signal = new AbortController().signal

export const pre = (tool_name: unknown, tool_input: unknown, tool_use_id: unknown = 'toolu_1'): PreToolUseHookInput =>
  ({
    hook_event_name: 'PreToolUse',
    session_id: 's1',
    transcript_path: '/tmp/t.jsonl',
    cwd: '/srv',
    tool_name,
    tool_input,
    tool_use_id,
  }) as PreToolUseHookInput

export const run = (hook: HookCallback | undefined, input: HookInput) => {
  if (hook === undefined) throw new Error('no hook')
  return hook(input, 'toolu_1', { signal })
}
