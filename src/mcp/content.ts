/**
 * Rendering an MCP tool result for a chat model: text unchanged, every other block described in one
 * line rather than dropped, so the model knows something was there.
 *
 * @since 0.1.0
 */
import type { ContentBlock, ToolResult } from '../kernel/model.js'
import { isRecord } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

const str = (u: unknown): string | undefined => (typeof u === 'string' ? u : undefined)

// Bytes a base64 payload decodes to, without decoding it.
const base64Bytes = (data: string): number => {
  const clean = data.replace(/\s/g, '')
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding)
}

const bytes = (n: number): string => `${n} byte${n === 1 ? '' : 's'}`

const mimeOf = (o: Readonly<Record<string, unknown>>): string => str(o['mimeType']) ?? 'no MIME type'

/**
 * One content block as text: a text block is its text; image, audio, resource and resource-link blocks
 * are described in one bracketed line (type, MIME type, size or URI); a block of an unknown type is
 * named by its type.
 *
 * @example
 * import { renderBlock } from 'toolstack/mcp'
 * assert.strictEqual(renderBlock({ type: 'text', text: 'hi' }), 'hi')
 * assert.strictEqual(
 *   renderBlock({ type: 'image', mimeType: 'image/png', data: 'AAAA' }),
 *   '[image: image/png, 3 bytes]',
 * )
 * assert.strictEqual(
 *   renderBlock({ type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt', mimeType: 'text/plain' }),
 *   '[resource_link: text/plain, file:///a.txt, "a.txt"]',
 * )
 *
 * @since 0.1.0
 * @category utils
 */
export const renderBlock = (block: unknown): string => {
  if (!isRecord(block)) return '[unreadable content block]'
  const type = str(block['type'])
  switch (type) {
    case 'text':
      return str(block['text']) ?? '[text block without text]'
    case 'image':
    case 'audio': {
      const data = str(block['data'])
      return `[${type}: ${mimeOf(block)}, ${data === undefined ? 'no data' : bytes(base64Bytes(data))}]`
    }
    case 'resource': {
      const r = block['resource']
      if (!isRecord(r)) return '[resource: unreadable]'
      const text = str(r['text'])
      const blob = str(r['blob'])
      const size =
        text !== undefined ? `${text.length} characters` : blob !== undefined ? bytes(base64Bytes(blob)) : 'no contents'
      return `[resource: ${mimeOf(r)}, ${str(r['uri']) ?? 'no URI'}, ${size}]`
    }
    case 'resource_link': {
      const name = str(block['name'])
      return `[resource_link: ${mimeOf(block)}, ${str(block['uri']) ?? 'no URI'}${name === undefined ? '' : `, ${JSON.stringify(name)}`}]`
    }
    case undefined:
      return '[content block without a type]'
    default:
      return `[${type} block]`
  }
}

const safeJson = (u: unknown): string => {
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

/**
 * A `tools/call` result as the tool message a model reads: blocks rendered one per line; `isError: true`
 * becomes `is_error: true`; `structuredContent` is kept as `structured_content`, and rendered as JSON
 * when it is all the result holds; the blocks themselves are kept unchanged as `mcp_content`. A legacy
 * (2024-10-07) `toolResult` is rendered as JSON. Anything else becomes an `is_error` result stating
 * that the response is not a tool result.
 *
 * @example
 * import { renderCallResult } from 'toolstack/mcp'
 * assert.deepStrictEqual(renderCallResult('call_1', { content: [{ type: 'text', text: 'nope' }], isError: true }), {
 *   role: 'tool',
 *   tool_call_id: 'call_1',
 *   content: 'nope',
 *   is_error: true,
 *   mcp_content: [{ type: 'text', text: 'nope' }],
 * })
 *
 * @since 0.1.0
 * @category utils
 */
export const renderCallResult = (toolCallId: string, result: unknown): ToolResult => {
  if (isRecord(result) && Array.isArray(result['content'])) {
    const blocks: ReadonlyArray<unknown> = result['content']
    const structured = result['structuredContent']
    const text =
      blocks.length === 0 && structured !== undefined ? safeJson(structured) : blocks.map(renderBlock).join('\n')
    return {
      role: 'tool',
      tool_call_id: toolCallId,
      content: text,
      ...(result['isError'] === true ? { is_error: true } : {}),
      ...(structured !== undefined ? { structured_content: structured } : {}),
      ...(blocks.length > 0 ? { mcp_content: blocks as ReadonlyArray<ContentBlock> } : {}),
    }
  }
  if (isRecord(result) && Object.prototype.hasOwnProperty.call(result, 'toolResult')) {
    return { role: 'tool', tool_call_id: toolCallId, content: safeJson(result['toolResult']) }
  }
  return {
    role: 'tool',
    tool_call_id: toolCallId,
    content: `the MCP server's answer is not a tool result (got ${isRecord(result) ? 'an object without a content list' : safeJson(result)})`,
    is_error: true,
  }
}
