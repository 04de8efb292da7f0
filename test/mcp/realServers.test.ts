// Real MCP servers from npm, started as child processes over stdio on a temporary
// directory, and closed (killed if need be) after each test whatever happens.
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import type { ToolDeclaration, UnknownKeyWarning } from '../../src/index.js'
import { withUnknownKeyAudit } from '../../src/index.js'
import { fromMcpClient } from '../../src/mcp/index.js'
import { call } from '../support/fakes.js'
import {
  EVERYTHING_SERVER,
  FILESYSTEM_SERVER,
  answered,
  cleanUpAfterEach,
  isAlive,
  spawnServer,
  tempDir,
} from './fixtures.js'

cleanUpAfterEach()

const rightOf = <A>(
  e: { readonly _tag: 'Left'; readonly left: unknown } | { readonly _tag: 'Right'; readonly right: A },
): A => {
  if (e._tag === 'Left') throw new Error(`expected a Right, got Left ${JSON.stringify(e.left)}`)
  return e.right
}

const declared = (ds: ReadonlyArray<ToolDeclaration>, name: string): ReadonlyArray<string> =>
  Object.keys((ds.find((d) => d.function.name === name)?.function.parameters?.['properties'] ?? {}) as object)

const TEXT = 'line one\nline two\nline three\n'

const filesystem = async () => {
  const dir = tempDir()
  writeFileSync(join(dir, 'notes.txt'), TEXT)
  const conn = await spawnServer({ script: FILESYSTEM_SERVER, args: [dir] })
  return { dir, conn }
}

describe('server-filesystem over stdio', () => {
  it('lists its real tools and reads, writes and lists a temporary directory', async () => {
    const { dir, conn } = await filesystem()
    const tools = fromMcpClient(conn.client)
    const ds = rightOf(await tools.toolsForLlm())
    expect(ds.map((d) => d.function.name)).toEqual(
      expect.arrayContaining(['read_text_file', 'write_file', 'list_directory']),
    )
    expect(declared(ds, 'read_text_file')).toEqual(expect.arrayContaining(['path', 'head', 'tail']))
    expect(tools.tools().find((t) => t.name === 'read_text_file')?.readOnly).toBe(true)
    expect(tools.tools().find((t) => t.name === 'write_file')?.readOnly).toBe(false)

    const out = rightOf(
      await tools.executeToolCalls([
        call('1', 'read_text_file', { path: join(dir, 'notes.txt') }),
        call('2', 'write_file', { path: join(dir, 'new.txt'), content: 'written by a test' }),
        call('3', 'list_directory', { path: dir }),
        call('4', 'read_text_file', { path: join(dir, 'missing.txt') }),
        call('5', 'read_text_file', { path: '/etc/hostname' }),
      ])(),
    )
    expect(out[0]).toEqual(answered('1', TEXT, { structured_content: { content: TEXT } }))
    expect(out[1]?.is_error).toBeUndefined()
    expect(readFileSync(join(dir, 'new.txt'), 'utf8')).toBe('written by a test')
    expect(out[2]?.content).toMatch(/\[FILE\] new\.txt/)
    expect(out[2]?.content).toMatch(/\[FILE\] notes\.txt/)
    // the server's own errors come back as is_error results, worded by the server
    expect(out[3]).toMatchObject({
      tool_call_id: '4',
      is_error: true,
      content: expect.stringMatching(/ENOENT|no such file/i),
    })
    expect(out[4]).toMatchObject({
      tool_call_id: '5',
      is_error: true,
      content: expect.stringMatching(/outside allowed directories|Access denied/i),
    })
  })

  it("the seed's incident: junk keys are reported once, the file is still read, the server's answer is unchanged", async () => {
    const { dir, conn } = await filesystem()
    const warnings: Array<UnknownKeyWarning> = []
    const path = join(dir, 'notes.txt')
    const tools = pipe(fromMcpClient(conn.client), withUnknownKeyAudit({ onWarn: (w) => () => void warnings.push(w) }))
    await tools.toolsForLlm()
    const junk = `{"path":${JSON.stringify(path)},"ead":12,"the rest":"of the file, please"}`
    const first = rightOf(await tools.executeToolCalls([call('call_1', 'read_text_file', junk)])())
    const again = rightOf(await tools.executeToolCalls([call('call_2', 'read_text_file', junk)])())
    const clean = rightOf(await tools.executeToolCalls([call('call_3', 'read_text_file', { path })])())

    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({
      tool: 'read_text_file',
      unknownKeys: ['ead', 'the rest'],
      declaredKeys: ['head', 'path', 'tail'],
      id: 'call_1',
    })
    expect(first[0]?.content).toBe(TEXT)
    expect(first[0]?.is_error).toBeUndefined()
    // the server ignores the extra keys: the same answer as the clean call
    expect({ ...first[0], tool_call_id: '' }).toEqual({ ...clean[0], tool_call_id: '' })
    expect({ ...again[0], tool_call_id: '' }).toEqual({ ...clean[0], tool_call_id: '' })
  })

  it('leaves no process behind after close', async () => {
    const { conn } = await filesystem()
    const pid = conn.pid
    expect(pid).toBeTypeOf('number')
    expect(isAlive(pid as number)).toBe(true)
    await conn.close()
    expect(isAlive(pid as number)).toBe(false)
    // idempotent
    await conn.close()
  })
})

