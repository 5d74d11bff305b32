import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { withFields } from '../../src/logging/withFields.js';

/** A logger shaped like `console` (no child): records each call's arguments. */
function consoleLike() {
  const calls: unknown[][] = [];
  const record =
    (level: string) =>
    (...args: unknown[]) =>
      calls.push([level, ...args]);
  return {
    calls,
    logger: { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') },
  };
}

describe('withFields: the fields of a child, with or without the logger having child()', () => {
  it('a console-like logger gets the fields merged into each call, children adding theirs', () => {
    const { calls, logger } = consoleLike();
    const log = withFields(logger, { worker: 'upper' });
    log.info('published', { key: 'upper/a.txt' });
    log.child({ messageId: 'm1' }).warn('slow');
    expect(calls).toEqual([
      ['info', 'published', { worker: 'upper', key: 'upper/a.txt' }],
      ['warn', 'slow', { worker: 'upper', messageId: 'm1' }],
    ]);
  });

  it("a logger with child() uses its own: rerun's logger writes the fields into the line", () => {
    const lines: string[] = [];
    const log = withFields(createLogger({ sink: (line) => lines.push(line), now: () => 0 }), { worker: 'upper' });
    log.child({ messageId: 'm1' }).info('done');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ message: 'done', worker: 'upper', messageId: 'm1' });
  });
});
