// An adapter may not import another adapter, so the audit session each one keeps (the
// seen-set in one ref, changed by the combinator's own steps) is one file copied into
// each adapter's folder until the library carries it: the copies must stay the same.
import { readFileSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const src = fileURLToPath(new URL('../../src', import.meta.url))

describe('the adapters’ audit session', () => {
  it('is the very same file in every adapter that has one', () => {
    const copies = readdirSync(src, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => {
        try {
          return [{ at: d.name, text: readFileSync(`${src}/${d.name}/session.ts`, 'utf8') }]
        } catch {
          return []
        }
      })
    expect(copies.map((c) => c.at)).toEqual(expect.arrayContaining(['ai-sdk', 'openai-agents']))
    for (const c of copies) expect(c.text, `src/${c.at}/session.ts`).toBe(copies[0]?.text)
  })
})