describe('server-everything over stdio', () => {
  it('lists its tools and renders its text, images, resource links and structured content', async () => {
    const conn = await spawnServer({ script: EVERYTHING_SERVER, args: ['stdio'] })
    const tools = fromMcpClient(conn.client, { readOnlyConcurrency: 4 })
    const ds = rightOf(await tools.toolsForLlm())
    expect(ds.map((d) => d.function.name)).toEqual(
      expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'get-resource-links', 'get-structured-content']),
    )
    const out = rightOf(
      await tools.executeToolCalls([
        call('1', 'echo', { message: 'hello' }),
        call('2', 'get-sum', { a: 2, b: 40 }),
        call('3', 'get-tiny-image', ''),
        call('4', 'get-resource-links', { count: 2 }),
        call('5', 'get-structured-content', { location: 'New York' }),
        call('6', 'no-such-tool'),
      ])(),
    )
    expect(out.map((r) => r.tool_call_id)).toEqual(['1', '2', '3', '4', '5', '6'])
    expect(out[0]?.content).toBe('Echo: hello')
    expect(out[1]?.content).toMatch(/42/)
    expect(out[2]?.content).toMatch(/^\[image: image\/png, \d+ bytes\]$/m)
    expect(out[3]?.content.match(/^\[resource_link: text\/plain, demo:\/\/\S+, ".+"\]$/gm)).toHaveLength(2)
    expect(out[4]?.structured_content).toMatchObject({ temperature: expect.any(Number) })
    expect(out[5]).toMatchObject({
      is_error: true,
      content: 'there is no tool named "no-such-tool" on this MCP server; the tool was not called',
    })
  })
})

// The silent failure one level down: a key misspelled inside an array's elements reaches
// a server that ignores it. The audit names it by its path, once, and changes nothing.
describe('nested keys, heard on real servers', () => {
  const MEMORY_SERVER = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/dist/index.js')

  it('server-filesystem edit_file: edits[].oldtext, once for a hundred edits, suggested as edits[].oldText; the call goes through as sent', async () => {
    const { dir, conn } = await filesystem()
    const warnings: Array<UnknownKeyWarning> = []
    const tools = pipe(fromMcpClient(conn.client), withUnknownKeyAudit({ onWarn: (w) => () => void warnings.push(w) }))
    await tools.toolsForLlm()
    const edits = Array.from({ length: 100 }, () => ({ oldtext: 'line one', newText: 'line 1' }))
    const out = rightOf(
      await tools.executeToolCalls([
        call('1', 'edit_file', { path: join(dir, 'notes.txt'), edits }),
        call('2', 'edit_file', { path: join(dir, 'notes.txt'), edits }),
      ])(),
    )
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({
      tool: 'edit_file',
      id: '1',
      unknownKeys: ['edits[].oldtext'],
      suggestions: [{ key: 'edits[].oldtext', didYouMean: 'edits[].oldText' }],
    })
    // the server is the judge of what it got: here it refuses, and the file is unchanged
    expect(out).toHaveLength(2)
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe(TEXT)
    expect(tools.stats()).toEqual([{ tool: 'edit_file', key: 'edits[].oldtext', calls: 2, firstId: '1' }])
  })

  it('server-memory create_entities: entities[].entity_type, suggested as entities[].entityType', async () => {
    const dir = tempDir()
    const conn = await spawnServer({ script: MEMORY_SERVER, env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } })
    const warnings: Array<UnknownKeyWarning> = []
    const tools = pipe(fromMcpClient(conn.client), withUnknownKeyAudit({ onWarn: (w) => () => void warnings.push(w) }))
    await tools.toolsForLlm()
    await tools.executeToolCalls([
      call('1', 'create_entities', {
        entities: [{ name: 'Ada', entity_type: 'person', entityType: 'person', observations: ['wrote notes'] }],
      }),
    ])()
    expect(warnings.map((w) => [w.unknownKeys, w.suggestions])).toEqual([
      [['entities[].entity_type'], [{ key: 'entities[].entity_type', didYouMean: 'entities[].entityType' }]],
    ])
  })
})
