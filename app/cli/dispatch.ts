import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type CliCommand, type CliIo, type CliOption, CliUsageError } from '../common/command.js';
import { missingPackageOf, OptionalPackageMissingError } from '../common/loadCloudFormation.js';
import { reportFailure } from '../common/reportFailure.js';
import { COMMANDS, type CommandEntry } from './commandMap.js';
import { helpWidth, reflowParagraphs, wrapWords } from './wrapText.js';

/**
 * Runs `rerun <command> [options]`: looks the command up in the command map (app/cli/commandMap.ts)
 * and loads only that one, rejects unknown options loudly, answers `--help` and `--version` on
 * stdout, reports a failure as every command does (app/common/reportFailure.ts), and returns the exit
 * code (0 ok, 1 failed, 2 usage error).
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), io);
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  commands: Readonly<Record<string, CommandEntry>> = COMMANDS,
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    // No command is a usage error: the help goes where errors go.
    io.stderr(globalHelp(commands));
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout(globalHelp(commands, io.columns).trimEnd());
    return 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    io.stdout(packageVersion());
    return 0;
  }
  const entry = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!entry) {
    io.stderr(`rerun: unknown command "${name}". Commands: ${Object.keys(commands).sort().join(', ')}.\n`);
    io.stderr('Run "rerun --help" for more.\n');
    return 2;
  }
  const command = await loadCommand(name, entry);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...rest],
      options: { ...parseOptions(command.options), help: { type: 'boolean', short: 'h' } },
      allowPositionals: command.allowPositionals ?? false,
      strict: true,
    });
  } catch (error) {
    io.stderr(`rerun ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    io.stderr(`Run "rerun ${name} --help" for the options.\n`);
    return 2;
  }
  if (parsed.values.help) {
    io.stdout(commandHelp(command, io.columns).trimEnd());
    return 0;
  }
  try {
    return await command.run({ values: parsed.values, positionals: parsed.positionals }, io);
  } catch (error) {
    if (error instanceof CliUsageError) {
      io.stderr(`rerun ${name}: ${error.message}\nRun "rerun ${name} --help" for the options.\n`);
      return 2;
    }
    // One way to fail for every command: what happened, what was looked at, what to do.
    return reportFailure(error, io, name, parsed.values.json === true);
  }
}

/**
 * The help of one command: synopsis, summary, visible options, details. With `columns` (a terminal's
 * width) the text is wrapped to fit it, at most 100 columns; without, it is as written.
 */
export function commandHelp(command: CliCommand, columns?: number): string {
  const rows = Object.entries(command.options)
    .filter(([, o]) => o.description !== undefined)
    .map(([flag, o]) => {
      const short = o.short ? `-${o.short}, ` : '';
      const value = o.type === 'string' ? ` ${o.valueName ?? 'VALUE'}` : '';
      return [`  ${short}--${flag}${value}`, o.description ?? ''] as const;
    });
  rows.push(['  -h, --help', 'Show this help'] as const);
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  const fit = helpWidth(columns);
  // A description too narrow beside the flags starts on the flag's next line, indented by 6.
  const besideFlags = fit !== undefined && fit - width >= 30;
  const options = rows
    .map(([left, text]) => {
      if (fit === undefined) return `${left.padEnd(width)}${text}`;
      if (besideFlags) return `${left.padEnd(width)}${wrapWords(text, fit - width, ' '.repeat(width)).join('\n')}`;
      return `${left}\n${wrapWords(text, fit - 6, ' '.repeat(6))
        .map((l, i) => (i === 0 ? `      ${l}` : l))
        .join('\n')}`;
    })
    .join('\n');
  const prose = (text: string) => (fit === undefined ? text : reflowParagraphs(text, fit));
  const details = command.details ? `\n${prose(command.details.trimEnd())}\n` : '';
  // Each synopsis (a usage of several lines gives one per line, aligned under the first) wraps on its own.
  const usage = `Usage: ${command.usage}`
    .split('\n')
    .map((line) => {
      if (fit === undefined) return line;
      const lead = /^\s*/.exec(line)?.[0] ?? '';
      return `${lead}${wrapWords(line, fit - lead.length, `${lead}    `).join('\n')}`;
    })
    .join('\n');
  return `${usage}\n\n${prose(command.summary)}\n\nOptions:\n${options}\n${details}`;
}

/**
 * `rerun --help`: the commands and their summaries, from the command map alone (no command is
 * loaded); with `columns`, each summary wrapped to fit.
 */
export function globalHelp(commands: Readonly<Record<string, CommandEntry>> = COMMANDS, columns?: number): string {
  const names = Object.keys(commands).sort();
  const width = Math.max(...names.map((n) => n.length)) + 4;
  const fit = helpWidth(columns);
  const summary = (n: string) => {
    const text = commands[n]?.summary ?? '';
    return fit === undefined ? text : wrapWords(text, fit - width, ' '.repeat(width)).join('\n');
  };
  const list = names.map((n) => `  ${n.padEnd(width - 2)}${summary(n)}`).join('\n');
  return (
    'rerun: retry-safe, resumable, redrivable S3 -> SQS -> Lambda pipelines.\n\n' +
    `Usage: rerun <command> [options]\n\nCommands:\n${list}\n\n` +
    'Run "rerun <command> --help" for a command\'s options,\n"rerun --version" for the version.\n'
  );
}

/**
 * The package's version, from its package.json: two folders up from app/cli/ in a checkout, three
 * from dist/app/cli/ in the installed package.
 */
export function packageVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'rerun-pipeline' && manifest.version) return manifest.version;
    } catch {
      // Not at this level: try the next one.
    }
  }
  throw new Error('rerun: package.json of rerun-pipeline not found beside the CLI.');
}

async function loadCommand(name: string, entry: CommandEntry): Promise<CliCommand> {
  const { command } = await entry.load().catch((error: unknown) => {
    // An optional peer a command imports (client-dynamodb for `rerun dev`'s ledger): say which, and how.
    const missing = missingPackageOf(error);
    if (missing === undefined) throw error;
    throw new OptionalPackageMissingError(
      `rerun ${name} needs ${missing}, which is not installed: npm install ${missing}`,
      { cause: error },
    );
  });
  if (!command || typeof command.run !== 'function' || command.name !== name) {
    throw new Error(`app/cli/commands/${name}.ts must export \`command\` (a CliCommand) named "${name}".`);
  }
  return command;
}

/** parseArgs rejects keys it does not know: strip the help-only fields. */
function parseOptions(options: Readonly<Record<string, CliOption>>) {
  return Object.fromEntries(
    Object.entries(options).map(([flag, { description: _d, valueName: _v, ...rest }]) => [flag, rest]),
  );
}
