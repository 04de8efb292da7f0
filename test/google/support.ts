// The recorded generateContent responses of test/google/fixtures (written from the SDK's own types and the API's
// documented JSON), as JSON answers and as the chunks of a streamed response, and the tools the loops declare.
import { readFileSync } from 'node:fs'
import type { FunctionDeclaration, GenerateContentResponse } from '@google/genai'
import { Type } from '@google/genai'
import type { ToolDeclaration } from '../../src/index.js'
import type { Answer } from '../support/loopback.js'

/** A response as the API sends it: plain JSON, not the SDK's class. */
export type Recorded = Pick<GenerateContentResponse, 'candidates' | 'usageMetadata' | 'modelVersion' | 'responseId'>

const fixture = (name: string): Recorded =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')) as Recorded

/**
 * The recorded turns, in the order of a loop: a call carrying a misspelt nested key (`options.encodng`); the
 * server tools' parts (Google Search, code execution) beside a second call with the same key; a parallel pair,
 * one carrying a key of its own; the answer.
 */
export const turns = (): ReadonlyArray<Recorded> => [
  fixture('function-call-nested'),
  fixture('server-tool'),
  fixture('parallel'),
  fixture('final'),
]

export const asJson = (r: Recorded): Answer => ({ json: r })

/** A response as `streamGenerateContent?alt=sse` sends it: one chunk per part, each a response of its own. */
export const asStream = (r: Recorded): Answer => {
  const [candidate] = r.candidates ?? []
  const parts = candidate?.content?.parts ?? []
  return {
    separator: '\r\n\r\n',
    sse: parts.map((part, i) => ({
      data: {
        ...r,
        candidates: [
          {
            content: { role: 'model', parts: [part] },
            index: 0,
            ...(i === parts.length - 1 ? { finishReason: candidate?.finishReason } : {}),
          },
        ],
      },
    })),
  }
}

/** The two tools the recorded turns call, as a toolstack stack declares them (JSON Schema). */
export const declarations: ReadonlyArray<ToolDeclaration> = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Reads a file',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          options: { type: 'object', properties: { encoding: { type: 'string' }, offset: { type: 'number' } } },
        },
        required: ['path'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'write_file',
      description: 'Writes a file',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' } },
        required: ['path', 'content'],
      },
    },
  },
]

/** The same tools as a host that keeps its own writes them: the SDK's `parameters` (its OpenAPI subset). */
export const ownDeclarations: Array<FunctionDeclaration> = [
  {
    name: 'read_file',
    description: 'Reads a file',
    parameters: {
      type: Type.OBJECT,
      properties: {
        path: { type: Type.STRING },
        options: { type: Type.OBJECT, properties: { encoding: { type: Type.STRING }, offset: { type: Type.NUMBER } } },
      },
      required: ['path'],
    },
  },
  {
    name: 'write_file',
    description: 'Writes a file',
    parameters: {
      type: Type.OBJECT,
      properties: { path: { type: Type.STRING }, content: { type: Type.STRING } },
      required: ['path', 'content'],
    },
  },
]
