import { WorkerConfigurationError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { createLogger, LOGGER_OPTION_NAMES, type Logger, type LoggerOptions } from './logger.js';

/** What {@link fromConsole} needs: the four level methods every console has. */
export interface ConsoleLike {
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/** The names of fromConsole's options: a logger's but `sink` (the console is the sink); tsc fails when they differ. */
const FROM_CONSOLE_OPTION_NAMES = (({ sink: _sink, ...rest }) => rest)(LOGGER_OPTION_NAMES) satisfies OptionNames<
  Omit<LoggerOptions, 'sink'>
>;

/**
 * A {@link Logger} that writes through a console: each entry is one JSON line (RFC 3339
 * `timestamp`, `level`, `message`, the fields; an Error keeps its stack and cause), passed to the
 * console method of its level. The line is built here, not by the console: `console.info(message,
 * fields)` would print `message { key: 'a' }`, which is not JSON, so CloudWatch Logs Insights
 * cannot read its fields and Lambda files it under INFO whatever its level.
 *
 * In Lambda, {@link createLogger} (straight to stdout) does the same with one call less; use this
 * one for a console you capture or replace (tests, a test runner's console, a patched console).
 *
 * @example
 * const logger = fromConsole(console, { level: 'debug' });
 * logger.warn('retrying', { key: 'incoming/a.csv' });
 * // console.warn('{"timestamp":"2026-...Z","level":"warn","message":"retrying","key":"incoming/a.csv"}')
 */
export function fromConsole(target: ConsoleLike = console, options: Omit<LoggerOptions, 'sink'> = {}): Logger {
  // Checked here, under its own name: createLogger would name itself, and a `sink` would be overridden silently.
  checkOptions('fromConsole', options, FROM_CONSOLE_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  return createLogger({ ...options, sink: (line, level) => target[level](line) });
}
