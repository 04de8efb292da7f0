/**
 * The `toolstack` command line: argument parsing, help, exit codes. Nothing runs at
 * import; `main` is called by the bin entry.
 *
 * One file: over 500 lines because every command's options, help text and examples are declared in one place,
 * so the help and the parsing cannot drift apart; each command's work is its own module.
 *
 * @since 0.1.0
 */
import { closeSync, openSync, writeFileSync } from 'node:fs'
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { paletteFor } from './color.js'
import { HOST_CONFIG } from './hostConfig.js'
import { cut, describeError, escapeControls, installCommand, isMissingPackage, jsonLine, shown } from './text.js'
import { readVersion } from './version.js'
// types only: the module, and the SDK it imports, load when an OTLP endpoint is set
import type { OtlpExport, OtlpSignals, startOtlp as StartOtlpFn } from './otlp.js'
type StartOtlp = typeof StartOtlpFn

// Subcommand modules are imported lazily: the library loads only for the command that needs it, and
// the proxy starts its server before loading it.

/** The exit statuses of the command (the proxy also ends with the server's own). @since 0.1.0 */
export const ExitCode = {
  ok: 0,
  warnings: 1,
  unusable: 2,
  /** The output was closed early (`… | head -n1`): 128 + SIGPIPE, as a Unix tool exits then. */
  outputClosed: 141,
} as const

const AUDIT_EXAMPLES = `
Input: request bodies of OpenAI chat completions ({ tools, messages } with
tool_calls), OpenAI Responses ({ tools, input } with function_call items) or
Anthropic Messages ({ tools, messages } with tool_use blocks), told apart record by
record; as one JSON document, a JSON array of them, or JSON Lines (one per line).
"-" reads stdin. Each call is counted once, however many later requests repeat it.

Examples:
  $ toolstack audit session.jsonl
  $ toolstack audit logs/*.jsonl --fail-on-warn      # for CI: exit 1 on a warning
  $ cat request.json | toolstack audit -
  $ toolstack audit --json session.jsonl | jq 'select(.type == "warning")'

Exit status, once every readable record is audited and the summary printed:
  0  ok
  1  a warning was raised, with --fail-on-warn
  2  a file or a record could not be read, or --fail-on-warn found nothing it
     could audit, or the command line was wrong (2 wins over 1)
  141  the output was closed early (as by head)
`

const PROXY_EXAMPLES = `
Runs COMMAND as a stdio MCP server and stands between it and the host: every byte
is forwarded unchanged, both ways; each tools/call is audited against the schemas
the server listed. Warnings go to stderr (or --log FILE), never to stdout.

Examples:
  $ toolstack proxy -- npx -y @modelcontextprotocol/server-filesystem DIR
  $ toolstack proxy --log /tmp/toolstack.log --name files --json -- node server.js

In a host's configuration (Claude Desktop's claude_desktop_config.json, and hosts
that read the same shape):
${HOST_CONFIG.replace(/^/gm, '  ')}

Exit status: the server's own (128+n when signal n ended it); 126/127 when it
cannot be started; 2 when the command line was wrong.
`

const SERVE_EXAMPLES = `
One MCP server in front of many: each upstream's tools under its prefix, every call
audited, a "reason" asked of the model, and the rules' "ask" put to the human through
the host (MCP elicitation). The configuration uses the mcpServers shape hosts use;
see docs/serve.md in the toolstack package (node_modules/toolstack/docs/serve.md
where it is installed).

Examples:
  $ toolstack serve --config toolstack.json
  $ TOOLSTACK_TOKEN=s3cret toolstack serve --config toolstack.json --http 127.0.0.1:8931
  $ toolstack serve --config toolstack.json --http 0.0.0.0:8931 --allowed-host mcp.example
  $ toolstack serve --config toolstack.json --watch
  $ toolstack serve --config toolstack.json --store file:/var/lib/toolstack/grants.json

SIGHUP (or, with --watch, writing the file) reloads the configuration: only the
upstreams whose entry changed are restarted; a bad file keeps the running one.

Exit status: 0 when ended by the host or a signal; 2 when it could not start (a bad
configuration, named by field; a port in use).
`

