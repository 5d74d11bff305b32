import { readdir } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type CliCommand, type CliIo, type CliOption, CliUsageError } from './command.js';
import { reportFailure } from './reportFailure.js';

const DEFAULT_COMMANDS_DIR = fileURLToPath(new URL('./commands/', import.meta.url));
const COMMAND_FILE = /^[a-z][a-z0-9-]*\.(ts|js|mjs)$/;

/**
 * Runs `rerun <command> [options]`: finds `app/cli/commands/<command>.ts`, rejects unknown options
 * loudly, answers `--help`, reports a failure as every command does (app/cli/reportFailure.ts), and
 * returns the exit code (0 ok, 1 failed, 2 usage error).
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), io);
 */
export async function runCli(argv: readonly string[], io: CliIo, commandsDir = DEFAULT_COMMANDS_DIR): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stderr(await globalHelp(commandsDir));
    return name === undefined ? 2 : 0;
  }
  const files = await commandFiles(commandsDir);
  const file = files.find((f) => basename(f, extname(f)) === name);
  if (!file) {
    io.stderr(`rerun: unknown command "${name}". Commands: ${files.map((f) => basename(f, extname(f))).join(', ')}.\n`);
    io.stderr('Run "rerun --help" for more.\n');
    return 2;
  }
  const command = await loadCommand(commandsDir, file);
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
    io.stderr(commandHelp(command));
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

/** The help of one command: synopsis, summary, visible options, details. */
export function commandHelp(command: CliCommand): string {
  const rows = Object.entries(command.options)
    .filter(([, o]) => o.description !== undefined)
    .map(([flag, o]) => {
      const short = o.short ? `-${o.short}, ` : '';
      const value = o.type === 'string' ? ` ${o.valueName ?? 'VALUE'}` : '';
      return [`  ${short}--${flag}${value}`, o.description ?? ''] as const;
    });
  rows.push(['  -h, --help', 'Show this help'] as const);
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  const options = rows.map(([left, text]) => `${left.padEnd(width)}${text}`).join('\n');
  return `Usage: ${command.usage}\n\n${command.summary}\n\nOptions:\n${options}\n${command.details ? `\n${command.details.trimEnd()}\n` : ''}`;
}

async function globalHelp(commandsDir: string): Promise<string> {
  const commands = await Promise.all((await commandFiles(commandsDir)).map((f) => loadCommand(commandsDir, f)));
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  const list = commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join('\n');
  return (
    'rerun: retry-safe, resumable, redrivable S3 -> SQS -> Lambda pipelines.\n\n' +
    `Usage: rerun <command> [options]\n\nCommands:\n${list}\n\nRun "rerun <command> --help" for a command's options.\n`
  );
}

async function commandFiles(commandsDir: string): Promise<string[]> {
  const names = await readdir(commandsDir).catch(() => [] as string[]);
  return names.filter((n) => COMMAND_FILE.test(n) && !n.endsWith('.d.ts')).sort();
}

async function loadCommand(commandsDir: string, file: string): Promise<CliCommand> {
  const module = (await import(pathToFileURL(`${commandsDir}/${file}`).href)) as { command?: CliCommand };
  const command = module.command;
  const expected = basename(file, extname(file));
  if (!command || typeof command.run !== 'function' || command.name !== expected) {
    throw new Error(`app/cli/commands/${file} must export \`command\` (a CliCommand) named "${expected}".`);
  }
  return command;
}

/** parseArgs rejects keys it does not know: strip the help-only fields. */
function parseOptions(options: Readonly<Record<string, CliOption>>) {
  return Object.fromEntries(
    Object.entries(options).map(([flag, { description: _d, valueName: _v, ...rest }]) => [flag, rest]),
  );
}
