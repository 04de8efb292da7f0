// The page's HTML (renderPage, htmlText, gatewayPage) in process: what it shows, and that whatever text a model or
// an upstream chose, it adds no tag, attribute or entity of its own and no control character, and costs a bounded
// number of bytes. The browser half is test/cli/page.test.ts.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { PageData } from '../../src/gateway/page.js'
import { gatewayPage, htmlText, renderPage } from '../../src/gateway/page.js'
import type { Gateway, HeldGrant } from '../../src/gateway/gateway.js'
import { asked, emptyHeard, hearWarning, noPending } from '../../src/gateway/heard.js'

/** A page whose every text a model or an upstream could choose is `s`. */
const hostile = (s: string): PageData => ({
  name: s,
  version: s,
  pid: 42,
  store: s,
  sessions: 1,
  upstreams: [
    { name: s, prefix: s, required: false, state: 'down', restarts: 2, why: s, tools: [{ name: s, description: s }] },
  ],
  heard: hearWarning(
    {
      tool: s,
      unknownKeys: [s],
      keys: [{ key: s, place: [], path: s }],
      declaredKeys: [],
      id: s,
      suggestions: [{ key: s, didYouMean: s }],
    },
    s,
    0,
  )(emptyHeard),
  recent: [{ time: 0, tool: s, id: s, upstream: s, outcome: 'refused', by: 'nobody', refusal: s }],
  pending: asked(1, { since: 0, tool: s, id: s, upstream: s, paths: [s, s] })(noPending),
  grants: [{ rule: { tool: s, decision: 'allow', under: s, note: s }, id: s, sessions: 1, stored: true }],
  notice: s,
  now: 0,
})

const count = (text: string, c: string): number => text.split(c).length - 1

// what HTML acts on, in text or in an attribute value
const MARKUP = ['<', '>', '"', "'"]
// what no text on the page may carry as it is: C0 but the style's line breaks, DEL, C1, direction marks and
// overrides, isolates, zero-width characters, line and paragraph separators, the BOM
const INVISIBLE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/

describe('htmlText', () => {
  it('writes & < > " and \' as entities, and control and invisible characters as \\uXXXX', () => {
    expect(htmlText(`<script>alert("x")</script>&'`)).toBe(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;',
    )
    expect(htmlText('a\u202eb\u0000c\u200bd')).toBe('a\\u202eb\\u0000c\\u200bd')
  })

  it('gives back printable ASCII as it was, once its entities are read', () => {
    const read = (html: string) =>
      html.replace(/&(lt|gt|quot|#39|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'" })[e] ?? '&')
    fc.assert(
      fc.property(
        fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 200 }),
        (s) => {
          expect(read(htmlText(s))).toBe(s)
        },
      ),
    )
  })

  it('cuts at max characters, with an ellipsis', () => {
    expect(htmlText('abcdef', 3)).toBe('abc…')
    expect(htmlText('a'.repeat(10_000))).toHaveLength(201)
  })
})

