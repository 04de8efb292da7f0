// tryNotify: a notification a host may not be there to receive is sent once, and neither its throw nor its
// rejection reaches the caller or the process.
import { describe, expect, it } from 'vitest'
import { tryNotify } from '../../src/mcp/notify.js'

// the rejections no one handled while `run` and a few turns after it ran
const unhandledDuring = async (run: () => void): Promise<ReadonlyArray<unknown>> => {
  const seen: Array<unknown> = []
  const listener = (reason: unknown): void => void seen.push(reason)
  process.on('unhandledRejection', listener)
  try {
    run()
    for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 0))
  } finally {
    process.off('unhandledRejection', listener)
  }
  return seen
}

describe('tryNotify', () => {
  it('sends once', () => {
    let sent = 0
    tryNotify(async () => void sent++)
    expect(sent).toBe(1)
  })

  it('answers nothing when the send throws at once (no transport connected)', () => {
    expect(
      tryNotify(() => {
        throw new Error('Not connected')
      }),
    ).toBeUndefined()
  })

  it('leaves no rejection unhandled when the send fails later', async () => {
    const failed = new Error('the host went away')
    expect(await unhandledDuring(() => tryNotify(() => Promise.reject(failed)))).toEqual([])
    // the control: the same rejection, left alone, is seen
    expect(await unhandledDuring(() => void Promise.reject(failed))).toEqual([failed])
  })
})
