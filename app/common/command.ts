import type { ParseArgsConfig } from 'node:util';

/** Parsed option values, as `node:util` parseArgs returns them. */
export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** What a command gets besides its arguments: the edges of the process, injectable for tests. */
export interface CliIo {
  /**
   * A command's result, one line (or block of lines) per call, a trailing newline added: help, the
   * operator commands' tables, JSON with --json, READY/SUMMARY lines. What `rerun status | less` shows.
   */
  stdout(line: string): void;
  /** Text for people while a command runs: progress, notes, errors. Written as given. */
  stderr(text: string): void;
  /** The environment, read only here at the edge. */
  env: NodeJS.ProcessEnv;
  /** Whether stderr is a terminal (progress then updates one line in place). */
  isTTY: boolean;
  /** The width of the terminal stderr writes to, when it is one: a progress line redrawn in place is cut to fit it. */
  stderrColumns?: number | undefined;
  /** The width of the terminal stdout writes to, when it is one: help is wrapped to fit it. */
  columns?: number | undefined;
  /** Aborts on the first SIGINT/SIGTERM. */
  signal: AbortSignal;
}

/**
 * One `rerun` subcommand. Adding a command is adding a file `app/cli/commands/<name>.ts` that exports
 * `command` with the same `name`, and its line in app/cli/commandMap.ts: the dispatcher loads it
 * when it runs, adds `--help`, and rejects unknown options before `run` is called.
 *
 * @example
 * export const command: CliCommand = {
 *   name: 'hello',
 *   summary: 'Say hello',
 *   usage: 'rerun hello [--loud]',
 *   options: { loud: { type: 'boolean', description: 'Shout' } },
 *   async run({ values }, io) { io.stderr(values.loud ? 'HELLO\n' : 'hello\n'); return 0; },
 * };
 */
export interface CliCommand {
  /** The subcommand, equal to its file name. */
  readonly name: string;
  /** One line for `rerun --help`. */
  readonly summary: string;
  /** The synopsis line of `rerun <name> --help`. */
  readonly usage: string;
  /** Extra help text after the options (examples, notes). */
  readonly details?: string;
  /** parseArgs options, each with a `description` for the help (omit it to leave an option out of the help). */
  readonly options: Readonly<Record<string, CliOption>>;
  /** @default false */
  readonly allowPositionals?: boolean;
  /** Runs the command; resolves with the process exit code. */
  run(args: { values: OptionValues; positionals: string[] }, io: CliIo): Promise<number>;
}

/** A parseArgs option plus its help text. */
export type CliOption = NonNullable<ParseArgsConfig['options']>[string] & {
  /** Shown in `--help`; options without one are hidden (they still parse). */
  readonly description?: string;
  /** Placeholder shown for string options, e.g. `SECONDS`. */
  readonly valueName?: string;
};

/** A command line that cannot be run as given (unknown option, bad value). Exit code 2. */
export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}

/**
 * Reads an integer option, refusing anything else with the option's name and range.
 *
 * @example
 * const seconds = integerOption(values, 'visibility-timeout', { min: 0, max: 43_200 });
 */
export function integerOption(
  values: OptionValues,
  name: string,
  range: { min: number; max: number },
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < range.min || n > range.max) {
    throw new CliUsageError(`--${name} must be an integer from ${range.min} to ${range.max} (got "${String(raw)}").`);
  }
  return n;
}

/**
 * Writes a block of a command's result (a table, a plan, a closing count) to stdout, without its
 * trailing newline (io.stdout adds one); an empty block writes nothing.
 *
 * @example
 * writeResult(io, formatStatusTable(report.partitions));
 */
export function writeResult(io: Pick<CliIo, 'stdout'>, text: string): void {
  const block = text.replace(/\n$/, '');
  if (block !== '') io.stdout(block);
}
