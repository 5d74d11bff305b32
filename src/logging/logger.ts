import { WorkerConfigurationError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
/** Severity of a log entry. */
export const LogLevel = { DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Structured JSON logger: one JSON object per line, as CloudWatch Logs Insights expects. */
export interface Logger {
  // A rest parameter, not an optional one: the Powertools Logger's methods take
  // `(input, ...extraInput)`, and only this form lets it be passed as it is.
  debug(message: string, ...fields: Record<string, unknown>[]): void;
  info(message: string, ...fields: Record<string, unknown>[]): void;
  warn(message: string, ...fields: Record<string, unknown>[]): void;
  error(message: string, ...fields: Record<string, unknown>[]): void;
  /**
   * A logger that adds `fields` to every entry. Optional, so that `console` and a Powertools Logger
   * fit as they are: without it, rerun adds the fields to each call's own (see `withFields`).
   */
  child?(fields: Record<string, unknown>): Logger;
}

/** A {@link Logger} whose `child` is always there: what {@link createLogger} and `withFields` return. */
export interface FieldLogger extends Logger {
  child(fields: Record<string, unknown>): FieldLogger;
}

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /**
   * The lowest level written.
   * @default the environment's `LOG_LEVEL` (what `RerunPipeline` and `rerun dev` set), else Lambda's
   * `AWS_LAMBDA_LOG_LEVEL`, else 'info'; either in any case (`WARN` or `warn`)
   */
  level?: LogLevel | undefined;
  /**
   * Where the default level is read (see `level`).
   * @default process.env
   */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * Where each JSON line goes, with the entry's level (e.g. to pick a console method).
   * @default writes to process.stdout
   */
  sink?: ((line: string, level: LogLevel) => void) | undefined;
  /** Fields added to every entry. @default {} */
  fields?: Record<string, unknown> | undefined;
  /**
   * The clock of each entry's `timestamp` (epoch ms).
   * @default Date.now
   */
  now?: (() => number) | undefined;
}

/** The names of {@link LoggerOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const LOGGER_OPTION_NAMES = {
  env: true,
  fields: true,
  level: true,
  now: true,
  sink: true,
} as const satisfies OptionNames<LoggerOptions>;

/**
 * Creates a structured logger. Every line carries `timestamp` (RFC 3339) and `level`: with the JSON
 * log format, Lambda files a line by its `level` only when it also has a valid timestamp, and files a
 * line without one at INFO, so a function log level of WARN would drop every line (Lambda developer
 * guide, "Log-level filtering"). An Error in the fields keeps its name, message, stack and cause.
 *
 * @example
 * const logger = createLogger({ fields: { worker: 'normalize' } });
 * logger.info('published', { key: 'normalized/a.ndjson' });
 */
export function createLogger(options: LoggerOptions = {}): FieldLogger {
  checkOptions('createLogger', options, LOGGER_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  const chosen = options.level === undefined ? levelFromEnvironment(options.env ?? process.env) : undefined;
  const level = options.level ?? chosen?.level ?? 'info';
  const logger = loggerAt(ORDER[level], { ...options, level });
  // Like the Powertools Logger: a level it cannot read falls back to info, said once, not thrown
  // (a typo in a function's settings must not stop every invocation).
  if (chosen?.unknown) logger.warn(`${chosen.unknown} is not a log level (debug, info, warn, error): logging at info`);
  return logger;
}

function loggerAt(min: number, options: LoggerOptions): FieldLogger {
  const sink = options.sink ?? ((line: string) => process.stdout.write(`${line}\n`));
  const base = options.fields ?? {};
  const now = options.now ?? Date.now;
  const write = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < min) return;
    const timestamp = new Date(now()).toISOString();
    sink(JSON.stringify({ timestamp, level, message, ...base, ...fields }, errorReplacer), level);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => loggerAt(min, { ...options, fields: { ...base, ...fields } }),
  };
}

/**
 * The level the environment asks for: `LOG_LEVEL`, else `AWS_LAMBDA_LOG_LEVEL` (Lambda's advanced
 * logging controls; it also has TRACE and FATAL, read here as debug and error).
 */
function levelFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): { level?: LogLevel; unknown?: string } | undefined {
  for (const name of ['LOG_LEVEL', 'AWS_LAMBDA_LOG_LEVEL']) {
    const value = env[name]?.trim().toLowerCase();
    if (!value) continue;
    const level = value === 'trace' ? 'debug' : value === 'fatal' ? 'error' : value;
    if (level in ORDER) return { level: level as LogLevel };
    return { unknown: `${name}=${env[name]}` };
  }
  return undefined;
}

/** A logger that drops everything (tests, quiet CLI modes). */
export const silentLogger: FieldLogger = createLogger({ sink: () => {} });

function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? describeError(value) : value;
}

/** How deep a chain of causes is followed (a cycle or a very long chain ends there). */
const MAX_CAUSE_DEPTH = 5;

/** A JSON-safe picture of an error. */
export interface ErrorDescription {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  /** S3/SDK error code or HTTP status, when the error has one. */
  readonly code?: string;
  readonly httpStatus?: number;
  readonly cause?: ErrorDescription | string;
}

/**
 * An error as data: name, message, stack, the SDK's code and HTTP status, and its cause chain, so
 * that logs and failure records keep where an error came from and why.
 *
 * @example
 * describeError(new Error('outer', { cause: new Error('inner') })).cause; // { name: 'Error', message: 'inner', ... }
 */
export function describeError(error: Error, depth = 0): ErrorDescription {
  const e = error as Error & { Code?: unknown; code?: unknown; $metadata?: { httpStatusCode?: number } };
  const code = typeof e.Code === 'string' ? e.Code : typeof e.code === 'string' ? e.code : undefined;
  const httpStatus = e.$metadata?.httpStatusCode;
  const cause = error.cause;
  return {
    name: error.name,
    message: error.message,
    ...(error.stack ? { stack: error.stack } : {}),
    ...(code ? { code } : {}),
    ...(typeof httpStatus === 'number' ? { httpStatus } : {}),
    ...(cause === undefined || depth >= MAX_CAUSE_DEPTH
      ? {}
      : { cause: cause instanceof Error ? describeError(cause, depth + 1) : String(cause) }),
  };
}
