/**
 * The gateway's configuration file as `serve`, `check` and `init` read it: one reading, so the three agree on what
 * a valid file is.
 *
 * @since 0.1.0
 */
import { readFileSync } from 'node:fs'
import type { GatewayConfig } from '../gateway/index.js'
import { decodeGatewayConfig } from '../gateway/index.js'

/**
 * The configuration file read and checked (with `store`, when given, in place of its own): every problem, each a
 * line naming the file, or the configuration.
 *
 * @since 0.1.0
 */
export const readConfig = (
  file: string,
  store?: string,
): { readonly problems: ReadonlyArray<string> } | { readonly config: GatewayConfig } => {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    return { problems: [`cannot read the configuration ${JSON.stringify(file)}: ${(e as Error).message}`] }
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return { problems: [`${file} is not JSON: ${(e as Error).message}`] }
  }
  const config = decodeGatewayConfig(
    store === undefined || typeof json !== 'object' || json === null || Array.isArray(json) ? json : { ...json, store },
  )
  return config._tag === 'Left'
    ? { problems: config.left.split('\n').map((l) => `${file}: ${l}`) }
    : { config: config.right }
}
