import { describe, expect, it } from 'vitest';
import { createLogger, describeError } from '../../src/logging/logger.js';

describe('createLogger', () => {
  it('writes one JSON line per entry with an RFC 3339 timestamp and the level Lambda files it under', () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'warn',
      sink: (l) => lines.push(l),
      now: () => Date.parse('2026-01-05T10:00:00Z'),
    });
    logger.info('dropped below the level');
    logger.child({ worker: 'normalize' }).warn('retrying', { key: 'incoming/a.csv' });
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        timestamp: '2026-01-05T10:00:00.000Z',
        level: 'warn',
        message: 'retrying',
        worker: 'normalize',
        key: 'incoming/a.csv',
      },
    ]);
  });

  it('keeps an error’s name, message, stack, SDK code, HTTP status and cause chain', () => {
    const lines: string[] = [];
    const root = Object.assign(new Error('Access Denied'), {
      name: 'AccessDenied',
      Code: 'AccessDenied',
      $metadata: { httpStatusCode: 403 },
    });
    const outer = new Error('could not read s3://in/a.csv', { cause: root });
    createLogger({ sink: (l) => lines.push(l) }).error('record failed', { error: outer });
    const entry = JSON.parse(lines[0] ?? '{}');
    expect(entry.error).toMatchObject({
      name: 'Error',
      message: 'could not read s3://in/a.csv',
      stack: expect.stringContaining('logger.test.ts'),
      cause: { name: 'AccessDenied', message: 'Access Denied', code: 'AccessDenied', httpStatus: 403 },
    });
  });

  it('stops following a cause chain that loops', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    let depth = 0;
    for (let d: unknown = describeError(a); d && typeof d === 'object'; d = (d as { cause?: unknown }).cause) depth++;
    expect(depth).toBe(6);
  });
});

describe('createLogger level from the environment', () => {
  const lines = (env: Record<string, string | undefined>, level?: 'debug') => {
    const out: string[] = [];
    const logger = createLogger({ env, sink: (l) => out.push(l), ...(level ? { level } : {}) });
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    return out.map((l) => JSON.parse(l).message);
  };

  it('honours the LOG_LEVEL that RerunPipeline and rerun dev set, in either case', () => {
    expect(lines({ LOG_LEVEL: 'warn' })).toEqual(['w']);
    expect(lines({ LOG_LEVEL: 'DEBUG' })).toEqual(['d', 'i', 'w']);
  });

  it("reads Lambda's AWS_LAMBDA_LOG_LEVEL when LOG_LEVEL is unset, TRACE as debug", () => {
    expect(lines({ AWS_LAMBDA_LOG_LEVEL: 'WARN' })).toEqual(['w']);
    expect(lines({ AWS_LAMBDA_LOG_LEVEL: 'TRACE' })).toEqual(['d', 'i', 'w']);
    expect(lines({ LOG_LEVEL: 'info', AWS_LAMBDA_LOG_LEVEL: 'ERROR' })).toEqual(['i', 'w']);
  });

  it('logs at info with no level set anywhere', () => {
    expect(lines({})).toEqual(['i', 'w']);
  });

  it('an explicit level wins over the environment', () => {
    expect(lines({ LOG_LEVEL: 'error' }, 'debug')).toEqual(['d', 'i', 'w']);
  });

  it('says once that a level it cannot read falls back to info, instead of throwing', () => {
    expect(lines({ LOG_LEVEL: 'verbose' })).toEqual([
      'LOG_LEVEL=verbose is not a log level (debug, info, warn, error): logging at info',
      'i',
      'w',
    ]);
  });

  it("a child keeps its parent's level", () => {
    const out: string[] = [];
    createLogger({ env: { LOG_LEVEL: 'warn' }, sink: (l) => out.push(l) })
      .child({ a: 1 })
      .info('dropped');
    expect(out).toEqual([]);
  });
});
