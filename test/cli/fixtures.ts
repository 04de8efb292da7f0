// Chat-completion request bodies as hosts record them: each request repeats the
// conversation so far.

export const fsRead = {
  type: 'function',
  function: { name: 'fs_read', parameters: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'number' } } } },
}
export const webGet = {
  type: 'function',
  function: { name: 'web_get', parameters: { type: 'object', properties: { url: { type: 'string' } } } },
}
export const noProps = { type: 'function', function: { name: 'now', parameters: { type: 'object' } } }

export const toolCall = (id: string, name: string, args: unknown): unknown => ({
  id,
  type: 'function',
  function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
})

export const assistant = (...calls: ReadonlyArray<unknown>): unknown => ({ role: 'assistant', content: null, tool_calls: calls })
export const toolMsg = (id: string): unknown => ({ role: 'tool', tool_call_id: id, content: 'ok' })

/** The requests of one session: request i holds the first i turns. */
export const session = (tools: ReadonlyArray<unknown>, turns: ReadonlyArray<ReadonlyArray<unknown>>): Array<unknown> => {
  const out: Array<unknown> = []
  const messages: Array<unknown> = [{ role: 'user', content: 'go' }]
  out.push({ model: 'm', tools, messages: [...messages] })
  for (const calls of turns) {
    messages.push(assistant(...calls))
    for (const c of calls) messages.push(toolMsg((c as { id: string }).id))
    out.push({ model: 'm', tools, messages: [...messages] })
  }
  return out
}

export const jsonl = (records: ReadonlyArray<unknown>): string => records.map((r) => JSON.stringify(r)).join('\n') + '\n'
