/**
 * The page a gateway serves at `GET /` over HTTP: its upstreams and their tools, what the alarm heard, the guard's
 * latest decisions and questions, the definitions waiting for an operator, each changed one with a button that
 * accepts it, and the grants, each with a button that takes it back. One HTML document with
 * its style inline: no script, nothing from another site, readable in a browser with scripts off; the buttons are
 * plain forms (a POST carrying the page's CSRF token). Every text a model or an upstream chose is cut, its control
 * and invisible characters written as `\uXXXX`, then HTML-escaped.
 *
 * @since 0.1.0
 */
import { cut, escapeControls } from '../kernel/describe.js'
import { drawRule } from '../steps/policy/Rule.js'
import { HASH_PATTERN, shortHash } from '../steps/pins/Canonical.js'
import { drawChange } from '../steps/pins/Diff.js'
import { drawFlag } from '../steps/pins/Flags.js'
import type { DefinitionStanding, Gateway, GatewayUpstreamStatus, HeldGrant } from './gateway.js'
import type { Heard, Pending, RecentDecision } from './heard.js'
import type { HttpPage } from '../mcp/serve.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the page shows.
 *
 * @since 0.1.0
 * @category model
 */
export interface PageData {
  readonly name: string
  readonly version: string
  /** The process's id (SIGHUP reloads it). */
  readonly pid: number
  /** What the store is (`memory`, `file:…`, `redis://…` without its password), or none. */
  readonly store: string | undefined
  readonly sessions: number
  readonly upstreams: ReadonlyArray<GatewayUpstreamStatus>
  readonly heard: Heard
  readonly recent: ReadonlyArray<RecentDecision>
  readonly pending: Pending
  readonly grants: ReadonlyArray<HeldGrant>
  /** Each tool's definition standing (`Gateway.definitions`); the page shows those waiting (see `waitingDefinitions`). */
  readonly definitions: ReadonlyArray<DefinitionStanding>
  /** A line to show first, after an action (already in plain words; escaped here). */
  readonly notice?: string
  /** When it was drawn (ms since the epoch). */
  readonly now: number
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const HTML: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/**
 * Text as HTML: cut at `max` characters, control and invisible characters as `\uXXXX`, then `& < > " '` escaped.
 *
 * @example
 * import { htmlText } from 'toolstack/gateway'
 * assert.strictEqual(htmlText('<b onclick="x">\u202e'), '&lt;b onclick=&quot;x&quot;&gt;\\u202e')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const htmlText = (s: string, max = 200): string =>
  escapeControls(cut(s, max)).replace(/[&<>"']/g, (c) => HTML[c] ?? c)

const time = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z')

const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, empty: string): string =>
  rows.length === 0
    ? `<p class="none">${empty}</p>`
    : `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>` +
      rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('') +
      '</tbody></table>'

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:70rem;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #eee;vertical-align:top}
code{font-family:ui-monospace,monospace;word-break:break-all}.none{color:#666}
.up{color:#17692c}.down{color:#a11}.starting{color:#8a5a00}.notice{background:#eef6ff;padding:.5rem;border-radius:4px}
button{cursor:pointer}`

const upstreamsOf = (ups: ReadonlyArray<GatewayUpstreamStatus>): string =>
  table(
    ['upstream', 'prefix', 'state', 'pid', 'tools', 'restarts', 'last problem'],
    ups.map((u) => [
      htmlText(u.name),
      `<code>${htmlText(u.prefix)}</code>`,
      `<span class="${htmlText(u.state)}">${htmlText(u.state)}</span>${u.required ? '' : ' (not required)'}`,
      u.pid === undefined ? '' : String(u.pid),
      String(u.tools.length),
      String(u.restarts),
      u.why === undefined ? '' : htmlText(u.why, 500),
    ]),
    'No upstream.',
  )

// an upstream chooses how many tools it lists: the page names the first MAX_TOOLS_SHOWN of each
const MAX_TOOLS_SHOWN = 500

const toolsOf = (ups: ReadonlyArray<GatewayUpstreamStatus>): string =>
  ups
    .map(
      (u) =>
        `<details${u.tools.length <= 30 ? ' open' : ''}><summary>${htmlText(u.name)}: ${u.tools.length} tools</summary>` +
        table(
          ['tool', 'description'],
          u.tools
            .slice(0, MAX_TOOLS_SHOWN)
            .map((t) => [`<code>${htmlText(t.name)}</code>`, htmlText(t.description ?? '', 300)]),
          'None listed (yet).',
        ) +
        (u.tools.length > MAX_TOOLS_SHOWN ? `<p>And ${u.tools.length - MAX_TOOLS_SHOWN} more.</p>` : '') +
        '</details>',
    )
    .join('')

const heardOf = (heard: Heard): string =>
  table(
    ['tool', 'undeclared key', 'did you mean', 'calls', 'first call', 'upstream', 'first heard'],
    [...heard.pairs.values()].map((p) => [
      `<code>${htmlText(p.tool)}</code>`,
      `<code>${htmlText(p.key)}</code>`,
      p.didYouMean === undefined ? '' : `<code>${htmlText(p.didYouMean)}</code>`,
      String(p.calls),
      `<code>${htmlText(p.firstId)}</code>`,
      htmlText(p.upstream),
      time(p.first),
    ]),
    'Nothing yet: no call carried a key its tool does not declare.',
  ) + (heard.others === 0 ? '' : `<p>And ${heard.others} more pairs, past the ${heard.pairs.size} kept.</p>`)

const WHO: Readonly<Record<RecentDecision['by'], string>> = {
  rules: 'the rules',
  grant: 'a grant',
  human: 'the human (asked)',
  nobody: 'no one could be asked',
  unlisted: 'no such tool listed',
}

const recentOf = (recent: ReadonlyArray<RecentDecision>): string =>
  table(
    ['time', 'tool', 'call', 'outcome', 'by', 'why'],
    [...recent]
      .reverse()
      .map((d) => [
        time(d.time),
        `<code>${htmlText(d.tool)}</code>`,
        `<code>${htmlText(d.id)}</code>`,
        d.outcome,
        WHO[d.by],
        d.refusal === undefined ? '' : htmlText(d.refusal),
      ]),
    'No decision yet.',
  )

const pendingOf = (pending: Pending): string =>
  table(
    ['asked at', 'tool', 'call', 'upstream', 'locations'],
    [...pending.questions.values()].map((q) => [
      time(q.since),
      `<code>${htmlText(q.tool)}</code>`,
      `<code>${htmlText(q.id)}</code>`,
      htmlText(q.upstream),
      q.paths.map((p) => `<code>${htmlText(p)}</code>`).join('<br>'),
    ]),
    'None: no human is being asked anything.',
  ) + (pending.others === 0 ? '' : `<p>And ${pending.others} more questions open.</p>`)

/**
 * The definitions that wait for an operator: each that changed since its pin (held, refused, or served as it comes:
 * its change waits to be accepted all the same), and each that is flagged; in the order given.
 *
 * @example
 * import { waitingDefinitions } from 'toolstack/gateway'
 * const same = { tool: 'add', upstream: 'm', hash: 'sha256:a', pinned: 'sha256:a', flags: [] }
 * const change = { added: ['to'], removed: [], more: 0, schemaOtherwise: false, annotations: [] }
 * const held = { ...same, tool: 'search', hash: 'sha256:b', action: 'hold' as const, change }
 * assert.deepStrictEqual(waitingDefinitions([same, held]), [held])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const waitingDefinitions = (standings: ReadonlyArray<DefinitionStanding>): ReadonlyArray<DefinitionStanding> =>
  standings.filter((s) => s.change !== undefined || s.flags.length > 0)

// an upstream chooses how many annotations and flagged texts a definition has: a row shows the first of each
const MAX_LINES_SHOWN = 20

const FOLLOWS: Readonly<Record<NonNullable<DefinitionStanding['action']>, string>> = {
  warn: 'served as it comes',
  hold: 'hidden until accepted',
  refuse: 'listed as pinned, its calls refused until accepted',
}

const definitionsOf = (standings: ReadonlyArray<DefinitionStanding>, csrf: string): string => {
  const waiting = waitingDefinitions(standings)
  return (
    table(
      ['tool', 'upstream', 'what follows', 'what changed', 'flags', 'accept it'],
      waiting.slice(0, MAX_TOOLS_SHOWN).map((s) => [
        `<code>${htmlText(s.tool)}</code>`,
        htmlText(s.upstream),
        s.action === undefined ? 'served (unchanged)' : FOLLOWS[s.action],
        s.change === undefined
          ? ''
          : [
              `pinned <code>${htmlText(s.pinned === undefined ? 'none' : shortHash(s.pinned))}</code>, ` +
                `now <code>${htmlText(shortHash(s.hash))}</code>`,
              ...drawChange(s.change)
                .slice(0, MAX_LINES_SHOWN)
                .map((line) => htmlText(line, 1000)),
            ].join('<br>'),
        s.flags
          .slice(0, MAX_LINES_SHOWN)
          .map((f) => htmlText(drawFlag(f), 500))
          .join('<br>'),
        s.change === undefined
          ? ''
          : `<form method="post" action="/definitions/accept"><input type="hidden" name="csrf" value="${htmlText(csrf)}">` +
            `<input type="hidden" name="hash" value="${htmlText(s.hash, 100)}"><button type="submit">Accept</button></form>`,
      ]),
      'None: no definition changed since it was pinned, and none is flagged.',
    ) + (waiting.length > MAX_TOOLS_SHOWN ? `<p>And ${waiting.length - MAX_TOOLS_SHOWN} more.</p>` : '')
  )
}

const grantsOf = (grants: ReadonlyArray<HeldGrant>, csrf: string): string =>
  table(
    ['grant', 'held by', 'take it back'],
    grants.map((g) => [
      `<code>${htmlText(drawRule(g.rule), 1000)}</code>`,
      g.stored
        ? `the store${g.sessions === 0 ? '' : ` (answered in ${g.sessions} open sessions)`}`
        : `${g.sessions} sessions`,
      `<form method="post" action="/grants/revoke"><input type="hidden" name="csrf" value="${htmlText(csrf)}">` +
        `<input type="hidden" name="id" value="${htmlText(g.id)}"><button type="submit">Revoke</button></form>`,
    ]),
    'No grant: no "always" answer is held.',
  )

/**
 * The page's HTML, from what it shows and the CSRF token its forms send back.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const renderPage = (d: PageData, csrf: string): string =>
  '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
  '<meta name="viewport" content="width=device-width, initial-scale=1">' +
  `<title>${htmlText(d.name)} serve</title><style>${STYLE}</style></head><body>` +
  `<h1>${htmlText(d.name)} serve ${htmlText(d.version)}</h1>` +
  (d.notice === undefined ? '' : `<p class="notice" role="status">${htmlText(d.notice, 1000)}</p>`) +
  `<p>pid ${d.pid} · ${d.sessions} sessions open · store: ` +
  (d.store === undefined ? 'none (each session keeps its own grants)' : `<code>${htmlText(d.store)}</code>`) +
  ` · drawn ${time(d.now)} · <a href="/">refresh</a></p>` +
  `<h2 id="upstreams">Upstreams</h2>${upstreamsOf(d.upstreams)}` +
  `<h2 id="tools">Tools</h2>${toolsOf(d.upstreams)}` +
  `<h2 id="heard">What the alarm heard</h2>${heardOf(d.heard)}` +
  `<h2 id="questions">Questions waiting for an answer</h2>${pendingOf(d.pending)}` +
  `<h2 id="decisions">Recent decisions</h2>${recentOf(d.recent)}` +
  `<h2 id="definitions">Definitions waiting</h2>${definitionsOf(d.definitions, csrf)}` +
  `<h2 id="grants">Grants</h2>${grantsOf(d.grants, csrf)}` +
  '</body></html>'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The actions of `gatewayPage` (`POST /NAME`), for a server that routes them before the gateway has started.
 *
 * @since 0.1.0
 * @category constructors
 */
export const GATEWAY_PAGE_ACTIONS = ['grants/revoke', 'definitions/accept'] as const

// what an acceptance says, from a link anyone could make: only a hash that is a tool's pin now, named with its tool,
// or that none was accepted
const acceptedNotice = (
  accepted: string,
  definitions: ReadonlyArray<DefinitionStanding>,
  stored: boolean,
): string | undefined => {
  if (accepted === 'none')
    return 'No definition was accepted: it was not waiting (any more: accepted already, or changed again).'
  const standing = HASH_PATTERN.test(accepted)
    ? definitions.find((s) => s.hash === accepted && s.pinned === accepted)
    : undefined
  return standing === undefined
    ? undefined
    : `The definition ${shortHash(accepted)} of ${JSON.stringify(standing.tool)} was accepted: it is the tool's pin now` +
        `${stored ? ', in the store for every gateway on it,' : ''} and the tool is served again.`
}

/**
 * The page of a running gateway, for `serveHttp`'s `page`: drawn from the gateway at each request, and its two
 * actions, each coming back to the page saying what it did: `POST /grants/revoke` with a grant's `id` takes the
 * grant back (`Gateway.revokeGrant`), and `POST /definitions/accept` with a changed definition's `hash` makes it its
 * tool's pin (`Gateway.acceptDefinition`), so a held tool is served again.
 *
 * @since 0.1.0
 * @category constructors
 */
export const gatewayPage = (
  gateway: Pick<
    Gateway,
    'status' | 'heard' | 'recent' | 'pending' | 'grants' | 'revokeGrant' | 'definitions' | 'acceptDefinition'
  >,
  about: {
    readonly name: string
    readonly version: string
    readonly pid: number
    readonly store: string | undefined
    readonly sessions: () => number
  },
): HttpPage & {
  readonly actions: Readonly<Record<(typeof GATEWAY_PAGE_ACTIONS)[number], HttpPage['actions'][string]>>
} => ({
  render: (query, csrf) => {
    // what an action says, from a link anyone could make: only a grant's id, or that none was taken back
    const revoked = query.get('revoked') ?? ''
    const definitions = gateway.definitions()
    const notice = /^[0-9a-f]{16}$/.test(revoked)
      ? `The grant ${revoked} was taken back: ${about.store === undefined ? '' : 'from the store, and '}from every session that held it.`
      : revoked === 'none'
        ? 'No grant was taken back: it was not held (any more).'
        : acceptedNotice(query.get('accepted') ?? '', definitions, about.store !== undefined)
    return renderPage(
      {
        ...about,
        sessions: about.sessions(),
        upstreams: gateway.status(),
        heard: gateway.heard(),
        recent: gateway.recent(),
        pending: gateway.pending(),
        grants: gateway.grants(),
        definitions,
        now: Date.now(),
        ...(notice === undefined ? {} : { notice }),
      },
      csrf,
    )
  },
  actions: {
    'grants/revoke': (form) => {
      const id = form.get('id') ?? ''
      return gateway.revokeGrant(id, 'from the page') === undefined ? '/?revoked=none' : `/?revoked=${id}`
    },
    // the form names the definition by its hash alone (a tool's name need not survive being written into HTML); the
    // tool is the one listed with it now, so what is accepted is what the operator saw
    'definitions/accept': async (form) => {
      const hash = form.get('hash') ?? ''
      const standing = gateway.definitions().find((s) => s.hash === hash && s.change !== undefined)
      if (standing === undefined) return '/?accepted=none'
      const accepted = await gateway.acceptDefinition(standing.tool, hash)
      return accepted._tag === 'Right' ? `/?accepted=${hash}` : '/?accepted=none'
    },
  },
})
