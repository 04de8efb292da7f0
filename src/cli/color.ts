/**
 * A tiny ANSI helper: colour only for a terminal, and never when `NO_COLOR` is set
 * (https://no-color.org: any non-empty value).
 *
 * @since 0.1.0
 */

/** The styles the command uses; each is the identity when colour is off. @since 0.1.0 */
export interface Palette {
  readonly enabled: boolean
  readonly bold: (s: string) => string
  readonly dim: (s: string) => string
  readonly red: (s: string) => string
  readonly yellow: (s: string) => string
  readonly cyan: (s: string) => string
}

const wrap =
  (open: number, close: number) =>
  (s: string): string =>
    `\u001b[${open}m${s}\u001b[${close}m`

const id = (s: string): string => s

/** The palette for a stream: colour only when `isTTY` and `NO_COLOR` is unset or empty. @since 0.1.0 */
export const paletteFor = (isTTY: boolean | undefined, env: Readonly<Record<string, string | undefined>>): Palette => {
  const noColor = env['NO_COLOR']
  const enabled = isTTY === true && (noColor === undefined || noColor === '')
  return enabled
    ? { enabled, bold: wrap(1, 22), dim: wrap(2, 22), red: wrap(31, 39), yellow: wrap(33, 39), cyan: wrap(36, 39) }
    : { enabled, bold: id, dim: id, red: id, yellow: id, cyan: id }
}
