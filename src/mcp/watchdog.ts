/**
 * A watchdog for the process groups of the servers this process started, for when it ends without ending them
 * itself: SIGKILL, a fatal signal, the kernel's OOM killer (no exit handler runs then). `connectStdio` (so the
 * gateway) and `toolstack proxy` watch each server they start.
 *
 * @since 0.1.0
 */
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'

// One `/bin/sh` per process watches every group: it reads `+PGID SECONDS` (watch) and `-PGID` (stop watching) lines
// from a pipe whose other end only this process holds, so its input ends when this process is gone, however it
// ended; it then sends each group still watched SIGTERM and, the longest grace later, SIGKILL. One watchdog, not one
// per group: each costs this process a file, and a gateway under its file limit needs every one it has left to
// restart an upstream (test/cli/serve-start.test.ts, under a limit of 128 files). No fork while it watches: the list
// is kept with the shell's own pattern expansion.
const SCRIPT = `groups=' '; grace=1
while IFS= read -r line; do
  case $line in
    +*) g=\${line%% *}; g=\${g#+}; s=\${line#* }; groups="$groups$g "; [ "$s" -gt "$grace" ] && grace=$s ;;
    -*) g=\${line#-}; case $groups in *" $g "*) groups="\${groups%% $g *} \${groups#* $g }" ;; esac ;;
  esac
done
[ "$groups" = ' ' ] && exit 0
for g in $groups; do kill -s TERM -- -$g 2>/dev/null; done
sleep $grace
for g in $groups; do kill -s KILL -- -$g 2>/dev/null; done`

// the watchdog while it runs: started at the first group watched, again if it was ended
let running: ChildProcess | undefined

const watchdog = (): ChildProcess => {
  if (running !== undefined) return running
  const child = spawn('/bin/sh', ['-c', SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'], detached: true })
  running = child
  // no /bin/sh, or a watchdog someone ended: what it watched is unwatched, and the next group starts another
  child.on('error', () => undefined)
  child.stdin?.on('error', () => undefined)
  child.on('exit', () => {
    if (running === child) running = undefined
  })
  // it holds nothing that keeps this process running
  child.unref()
  return child
}

/**
 * Watches the process group `pgid` (a server started `detached`: its pid): should this process end while the group
 * is watched, the group gets SIGTERM and, `graceMs` later (in whole seconds, at least one), SIGKILL. Returns `stop`,
 * for once this process has ended the group itself (a group id can be reused). Without a `/bin/sh`, nothing is
 * watched.
 *
 * @since 0.1.0
 */
export const watchGroup = (pgid: number, graceMs: number): (() => void) => {
  const dog = watchdog()
  dog.stdin?.write(`+${pgid} ${Math.max(1, Math.ceil(graceMs / 1000))}\n`)
  return () => void dog.stdin?.write(`-${pgid}\n`)
}