const CHECK_EXAMPLES = `
Reads the configuration as serve does and names every problem in it at once; when
it is valid, starts each upstream as serve would, lists its tools, and stops them
all. Nothing is served; the store is not opened and no log is written.

Examples:
  $ toolstack check toolstack.json
  $ toolstack check toolstack.json && toolstack serve --config toolstack.json

Exit status:
  0  the configuration is valid and every upstream listed its tools
  1  it is valid, but an upstream failed to start, did not list in time, or did
     not stop
  2  it cannot be read or is not a valid configuration (each problem a line)
`

const INIT_EXAMPLES = `
Writes a starter configuration for toolstack serve: tools whose names say they read
(read_*, list_*, get_*, search_*, find_*, describe_*, view_*) are allowed, and every
other call is asked about. Its upstreams come from COMMAND, from --from FILE, or
from the first host configuration found: .mcp.json, .cursor/mcp.json and
.vscode/mcp.json here, then Claude Desktop's claude_desktop_config.json, Cursor's
~/.cursor/mcp.json and Windsurf's ~/.codeium/windsurf/mcp_config.json. An entry
that runs "toolstack proxy -- SERVER" becomes SERVER. The file read must be plain
JSON (a leading BOM is skipped; comments and trailing commas are not read). A file
holding env or headers (tokens, as often as not) is written readable by you alone
(mode 600). An existing file is never replaced without --force, which keeps its
mode; the host configuration read is never replaced, even with --force.

Examples:
  $ toolstack init
  $ toolstack init --from ~/.cursor/mcp.json --out team.json
  $ toolstack init -- npx -y @modelcontextprotocol/server-filesystem /path/to/project
  $ toolstack init && toolstack check toolstack.json

Exit status: 0 written; 2 nothing written (nothing found or readable, the file
exists, or the command line was wrong).
`

const GRANTS_EXAMPLES = `
The human's "always" answers (grants) a store holds, each with its id; revoke takes
one back in the store, and every gateway on it stops using it (a file: store's
gateways read the file again, a redis:// store's are told at once), without a
restart.

Examples:
  $ toolstack grants list --store file:/var/lib/toolstack/grants.json
  $ toolstack grants revoke 3f2a9c0d1e7b6a55 --store redis://127.0.0.1:6379
  $ toolstack grants list --json --store 'redis://redis:6379/0?prefix=team-a:'

Exit status: 0 done; 1 no grant has that id; 2 the store cannot be opened or
reached (nothing changed), or the command line was wrong.
`

const PINS_EXAMPLES = `
The tool definitions the gateways on a store pinned, and the changed ones waiting for
an operator, each with its hash, what changed and its flags; accept makes a changed
definition its tool's pin in the store, and every gateway on it serves it again (a
file: store's gateways read the file again, a redis:// store's are told at once),
without a restart.

Examples:
  $ toolstack pins list --store file:/var/lib/toolstack/grants.json
  $ toolstack pins accept rg_notes_write sha256:4e07408562bedb8b60ce05c1decfe3ad16b72230967de01f640b7e4729b49fce --store redis://127.0.0.1:6379
  $ toolstack pins list --json --store 'redis://redis:6379/0?prefix=team-a:'

Exit status: 0 done; 1 no such changed definition waits; 2 the store cannot be
opened or reached (nothing changed), or the command line was wrong.
`

const MCP_SDK = '@modelcontextprotocol/sdk'

const collect = (value: string, previous: ReadonlyArray<string>): ReadonlyArray<string> => [...previous, value]

