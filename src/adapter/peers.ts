/**
 * The door of an entry point whose framework is an optional peer dependency: its modules import the framework
 * as they load, and Node's own error for a missing package names neither the entry point nor the command that
 * installs it. The build wraps each such entry point (`scripts/build.mjs`: `dist/esm/X/entry.js` awaits the real
 * one, `dist/cjs/X/entry.js` requires it) in `loadEntry` or `requireEntry`, which turn that error into one that
 * says both; any other failure passes through as it came.
 *
 * @since 0.1.0
 */
import { isMissingPackage, missingPackageError } from '../kernel/describe.js'

/**
 * What an entry point needs: the package whose absence it detects, and what to install for it (the framework's
 * own package, which may bring the detected one).
 *
 * @since 0.1.0
 * @category model
 */
export interface PeerOf {
  /** The entry point, as a user imports it (`toolstack/ai-sdk`). */
  readonly entry: string
  /** The package its modules import. */
  readonly imports: string
  /** The packages that install it. */
  readonly install: ReadonlyArray<string>
}

const explained = (peer: PeerOf, e: unknown): unknown =>
  isMissingPackage(e, peer.imports)
    ? missingPackageError(
        peer.entry,
        peer.imports === peer.install[0] ? peer.imports : `${peer.imports} (from ${peer.install.join(', ')})`,
        peer.install,
        e,
      )
    : e

/**
 * Loads an entry point by `import`; rejects with the command that installs its peer when that peer is missing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const loadEntry = async <A>(peer: PeerOf, load: () => Promise<A>): Promise<A> => {
  try {
    return await load()
  } catch (e) {
    throw explained(peer, e)
  }
}

/**
 * Loads an entry point by `require`; throws with the command that installs its peer when that peer is missing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const requireEntry = <A>(peer: PeerOf, load: () => A): A => {
  try {
    return load()
  } catch (e) {
    throw explained(peer, e)
  }
}
