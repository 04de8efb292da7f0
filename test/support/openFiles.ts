import { readdirSync, readlinkSync } from 'node:fs'

/** The descriptors this process holds open on anything under `dir` (Linux: read from /proc/self/fd). */
export const openUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      return target.startsWith(dir) ? [target] : []
    } catch {
      return [] // closed since the listing
    }
  })
