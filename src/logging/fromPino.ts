import { describeError, type Logger } from './logger.js';

/** The part of a pino logger that {@link fromPino} uses; rerun does not depend on pino. */
export interface PinoLike {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
  child(bindings: Record<string, unknown>): PinoLike;
}

/**
 * A {@link Logger} that logs through pino. pino's call shape is `(fields, message)`: called as
 * `logger.info(message, fields)` it takes the fields for printf arguments of a message that has no
 * placeholders and silently drops them all, which is why this adapter exists. An Error among the
 * fields is written as {@link describeError} describes it (name, message, stack, code, cause):
 * pino's own error serializer applies to its `err` key only, and JSON has no Error. `child` is a
 * pino child logger with the fields as bindings.
 *
 * For Lambda, create the pino logger with {@link pinoLambdaOptions}, so that each line has the
 * RFC 3339 `timestamp` and the `level` name Lambda's log-level filtering reads.
 *
 * @example
 * import pino from 'pino';
 * const logger = fromPino(pino(pinoLambdaOptions));
 * logger.info('published', { key: 'normalized/a.ndjson' });
 */
export function fromPino(logger: PinoLike): Logger {
  const call =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, fields?: Record<string, unknown>): void =>
      logger[level](fields === undefined ? {} : withErrorsDescribed(fields), message);
  return {
    debug: call('debug'),
    info: call('info'),
    warn: call('warn'),
    error: call('error'),
    child: (fields) => fromPino(logger.child(withErrorsDescribed(fields))),
  };
}

/**
 * pino options that make its lines what Lambda and rerun read: `timestamp` in RFC 3339 (pino's
 * default is `time` in epoch ms, which Lambda does not take for a timestamp, so it files the line
 * under INFO and a function log level of WARN drops it), `level` as a name (`"warn"`, not `40`), and
 * the message under `message` (as Powertools and rerun's own logger write it, and as `rerun dev`
 * reads record outcomes from a function's output). Spread it into your own options.
 *
 * @example
 * const logger = fromPino(pino({ ...pinoLambdaOptions, level: 'debug' }));
 */
export const pinoLambdaOptions = {
  messageKey: 'message',
  timestamp: (): string => `,"timestamp":"${new Date().toISOString()}"`,
  formatters: { level: (label: string): { level: string } => ({ level: label }) },
} as const;

function withErrorsDescribed(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) out[key] = value instanceof Error ? describeError(value) : value;
  return out;
}
