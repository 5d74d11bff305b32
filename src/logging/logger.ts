/** Severity of a log entry. */
export const LogLevel = { DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Structured JSON logger: one JSON object per line, as CloudWatch Logs Insights expects. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every entry. */
  child(fields: Record<string, unknown>): Logger;
}

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** @default 'info' */
  level?: LogLevel;
  /** Where each JSON line goes. @default writes to process.stdout */
  sink?: (line: string) => void;
  /** Fields added to every entry. @default {} */
  fields?: Record<string, unknown>;
}

/**
 * Creates a structured logger.
 *
 * @example
 * const logger = createLogger({ fields: { worker: 'normalize' } });
 * logger.info('published', { key: 'normalized/a.ndjson' });
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const min = ORDER[options.level ?? 'info'];
  const sink = options.sink ?? ((line: string) => process.stdout.write(`${line}\n`));
  const base = options.fields ?? {};
  const write = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < min) return;
    sink(JSON.stringify({ level, message, ...base, ...fields }, errorReplacer));
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}

/** A logger that drops everything (tests, quiet CLI modes). */
export const silentLogger: Logger = createLogger({ sink: () => {} });

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}