describe('renderPage', () => {
  it('whatever the texts, adds no markup of theirs: the page has as many < > " \' as one with plain texts, every & begins an entity, and nothing invisible', () => {
    const plain = renderPage(hostile('x'), 'c5rf')
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 80 }),
          fc.constantFrom(
            '<script>alert(1)</script>',
            '"><img src=x onerror=alert(1)>',
            "' onfocus='x",
            '&lt;',
            '\u202e</td>',
          ),
        ),
        (s) => {
          const html = renderPage(hostile(s), 'c5rf')
          for (const c of MARKUP) expect(count(html, c), c).toBe(count(plain, c))
          expect(html.replace(/&(lt|gt|quot|#39|amp);/g, '')).not.toContain('&')
          expect(html).not.toMatch(INVISIBLE)
        },
      ),
    )
  })

  it('is bounded whatever the length of the texts', () => {
    const html = renderPage(hostile('<'.repeat(1_000_000)), 'c5rf')
    expect(html.length).toBeLessThan(renderPage(hostile(''), 'c5rf').length + 100_000)
  })

  it('shows every section, each grant with a form that posts its id and the CSRF token to /grants/revoke', () => {
    const d = hostile('x')
    const html = renderPage(
      {
        ...d,
        grants: [
          {
            rule: { tool: 'fs_write_file', decision: 'allow', under: '/srv' },
            id: '0123456789abcdef',
            sessions: 0,
            stored: true,
          },
        ],
      },
      'c5rf',
    )
    for (const id of ['upstreams', 'tools', 'heard', 'questions', 'decisions', 'grants'])
      expect(html).toContain(`<h2 id="${id}">`)
    expect(html).toContain(
      '<form method="post" action="/grants/revoke"><input type="hidden" name="csrf" value="c5rf">' +
        '<input type="hidden" name="id" value="0123456789abcdef"><button type="submit">Revoke</button></form>',
    )
    expect(html).toContain('<code>allow &quot;fs_write_file&quot; under /srv</code>')
    expect(html).not.toMatch(/<script|<link|<img|src=|https?:\/\//i)
  })

  it('says so where there is nothing yet', () => {
    const html = renderPage(
      {
        ...hostile('x'),
        upstreams: [],
        heard: emptyHeard,
        recent: [],
        pending: noPending,
        grants: [],
        store: undefined,
      },
      'c',
    )
    for (const text of ['No upstream.', 'Nothing yet', 'None: no human is being asked', 'No decision yet.', 'No grant'])
      expect(html).toContain(text)
    expect(html).toContain('store: none')
  })
})

describe('gatewayPage', () => {
  const grant: HeldGrant = {
    rule: { tool: 'fs_write_file', decision: 'allow', under: '/srv' },
    id: '0123456789abcdef',
    sessions: 1,
    stored: false,
  }
  const fake = () => {
    const revoked: Array<[string, string]> = []
    const gateway: Pick<Gateway, 'status' | 'heard' | 'recent' | 'pending' | 'grants' | 'revokeGrant'> = {
      status: () => [],
      heard: () => emptyHeard,
      recent: () => [],
      pending: () => noPending,
      grants: () => [grant],
      revokeGrant: (id, by) => {
        revoked.push([id, by])
        return id === grant.id ? grant.rule : undefined
      },
    }
    const page = gatewayPage(gateway, { name: 'toolstack', version: '9', pid: 1, store: undefined, sessions: () => 3 })
    return { page, revoked }
  }

  it('revoke takes the grant back by its id, "from the page", and goes back to the page saying which', () => {
    const { page, revoked } = fake()
    const revoke = page.actions['grants/revoke']
    expect(revoke?.(new URLSearchParams({ id: grant.id }))).toBe(`/?revoked=${grant.id}`)
    expect(revoke?.(new URLSearchParams({ id: '<nope>' }))).toBe('/?revoked=none')
    expect(revoke?.(new URLSearchParams())).toBe('/?revoked=none')
    expect(revoked).toStrictEqual([
      [grant.id, 'from the page'],
      ['<nope>', 'from the page'],
      ['', 'from the page'],
    ])
  })

  it('says what an action did only from a grant id or "none": anything else in the link is not shown', () => {
    const { page } = fake()
    expect(page.render(new URLSearchParams({ revoked: grant.id }), 'c')).toContain(
      `role="status">The grant ${grant.id} was taken back: from every session that held it.</p>`,
    )
    expect(page.render(new URLSearchParams({ revoked: 'none' }), 'c')).toContain('No grant was taken back')
    const forged = page.render(new URLSearchParams({ revoked: 'Your token expired, go to evil.example' }), 'c')
    expect(forged).not.toContain('role="status"')
    expect(forged).not.toContain('evil.example')
    expect(page.render(new URLSearchParams(), 'c')).toContain('3 sessions open')
  })
})