const wholeNumber =
  (min: number, max: number, expected: string) =>
  (value: string): number => {
    const n = Number(value)
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected ${expected}`)
    return n
  }

// A line is decoded into one string, and V8 strings are limited to 2^29 - 24 characters.
const MAX_LINE_BYTES = 0x1fffffe8

const maxLineOption = (what: string): Option =>
  new Option('--max-line-bytes <n>', `${what} (memory stays bounded by it)`)
    .default(64 * 1024 * 1024, '64 MiB')
    .argParser(wholeNumber(1, MAX_LINE_BYTES, `a whole number of bytes, from 1 to ${MAX_LINE_BYTES}`))

const tolerateOption = (): Option =>
  new Option('--tolerate <key>', 'never report this argument name, like "reason" (repeatable)')
    .default([] as ReadonlyArray<string>)
    .argParser(collect)

/** What the OTLP export loads, named in the message when one is missing. @since 0.1.0 */
export const OTLP_PACKAGES: ReadonlyArray<string> = [
  '@opentelemetry/api',
  '@opentelemetry/resources',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/exporter-metrics-otlp-http',
]

// whether the process `pid` runs (signal 0 only asks; EPERM: it runs, as another user's)
const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as { code?: unknown }).code === 'EPERM'
  }
}

const isSet = (env: NodeJS.ProcessEnv, name: string): boolean => (env[name] ?? '').trim() !== ''

// the exporters an OTEL_*_EXPORTER variable names (a comma-separated list, as the SDK reads it); undefined when unset
const exportersIn = (env: NodeJS.ProcessEnv, name: string): ReadonlyArray<string> | undefined => {
  const names = (env[name] ?? '')
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n !== '')
  return names.length === 0 ? undefined : [...new Set(names)]
}

/**
 * What the command exports, read from the environment as the OpenTelemetry SDK defines it:
 * - spans by `OTEL_TRACES_EXPORTER` (`otlp`, the default; `console`, written to stderr, since stdout is the MCP
 *   channel; `none`), counters by `OTEL_METRICS_EXPORTER` (`otlp`, the default; `none`);
 * - the default `otlp` exports only when an endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the signal's own
 *   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `…_METRICS_ENDPOINT`); named, it exports to the SDK's default endpoint;
 * - `none` wins over the names beside it; `OTEL_SDK_DISABLED=true` exports nothing; a name the command cannot export
 *   to (`zipkin`, `prometheus`, a console for counters) is in `ignored`, for a line that says so.
 * Nothing to export: the OpenTelemetry SDK is never loaded.
 *
 * @example
 * import { otlpSignals } from './program.js'
 * assert.deepStrictEqual(otlpSignals({}), { traces: [], metrics: false, ignored: [] })
 * assert.deepStrictEqual(otlpSignals({ OTEL_TRACES_EXPORTER: 'console' }), { traces: ['console'], metrics: false, ignored: [] })
 * assert.deepStrictEqual(otlpSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }), {
 *   traces: [],
 *   metrics: true,
 *   ignored: [],
 * })
 *
 * @since 0.1.0
 */
export const otlpSignals = (env: NodeJS.ProcessEnv): OtlpSignals & { readonly ignored: ReadonlyArray<string> } => {
  if ((env['OTEL_SDK_DISABLED'] ?? '').trim().toLowerCase() === 'true')
    return { traces: [], metrics: false, ignored: [] }
  const any = isSet(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')
  const tracesTo = exportersIn(env, 'OTEL_TRACES_EXPORTER')
  const metricsTo = exportersIn(env, 'OTEL_METRICS_EXPORTER')
  const traces =
    tracesTo === undefined
      ? any || isSet(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
        ? (['otlp'] as const)
        : []
      : tracesTo.includes('none')
        ? []
        : tracesTo.filter((n): n is 'otlp' | 'console' => n === 'otlp' || n === 'console')
  const metrics =
    metricsTo === undefined
      ? any || isSet(env, 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT')
      : !metricsTo.includes('none') && metricsTo.includes('otlp')
  const ignored = [
    ...(tracesTo ?? []).filter((n) => !['otlp', 'console', 'none'].includes(n)).map((n) => `OTEL_TRACES_EXPORTER=${n}`),
    ...(metricsTo ?? []).filter((n) => !['otlp', 'none'].includes(n)).map((n) => `OTEL_METRICS_EXPORTER=${n}`),
  ]
  return { traces, metrics, ignored }
}

/** Runs the command line `argv` (as `process.argv`) and returns the exit status. @since 0.1.0 */
export const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  const env = process.env
  const outColor = paletteFor(process.stdout.isTTY, env)
  const errColor = paletteFor(process.stderr.isTTY, env)
  const out = (line: string): void => {
    process.stdout.write(line + '\n')
  }
  const err = (line: string): void => {
    process.stderr.write(line + '\n')
  }
  // set once proxy or serve subscribes to signals (see startExport)
  let commandHandlesSignals = false
  // the export, only when the OTEL_* variables ask for one (otlpSignals): the SDK is loaded then, never otherwise
  const startExport = async (command: 'proxy' | 'serve'): Promise<OtlpExport | undefined> => {
    const signals = otlpSignals(env)
    if (signals.ignored.length > 0)
      err(
        `${errColor.red(`toolstack ${command}:`)} ${escapeControls(cut(signals.ignored.join(', '), 200))}: not an exporter this ` +
          'command has (spans: otlp, console, none; counters: otlp, none); ignored',
      )
    if (signals.traces.length === 0 && !signals.metrics) return undefined
    // the variable that asked for the export, named in a message
    const asked = ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER', 'OTEL_EXPORTER_OTLP_ENDPOINT']
      .concat(['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'])
      .filter((n) => isSet(env, n))
      .join(', ')
    let startOtlp: StartOtlp
    try {
      ;({ startOtlp } = await import('./otlp.js'))
    } catch (e) {
      err(
        `${errColor.red(`toolstack ${command}:`)} ${asked} is set, but the OpenTelemetry SDK could not be loaded ` +
          `(${describeError(e)}); install it: ${installCommand(OTLP_PACKAGES)}; going on without exporting`,
      )
      return undefined
    }
    try {
      const started = startOtlp(env, signals, `toolstack-${command}`, readVersion(argv[1]))
      // a host that closes stdin and sends SIGTERM soon after (the MCP SDK's client does, 2 s later) must not
      // cut the last export short: once the command handles signals, they stop it through its own handlers
      // only, and the stop is bounded (the export waits 5 s at most); before that, a signal ends it as ever
      const held: Array<() => void> = (['SIGINT', 'SIGTERM'] as const).map((signal) => {
        const hold = (): void => {
          if (commandHandlesSignals) return
          held.forEach((release) => release())
          process.kill(process.pid, signal)
        }
        process.on(signal, hold)
        return () => void process.off(signal, hold)
      })
      return {
        ...started,
        shutdown: () => started.shutdown().finally(() => held.forEach((release) => release())),
      }
    } catch (e) {
      // the SDK loaded but refused the settings (an OTEL_* variable it cannot use)
      err(
        `${errColor.red(`toolstack ${command}:`)} the OpenTelemetry export could not start (${describeError(e)}); ` +
          'check the OTEL_* variables; going on without exporting',
      )
      return undefined
    }
  }

  // a subcommand's module, or a line saying which package is missing and how to install it (the MCP SDK is a
  // dependency, so only a broken install lacks it)
  const loadCommand = async <A>(command: string, load: () => Promise<A>): Promise<A | undefined> => {
    try {
      return await load()
    } catch (e) {
      if (!isMissingPackage(e, MCP_SDK)) throw e
      err(
        `${errColor.red(`toolstack ${command}:`)} the MCP SDK (${MCP_SDK}) is missing from this install of toolstack ` +
          `(${describeError(e)}); install it: ${installCommand([MCP_SDK])}`,
      )
      return undefined
    }
  }

  let status: number = ExitCode.ok
  // Node ignores SIGPIPE: a closed reader shows up as EPIPE on the next write, so exit quietly as a
  // Unix tool killed by SIGPIPE would. proxy and serve remove this listener (stdout is their MCP channel).
  const outputClosed = (): void => process.exit(ExitCode.outputClosed)
  process.stdout.on('error', outputClosed)
  process.stderr.on('error', () => undefined)

  const program = new Command('toolstack')
    .description('Audit LLM tool calls for argument keys the tool never declared.')
    .version(readVersion(argv[1]), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => process.stdout.write(s),
      writeErr: (s) => process.stderr.write(s),
      outputError: (s, write) => write(errColor.red(s)),
    })
    .configureHelp({ styleTitle: (s) => outColor.bold(s) })
    .addHelpText(
      'after',
      `
Examples:
  $ toolstack audit session.jsonl --fail-on-warn
  $ toolstack proxy -- npx -y @modelcontextprotocol/server-filesystem DIR
  $ toolstack init -- npx -y @modelcontextprotocol/server-filesystem DIR
  $ toolstack check toolstack.json
  $ toolstack serve --config toolstack.json
  $ toolstack grants list --store file:grants.json
  $ toolstack pins list --store file:grants.json

Exit status: 0 ok; 1 warnings with --fail-on-warn, an upstream check failed, no
such grant or waiting definition; 2 unusable input or usage error; proxy: the
server's own.
`,
    )

  program
    .command('audit')
    .description('replay the audit over recorded LLM request bodies (OpenAI, Anthropic)')
    .argument('<files...>', 'JSON or JSON Lines files ("-" for stdin)')
    .option('--json', 'print JSON Lines (warnings, then one summary)', false)
    .option('--fail-on-warn', 'exit with status 1 when a warning was raised', false)
    .addOption(tolerateOption())
    .addOption(maxLineOption('a longer line, or a longer whole document, is a bad record'))
    .addHelpText('after', AUDIT_EXAMPLES)
    .action(
      async (
        files: ReadonlyArray<string>,
        opts: {
          readonly json: boolean
          readonly failOnWarn: boolean
          readonly tolerate: ReadonlyArray<string>
          readonly maxLineBytes: number
        },
      ) => {
        const { runAudit } = await import('./audit.js')
        status = await runAudit(
          files,
          { json: opts.json, failOnWarn: opts.failOnWarn, tolerate: opts.tolerate, maxLineBytes: opts.maxLineBytes },
          {
            stdin: process.stdin,
            out,
            err,
            outColor: opts.json ? paletteFor(false, env) : outColor,
            errColor,
          },
        )
      },
    )

  program
    .command('proxy')
    .description('run a stdio MCP server behind a transparent, auditing proxy')
    .usage('[options] -- COMMAND [ARGS...]')
    .argument('<command>', 'the server to run')
    .argument('[args...]', 'its arguments')
    .option('--log <file>', 'append warnings to FILE instead of stderr, each with its time and server')
    .option('--name <name>', 'name this server in --log records (default: its command line)')
    .option('--json', 'write warnings as JSON Lines', false)
    .addOption(tolerateOption())
    .addOption(
      new Option(
        '--grace <ms>',
        'the wait before SIGTERM once the host closed stdin, and before SIGKILL once a signal was sent',
      )
        .default(2000)
        .argParser(wholeNumber(0, Number.MAX_SAFE_INTEGER, 'a whole number of milliseconds')),
    )
    .addOption(maxLineOption('a longer line is forwarded but not audited'))
    .passThroughOptions()
    .addHelpText('after', PROXY_EXAMPLES)
    .action(
      async (
        command: string,
        args: ReadonlyArray<string>,
        opts: {
          readonly log?: string
          readonly name?: string
          readonly json: boolean
          readonly grace: number
          readonly tolerate: ReadonlyArray<string>
          readonly maxLineBytes: number
        },
      ) => {
        let fd: number | undefined
        if (opts.log !== undefined) {
          try {
            fd = openSync(opts.log, 'a')
          } catch (e) {
            err(
              `${errColor.red('toolstack proxy:')} cannot open log ${shown(JSON.stringify(opts.log))}: ${shown(describeError(e))}`,
            )
            status = ExitCode.unusable
            return
          }
        }
        const logFd = fd
        // A record the log file refuses (a full disk, a file gone read-only) goes to stderr instead, as it would
        // without --log, and the failure is said once: a failed write never throws into the forwarding, nothing
        // is lost, and the log is tried again for the next record.
        let toldLogFailed = false
        const toLogOrStderr = (file: number, line: string): void => {
          try {
            // after a short write, writeFileSync writes the rest: the line is whole in the log, or this throws
            writeFileSync(file, line + '\n')
          } catch (e) {
            if (!toldLogFailed) {
              toldLogFailed = true
              err(
                `${errColor.red('toolstack proxy:')} cannot write to the log ${shown(JSON.stringify(opts.log))} ` +
                  `(${shown(describeError(e))}): each record it does not take goes to stderr`,
              )
            }
            process.stderr.write(line + '\n')
          }
        }
        const server = opts.name ?? [command, ...args].join(' ')
        const warnColor = opts.json || logFd !== undefined ? paletteFor(false, env) : errColor
        process.stdout.off('error', outputClosed)
        const { runProxy } = await import('./proxy.js')
        const otlp = await startExport('proxy')
        try {
          status = await runProxy(
            command,
            args,
            { graceMs: opts.grace, tolerate: opts.tolerate, maxLineBytes: opts.maxLineBytes },
            {
              stdin: process.stdin,
              stdout: process.stdout,
              env,
              log: (record) => {
                try {
                  if (record.warning !== undefined) otlp?.warning(record.warning)
                } catch {
                  // an export failure must not affect forwarding, nor the record's line
                }
                // names, ids and keys come from the traffic: escape them for the terminal
                if (logFd === undefined)
                  return void process.stderr.write(
                    (opts.json ? jsonLine(record.fields) : warnColor.yellow(escapeControls(record.text))) + '\n',
                  )
                // a log may be shared: each record carries its time and server; a single write of a
                // whole line to a file opened for append is not interleaved with other writers
                const time = new Date().toISOString()
                const line = opts.json
                  ? jsonLine({
                      type: record.fields['type'],
                      time,
                      server,
                      command: [command, ...args],
                      ...record.fields,
                    })
                  : `${time} [${escapeControls(server)}] ${escapeControls(record.text)}`
                toLogOrStderr(logFd, line)
              },
              err: (line) => err(`${errColor.red('toolstack proxy:')} ${line}`),
              onSignal: (signal, handler) => {
                commandHandlesSignals = true
                process.on(signal, handler)
                return () => process.off(signal, handler)
              },
              onExit: (handler) => {
                process.once('exit', handler)
                return () => void process.off('exit', handler)
              },
            },
          )
        } finally {
          if (logFd !== undefined) closeSync(logFd)
          await otlp?.shutdown()
        }
      },
    )

  program
    .command('serve')
    .description('serve many MCP servers as one, with the audit, reasons and permissions')
    .requiredOption('--config <file>', 'the gateway configuration (JSON)')
    .option('--http <[host:]port>', 'serve Streamable HTTP instead of stdio (bearer token: $TOOLSTACK_TOKEN)')
    .option('--log <file>', "append JSON Lines records to FILE (instead of the configuration's log)")
    .option('--watch', 'reload the configuration when its file is written, as on SIGHUP')
    .option(
      '--store <url>',
      "what is remembered beyond a session: memory, file:PATH or redis://HOST:PORT (instead of the configuration's store)",
    )
    .addOption(
      new Option(
        '--allowed-host <name[:port]>',
        'with --http beyond loopback: a Host (and its Origins) to accept besides loopback (repeatable)',
      )
        .default([] as ReadonlyArray<string>, 'none')
        .argParser(collect),
    )
    .addOption(
      new Option(
        '--max-sessions <n>',
        'with --http: the most sessions open at once; more get 503 (default 1000)',
      ).argParser(wholeNumber(1, 1_000_000, 'a whole number of sessions, from 1 to 1000000')),
    )
    .addOption(
      new Option(
        '--idle-timeout <ms>',
        'with --http: close a session idle this long (default 1800000: 30 minutes)',
      ).argParser(wholeNumber(1000, 2_147_483_647, 'a whole number of milliseconds, from 1000 to 2147483647')),
    )
    .addOption(
      new Option(
        '--max-connections <n>',
        'with --http: the most connections open at once; more are closed at once (default: 3/4 of the open-file limit)',
      ).argParser(wholeNumber(1, 1_000_000, 'a whole number of connections, from 1 to 1000000')),
    )
    .option(
      '--no-resume',
      'with --http: streams a host cannot resume (no priming event, no events kept); a host cut off mid-call calls again',
    )
    .option('--quiet', 'say nothing on stderr but the start, a reload, and why it stops (the log still gets all)')
    .addHelpText('after', SERVE_EXAMPLES)
    .action(
      async (opts: {
        readonly config: string
        readonly http?: string
        readonly log?: string
        readonly allowedHost: ReadonlyArray<string>
        readonly maxSessions?: number
        readonly idleTimeout?: number
        readonly maxConnections?: number
        readonly resume: boolean
        readonly quiet?: boolean
        readonly watch?: boolean
        readonly store?: string
      }) => {
        // stdout is the MCP channel here: closed means the host is gone, not a reader; runServe stops then,
        // and a write still pending at the stop fails quietly
        process.stdout.off('error', outputClosed)
        process.stdout.on('error', () => undefined)
        const loaded = await loadCommand('serve', () => import('./serve.js'))
        if (loaded === undefined) return void (status = ExitCode.unusable)
        const { runServe } = loaded
        const { config, http, log, allowedHost: allowedHosts, maxSessions, idleTimeout: idleMs, watch, store } = opts
        const { maxConnections, quiet, resume: resumable } = opts
        const otlp = await startExport('serve')
        status = await runServe(
          { config, http, log, allowedHosts, maxSessions, idleMs, watch, store, maxConnections, quiet, resumable },
          {
            err,
            pid: process.pid,
            token: env['TOOLSTACK_TOKEN'],
            onSignal: (signal, handler) => {
              commandHandlesSignals = true
              process.on(signal, handler)
              return () => process.off(signal, handler)
            },
            onOutputClosed: (handler) => {
              process.stdout.on('error', handler)
              return () => process.stdout.off('error', handler)
            },
            version: readVersion(argv[1]),
            ...(otlp === undefined ? {} : { onRecord: otlp.record }),
          },
        ).finally(() => otlp?.shutdown())
      },
    )

  program
    .command('check')
    .description('check a serve configuration: every problem, then each upstream started, listed and stopped')
    .argument('<config>', 'the gateway configuration (JSON)')
    .option('--store <url>', "in place of the configuration's store (checked, not opened), as serve --store")
    .addHelpText('after', CHECK_EXAMPLES)
    .action(async (config: string, opts: { readonly store?: string }) => {
      const loaded = await loadCommand('check', () => import('./configCheck.js'))
      if (loaded === undefined) return void (status = ExitCode.unusable)
      status = await loaded.runCheck(config, opts.store, { out, version: readVersion(argv[1]), isRunning })
    })

  program
    .command('init')
    .description('write a starter serve configuration (read-only rules) from a host configuration or a command')
    .usage('[options] [-- COMMAND [ARGS...]]')
    .argument('[command...]', 'a server to serve, instead of the host configuration found')
    .option('--from <file>', 'the host configuration to read (an mcpServers file), instead of looking for one')
    .option('--out <file>', 'the file to write', 'toolstack.json')
    .option('--name <name>', 'with COMMAND: its name and prefix (default: from its package or command)')
    .option('--force', 'replace the file when it exists', false)
    .passThroughOptions()
    .addHelpText('after', INIT_EXAMPLES)
    .action(
      async (
        command: ReadonlyArray<string>,
        opts: { readonly from?: string; readonly out: string; readonly name?: string; readonly force: boolean },
      ) => {
        if (command.length > 0 && opts.from !== undefined) {
          err(`${errColor.red('toolstack init:')} give either --from FILE or a COMMAND, not both`)
          return void (status = ExitCode.unusable)
        }
        const loaded = await loadCommand('init', () => import('./init.js'))
        if (loaded === undefined) return void (status = ExitCode.unusable)
        const { homedir } = await import('node:os')
        status = loaded.runInit(
          { out: opts.out, force: opts.force, from: opts.from, command, name: opts.name },
          { out, err, home: homedir(), cwd: process.cwd(), platform: process.platform, env },
        )
      },
    )

  const grants = program
    .command('grants')
    .description('list the grants (the human\'s "always" answers) a store holds, or take one back')
    .addHelpText('after', GRANTS_EXAMPLES)
  const storeOption = (): Option =>
    new Option('--store <url>', 'the store the gateways share: file:PATH or redis://HOST:PORT').makeOptionMandatory()
  const runGrantsCommand = async (
    action: { readonly _tag: 'list' } | { readonly _tag: 'revoke'; readonly id: string },
    opts: { readonly store: string; readonly json?: boolean },
  ): Promise<void> => {
    const loaded = await loadCommand('grants', () => import('./grants.js'))
    if (loaded === undefined) return void (status = ExitCode.unusable)
    status = await loaded.runGrants(action, { store: opts.store, json: opts.json === true }, { out, err })
  }
  grants
    .command('list')
    .description('list the grants the store holds, each with its id')
    .addOption(storeOption())
    .option('--json', 'one JSON object per grant ({ id, tool, decision, under?, note? })', false)
    .action((opts: { readonly store: string; readonly json: boolean }) => runGrantsCommand({ _tag: 'list' }, opts))
  grants
    .command('revoke')
    .description('take back the grant with this id, in the store and every gateway on it')
    .argument('<id>', 'the id toolstack grants list shows')
    .addOption(storeOption())
    .action((id: string, opts: { readonly store: string }) => runGrantsCommand({ _tag: 'revoke', id }, opts))

  const pins = program
    .command('pins')
    .description('list the tool definitions a store pinned and the changes waiting, or accept one')
    .addHelpText('after', PINS_EXAMPLES)
  const runPinsCommand = async (
    action: { readonly _tag: 'list' } | { readonly _tag: 'accept'; readonly tool: string; readonly hash: string },
    opts: { readonly store: string; readonly json?: boolean },
  ): Promise<void> => {
    const loaded = await loadCommand('pins', () => import('./pins.js'))
    if (loaded === undefined) return void (status = ExitCode.unusable)
    status = await loaded.runPins(action, { store: opts.store, json: opts.json === true }, { out, err })
  }
  pins
    .command('list')
    .description('list the changed definitions waiting (with what changed), then the pins, each with its hash')
    .addOption(storeOption())
    .option('--json', 'one JSON object per line ({ state: "waiting" | "pinned", tool, hash, at, … })', false)
    .action((opts: { readonly store: string; readonly json: boolean }) => runPinsCommand({ _tag: 'list' }, opts))
  pins
    .command('accept')
    .description("make a changed definition its tool's pin, in the store and every gateway on it")
    .argument('<tool>', 'the tool, as toolstack pins list shows it')
    .argument('<hash>', 'the whole hash of the changed definition (sha256:…), as toolstack pins list shows it')
    .addOption(storeOption())
    .action((tool: string, hash: string, opts: { readonly store: string }) =>
      runPinsCommand({ _tag: 'accept', tool, hash }, opts),
    )

  try {
    await program.parseAsync([...argv])
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version are not errors
      return e.exitCode === 0 ? ExitCode.ok : ExitCode.unusable
    }
    err(`${errColor.red('toolstack:')} ${describeError(e)}`)
    return ExitCode.unusable
  }
  return status
}
