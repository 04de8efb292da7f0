// An MCP tool result as a chat model reads it: text as it came, every other block
// described in one line rather than dropped.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { renderBlock, renderCallResult } from '../../src/mcp/index.js'

describe('renderBlock', () => {
  it('is a text block’s text', () => {
    expect(renderBlock({ type: 'text', text: 'line one\nline two' })).toBe('line one\nline two')
    expect(renderBlock({ type: 'text', text: '' })).toBe('')
    expect(renderBlock({ type: 'text' })).toBe('[text block without text]')
  })

  it('describes image and audio by MIME type and decoded size, in bytes', () => {
    expect(renderBlock({ type: 'image', mimeType: 'image/png', data: 'AAAA' })).toBe('[image: image/png, 3 bytes]')
    expect(renderBlock({ type: 'audio', mimeType: 'audio/wav', data: 'AA==' })).toBe('[audio: audio/wav, 1 byte]')
    expect(renderBlock({ type: 'image', mimeType: 'image/png', data: 'AAA=' })).toBe('[image: image/png, 2 bytes]')
    expect(renderBlock({ type: 'image', mimeType: 'image/png', data: 'AAAA\nAAAA' })).toBe(
      '[image: image/png, 6 bytes]',
    )
    expect(renderBlock({ type: 'image', mimeType: 'image/png', data: '' })).toBe('[image: image/png, 0 bytes]')
    expect(renderBlock({ type: 'image', mimeType: 'image/png', data: '=' })).toBe('[image: image/png, 0 bytes]')
    expect(renderBlock({ type: 'image', data: 'AAAA' })).toBe('[image: no MIME type, 3 bytes]')
    expect(renderBlock({ type: 'audio', mimeType: 'audio/wav' })).toBe('[audio: audio/wav, no data]')
  })

  it('gives the size a base64 payload decodes to, whatever the bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (data) => {
        const n = data.length
        expect(renderBlock({ type: 'image', mimeType: 'x', data: Buffer.from(data).toString('base64') })).toBe(
          `[image: x, ${n} byte${n === 1 ? '' : 's'}]`,
        )
      }),
      { numRuns: 50 },
    )
  })

  it('describes an embedded resource by MIME type, URI and size: characters of text, bytes of a blob', () => {
    expect(
      renderBlock({ type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'hello' } }),
    ).toBe('[resource: text/plain, file:///a.txt, 5 characters]')
    expect(
      renderBlock({
        type: 'resource',
        resource: { uri: 'file:///a.bin', mimeType: 'application/octet-stream', blob: 'AAAA' },
      }),
    ).toBe('[resource: application/octet-stream, file:///a.bin, 3 bytes]')
    expect(renderBlock({ type: 'resource', resource: { uri: 'file:///b', text: '' } })).toBe(
      '[resource: no MIME type, file:///b, 0 characters]',
    )
    expect(renderBlock({ type: 'resource', resource: {} })).toBe('[resource: no MIME type, no URI, no contents]')
    expect(renderBlock({ type: 'resource', resource: 'file:///a' })).toBe('[resource: unreadable]')
    expect(renderBlock({ type: 'resource' })).toBe('[resource: unreadable]')
  })

  it('describes a resource link by MIME type, URI and name, when it has one', () => {
    expect(renderBlock({ type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt', mimeType: 'text/plain' })).toBe(
      '[resource_link: text/plain, file:///a.txt, "a.txt"]',
    )
    expect(renderBlock({ type: 'resource_link', uri: 'file:///a.txt' })).toBe(
      '[resource_link: no MIME type, file:///a.txt]',
    )
    expect(renderBlock({ type: 'resource_link' })).toBe('[resource_link: no MIME type, no URI]')
  })

  it('names a block of a type it does not know by that type, and says when there is none', () => {
    expect(renderBlock({ type: 'video', data: 'AAAA' })).toBe('[video block]')
    expect(renderBlock({ text: 'no type' })).toBe('[content block without a type]')
    expect(renderBlock({ type: 7 })).toBe('[content block without a type]')
  })

  it('says a block that is not an object cannot be read', () => {
    for (const u of [null, 'text', 7, ['text']]) expect(renderBlock(u)).toBe('[unreadable content block]')
  })
})

describe('renderCallResult', () => {
  it('renders the blocks one per line, and keeps them as they came', () => {
    const content = [
      { type: 'text', text: 'a' },
      { type: 'image', mimeType: 'image/png', data: 'AAAA' },
    ]
    const out = renderCallResult('c1', { content })
    expect(out).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'a\n[image: image/png, 3 bytes]',
      mcp_content: content,
    })
    expect(out.mcp_content).toBe(content)
    expect(out).not.toHaveProperty('is_error')
    expect(out).not.toHaveProperty('structured_content')
  })

  it('makes isError: true an is_error result, and nothing else one', () => {
    expect(renderCallResult('c1', { content: [{ type: 'text', text: 'no' }], isError: true }).is_error).toBe(true)
    expect(renderCallResult('c1', { content: [{ type: 'text', text: 'no' }], isError: 'true' })).not.toHaveProperty(
      'is_error',
    )
    expect(renderCallResult('c1', { content: [{ type: 'text', text: 'no' }], isError: false })).not.toHaveProperty(
      'is_error',
    )
  })

  it('keeps structuredContent, and renders it as JSON when it is all the result holds', () => {
    const structured = { temperature: 21 }
    const alone = renderCallResult('c1', { content: [], structuredContent: structured })
    expect(alone).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: '{"temperature":21}',
      structured_content: structured,
    })
    expect(alone.structured_content).toBe(structured)
    expect(alone).not.toHaveProperty('mcp_content')
    const beside = renderCallResult('c1', { content: [{ type: 'text', text: 'warm' }], structuredContent: structured })
    expect(beside.content).toBe('warm')
    expect(beside.structured_content).toBe(structured)
    expect(renderCallResult('c1', { content: [] })).toEqual({ role: 'tool', tool_call_id: 'c1', content: '' })
  })

  it('renders structured content JSON cannot write as String does', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    expect(renderCallResult('c1', { content: [], structuredContent: cyclic }).content).toBe('[object Object]')
    expect(renderCallResult('c1', { content: [], structuredContent: 10n }).content).toBe('10')
  })

  it('renders a legacy toolResult as JSON', () => {
    expect(renderCallResult('c1', { toolResult: { ok: 1 } })).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: '{"ok":1}',
    })
    expect(renderCallResult('c1', { toolResult: undefined })).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'undefined',
    })
  })

  it('is an is_error result for anything else, saying what came', () => {
    expect(renderCallResult('c1', { content: 'text' })).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: "the MCP server's answer is not a tool result (got an object without a content list)",
      is_error: true,
    })
    expect(renderCallResult('c1', null).content).toBe("the MCP server's answer is not a tool result (got null)")
    expect(renderCallResult('c1', 'hello').content).toBe(`the MCP server's answer is not a tool result (got "hello")`)
    expect(renderCallResult('c1', Object.create({ toolResult: 1 }) as object).is_error).toBe(true)
  })
})
