import type { Logger } from './logger.js';

/**
 * The part of the Powertools for AWS Lambda Logger (`@aws-lambda-powertools/logger`) that
 * {@link fromPowertoolsLogger} uses; a `Logger` of that package has it, and rerun does not depend on
 * the package.
 */
export interface PowertoolsLoggerLike {
  debug(message: string, ...extraInput: Record<string, unknown>[]): void;
  info(message: string, ...extraInput: Record<string, unknown>[]): void;
  warn(message: string, ...extraInput: Record<string, unknown>[]): void;
  error(message: string, ...extraInput: Record<string, unknown>[]): void;
  createChild(options?: { persistentKeys?: Record<string, unknown> }): PowertoolsLoggerLike;
}

/**
 * A {@link Logger} that logs through a Powertools Logger, so rerun's lines have the same shape,
 * level, service name, sampling and buffering as the rest of the function's. Fields become top-level
 * keys (Powertools merges an object given after the message); an Error among them is formatted by
 * Powertools with its stack and cause. `child(fields)` is a Powertools child logger with those
 * fields as persistent keys.
 *
 * Powertools drops the keys it reserves (`level`, `message`, `sampling_rate`, `service`,
 * `timestamp`) with a warning; rerun's own fields use none of them.
 *
 * @example
 * import { Logger } from '@aws-lambda-powertools/logger';
 * const logger = fromPowertoolsLogger(new Logger({ serviceName: 'normalize' }));
 * export const handler = createSqsBatchHandler({ worker, store, sqs, logger });
 */
export function fromPowertoolsLogger(logger: PowertoolsLoggerLike): Logger {
  const call =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, fields?: Record<string, unknown>): void => {
      if (fields === undefined) logger[level](message);
      else logger[level](message, fields);
    };
  return {
    debug: call('debug'),
    info: call('info'),
    warn: call('warn'),
    error: call('error'),
    child: (fields) => fromPowertoolsLogger(logger.createChild({ persistentKeys: fields })),
  };
}
