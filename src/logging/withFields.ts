import type { FieldLogger, Logger } from './logger.js';

/**
 * `logger` with `fields` added to every entry: its own `child(fields)` when it has one (rerun's
 * logger, pino through fromPino), else each call's fields merged over `fields`, so a `console` or a
 * Powertools Logger passed as it is still gets the worker, message id and Lambda context on its lines.
 *
 * @example
 * const log = withFields(console, { worker: 'upper' });
 * log.info('published', { key: 'upper/a.txt' }); // console.info('published', { worker: 'upper', key: 'upper/a.txt' })
 */
export function withFields(logger: Logger, fields: Record<string, unknown>): FieldLogger {
  if (logger.child) {
    const child = logger.child(fields);
    if (isFieldLogger(child)) return child;
    return passThrough(child);
  }
  const merged = (extra?: Record<string, unknown>) => (extra === undefined ? fields : { ...fields, ...extra });
  return {
    debug: (message, extra) => logger.debug(message, merged(extra)),
    info: (message, extra) => logger.info(message, merged(extra)),
    warn: (message, extra) => logger.warn(message, merged(extra)),
    error: (message, extra) => logger.error(message, merged(extra)),
    child: (more) => withFields(logger, { ...fields, ...more }),
  };
}

/** A child without a `child` of its own (a user's logger): its calls as they are, children by merging. */
function passThrough(logger: Logger): FieldLogger {
  // No fields of ours to add: a call keeps its own arguments (console prints no stray `undefined`).
  const call = (method: 'debug' | 'info' | 'warn' | 'error') => (message: string, extra?: Record<string, unknown>) =>
    extra === undefined ? logger[method](message) : logger[method](message, extra);
  return {
    debug: call('debug'),
    info: call('info'),
    warn: call('warn'),
    error: call('error'),
    child: (more) => withFields(logger, more),
  };
}

function isFieldLogger(logger: Logger): logger is FieldLogger {
  return typeof logger.child === 'function';
}
