// Measuring on a noisy machine: every figure is a ratio of two things timed side by
// side, in interleaved rounds, and the median round wins. Absolute times are printed
// for orientation only.

export interface Target {
  readonly op: '<=' | '<' | '>='
  readonly value: number
}

export interface Figure {
  readonly name: string
  readonly value: number
  readonly unit: string
  readonly target?: Target
  readonly note?: string
}

export const now = (): bigint => process.hrtime.bigint()

export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

/** Times `f` once (it may be async), in nanoseconds. */
export const timeOnce = async (f: () => unknown): Promise<number> => {
  const t0 = now()
  const r = f()
  if (r instanceof Promise) await r
  return Number(now() - t0)
}

/**
 * Runs each of `contenders` once per round, in an order that rotates every round, and
 * hands each round's timings to `ratio`. Returns the median ratio.
 */
export const interleaved = async (
  rounds: number,
  prepare: () => void,
  contenders: ReadonlyArray<() => unknown>,
  ratio: (times: ReadonlyArray<number>) => number,
  warmup = Math.max(3, rounds >> 3),
): Promise<{ readonly ratio: number; readonly times: ReadonlyArray<number> }> => {
  const out: Array<number> = []
  const sums = contenders.map(() => [] as Array<number>)
  for (let r = 0; r < warmup + rounds; r++) {
    prepare()
    const times: Array<number> = new Array<number>(contenders.length).fill(0)
    for (let k = 0; k < contenders.length; k++) {
      const i = (k + r) % contenders.length
      times[i] = await timeOnce(contenders[i] as () => unknown)
    }
    if (r >= warmup) {
      out.push(ratio(times))
      times.forEach((t, i) => sums[i]?.push(t))
    }
  }
  return { ratio: median(out), times: sums.map(median) }
}

export const meets = (f: Figure, slack = 1): boolean =>
  f.target === undefined ||
  (f.target.op === '<='
    ? f.value <= f.target.value * slack
    : f.target.op === '<'
      ? f.value < f.target.value * slack
      : f.value >= f.target.value / slack)

export const render = (f: Figure, slack = 1): string => {
  const value = f.unit === 'ratio' ? f.value.toFixed(3) : f.value.toLocaleString('en-US', { maximumFractionDigits: 1 })
  const target =
    f.target === undefined
      ? ''
      : `  (target ${f.target.op} ${f.target.value}${slack === 1 ? '' : `, checked at ×${slack}`}: ${meets(f, slack) ? 'met' : 'MISSED'})`
  return `${f.name.padEnd(74)} ${value} ${f.unit === 'ratio' ? '' : f.unit}${target}${f.note === undefined ? '' : `\n${' '.repeat(4)}${f.note}`}`
}
