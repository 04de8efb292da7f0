// The door of an entry point whose framework is an optional peer (`loadEntry`, `requireEntry`), in process:
// the packed package's wrappers are driven in test/pack.test.ts, in another process, where no mutant lives. Here
// each is handed Node's own errors for a package that is not installed, by `import` and by `require`.
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import type { PeerOf } from '../../src/adapter/peers.js'
import { loadEntry, requireEntry } from '../../src/adapter/peers.js'

const ABSENT = 'toolstack-test-absent-peer'
const ANOTHER = 'toolstack-test-another-absent'
const require = createRequire(import.meta.url)
const OWN: PeerOf = { entry: 'toolstack/absent', imports: ABSENT, install: [ABSENT] }
const BROUGHT: PeerOf = { entry: 'toolstack/absent', imports: ABSENT, install: ['framework', 'its-core'] }

const caught = async (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  )
const thrown = (f: () => unknown): unknown => {
  try {
    f()
  } catch (e) {
    return e
  }
  return undefined
}
const install = (packages: string) => `npm install ${packages} (with a global toolstack: npm install -g ${packages})`

describe('loadEntry (import)', () => {
  it("the entry's value, the same object, when it loads", async () => {
    const value = { a: 1 }
    await expect(loadEntry(OWN, () => Promise.resolve(value))).resolves.toBe(value)
  })

  it('a missing peer: the entry point, the package and the command that installs it, with Node’s error as cause', async () => {
    const node = await caught(import(ABSENT))
    const e = await caught(loadEntry(OWN, () => import(ABSENT)))
    expect(e).toBeInstanceOf(Error)
    expect((e as Error).message).toBe(
      `toolstack/absent needs ${ABSENT}, which is not installed; install it: ${install(ABSENT)} (${(node as Error).message})`,
    )
    expect((e as Error).cause).toBeInstanceOf(Error)
    expect(((e as Error).cause as { code?: unknown }).code).toBe('ERR_MODULE_NOT_FOUND')
  })

  it('a peer brought by other packages: those are what to install', async () => {
    const e = await caught(loadEntry(BROUGHT, () => import(`${ABSENT}/sub`)))
    expect((e as Error).message).toMatch(
      new RegExp(
        `^toolstack/absent needs ${ABSENT} \\(from framework, its-core\\), which is not installed; install it: npm install framework its-core `,
      ),
    )
  })

  it('any other failure passes through as it came (the same object): a module that throws, another package missing', async () => {
    const boom = new Error('the module threw as it loaded')
    expect(await caught(loadEntry(OWN, () => Promise.reject(boom)))).toBe(boom)
    const other = await caught(import(ANOTHER))
    expect(await caught(loadEntry(OWN, () => Promise.reject(other)))).toBe(other)
    const text = 'not an error'
    expect(await caught(loadEntry(OWN, () => Promise.reject(text)))).toBe(text)
  })
})

describe('requireEntry (require)', () => {
  it("the entry's value, the same object, when it loads", () => {
    const value = { a: 1 }
    expect(requireEntry(OWN, () => value)).toBe(value)
  })

  it('a missing peer: the same words as by import, with Node’s CommonJS error as cause', () => {
    const node = thrown(() => require(ABSENT)) as Error
    const e = thrown(() => requireEntry(OWN, () => require(ABSENT))) as Error
    expect(e.message).toBe(
      `toolstack/absent needs ${ABSENT}, which is not installed; install it: ${install(ABSENT)} (${node.message})`,
    )
    expect((e.cause as { code?: unknown }).code).toBe('MODULE_NOT_FOUND')
  })

  it('any other failure passes through as it came (the same object)', () => {
    const boom = new Error('the module threw as it loaded')
    expect(
      thrown(() =>
        requireEntry(OWN, () => {
          throw boom
        }),
      ),
    ).toBe(boom)
    const other = thrown(() => require(ANOTHER))
    expect(
      thrown(() =>
        requireEntry(OWN, () => {
          throw other
        }),
      ),
    ).toBe(other)
  })
})
