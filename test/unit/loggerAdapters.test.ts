import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { fromConsole } from '../../src/logging/fromConsole.js';
import { fromPino, pinoLambdaOptions } from '../../src/logging/fromPino.js';
import { fromPowertoolsLogger } from '../../src/logging/fromPowertoolsLogger.js';
import { createInvocationLogger } from '../../src/logging/lambdaContext.js';
import type { Logger } from '../../src/logging/logger.js';
import { withFields } from '../../src/logging/withFields.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** What every adapter must keep: the message, the fields (also a child's), the level, an error's stack and cause. */
function logThrough(logger: Logger): void {
  const cause = Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
  withFields(logger, { worker: 'normalize' }).warn('record failed', {
    key: 'incoming/a.csv',
    receiveCount: 3,
    error: new Error('could not read s3://in/a.csv', { cause }),
  });
}

function expectFieldsKept(entry: Record<string, unknown>): void {
  expect(entry).toMatchObject({
    message: 'record failed',
    worker: 'normalize',
    key: 'incoming/a.csv',
    receiveCount: 3,
    error: {
      name: 'Error',
      message: 'could not read s3://in/a.csv',
      stack: expect.stringContaining('loggerAdapters.test.ts'),
      cause: { name: 'AccessDenied', message: 'Access Denied' },
    },
  });
  expect(String(entry.timestamp)).toMatch(RFC3339);
}

describe('fromPino', () => {
  const capture = () => {
    const lines: string[] = [];
    return { lines, stream: { write: (line: string) => void lines.push(line) } };
  };

  it('keeps every field, a child’s bindings and an error’s stack and cause through a real pino logger', () => {
    const { lines, stream } = capture();
    logThrough(fromPino(pino(pinoLambdaOptions, stream)));
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] ?? '{}');
    expectFieldsKept(entry);
    // What Lambda's log-level filtering reads: the level's name, not pino's number.
    expect(entry.level).toBe('warn');
  });

  it('keeps the fields with pino’s default options too (where a console-style call drops them)', () => {
    const { lines, stream } = capture();
    const raw = pino({}, stream);
    raw.info('published', { key: 'normalized/a.ndjson' } as never);
    fromPino(raw).info('published', { key: 'normalized/a.ndjson' });
    const [consoleStyle, adapted] = lines.map((l) => JSON.parse(l));
    expect(consoleStyle).not.toHaveProperty('key');
    expect(adapted).toMatchObject({ msg: 'published', key: 'normalized/a.ndjson', level: 30 });
  });

  it('honours pino’s level: a debug entry is dropped at info', () => {
    const { lines, stream } = capture();
    const logger = fromPino(pino({ ...pinoLambdaOptions, level: 'info' }, stream));
    logger.debug('noise', { a: 1 });
    logger.error('kept', { a: 2 });
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([{ level: 'error', message: 'kept', a: 2 }]);
  });
});

describe('fromPowertoolsLogger', () => {
  const originalWrites = { stdout: process.stdout.write, stderr: process.stderr.write };
  const restore = () => {
    process.stdout.write = originalWrites.stdout;
    process.stderr.write = originalWrites.stderr;
  };
  afterEach(restore);
  /**
   * The Powertools Logger writes through its own Console to process.stdout (debug, info) and
   * process.stderr (warn, error), as Lambda captures them: capture both.
   */
  const captureOutput = (): string[] => {
    const lines: string[] = [];
    const capture = ((chunk: string | Uint8Array) => {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(line);
      return true;
    }) as typeof process.stdout.write;
    process.stdout.write = capture;
    process.stderr.write = capture;
    return lines;
  };

  it('keeps every field, a child’s keys and an error’s stack and cause through the real Powertools Logger', () => {
    // Passed as it is, without a cast: tsc checks that a Powertools Logger is a PowertoolsLoggerLike.
    const logger = new PowertoolsLogger({ serviceName: 'rerun-test', logLevel: 'DEBUG' });
    const lines = captureOutput();
    logThrough(fromPowertoolsLogger(logger));
    restore();
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] ?? '{}');
    expectFieldsKept(entry);
    expect(entry).toMatchObject({ level: 'WARN', service: 'rerun-test' });
  });

  it('carries the Lambda context keys of an invocation logger, under the names Powertools itself uses', () => {
    const logger = new PowertoolsLogger({ serviceName: 'rerun-test' });
    const forInvocation = createInvocationLogger(fromPowertoolsLogger(logger), {
      traceHeader: () => 'Root=1-abc;Sampled=1',
      initializationType: () => 'on-demand',
    });
    const lines = captureOutput();
    forInvocation({
      functionName: 'rerun-normalize',
      memoryLimitInMB: '512',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:rerun-normalize',
      awsRequestId: 'r-1',
    } as Context).info('batch received');
    restore();
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([
      {
        message: 'batch received',
        function_name: 'rerun-normalize',
        function_memory_size: 512,
        function_arn: 'arn:aws:lambda:us-east-1:123456789012:function:rerun-normalize',
        function_request_id: 'r-1',
        cold_start: true,
        xray_trace_id: '1-abc',
      },
    ]);
  });

  it('logs a message without fields as it is', () => {
    const logger = new PowertoolsLogger({ serviceName: 'rerun-test' });
    const lines = captureOutput();
    fromPowertoolsLogger(logger).info('started');
    restore();
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([{ level: 'INFO', message: 'started' }]);
  });
});

describe('fromConsole', () => {
  it('writes one JSON line per entry to the console method of its level, fields and error kept', () => {
    const calls: [string, unknown[]][] = [];
    const record =
      (method: string) =>
      (...args: unknown[]) =>
        void calls.push([method, args]);
    const target = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
    const logger = fromConsole(target, { level: 'debug' });
    logThrough(logger);
    logger.debug('noise');
    expect(calls.map(([method, args]) => [method, args.length])).toEqual([
      ['warn', 1],
      ['debug', 1],
    ]);
    const entry = JSON.parse(String(calls[0]?.[1][0]));
    expectFieldsKept(entry);
    expect(entry.level).toBe('warn');
  });

  it('writes through the real console to its stream', async () => {
    const { Console } = await import('node:console');
    const { PassThrough } = await import('node:stream');
    const out = new PassThrough();
    const err = new PassThrough();
    const chunks: string[] = [];
    err.on('data', (c) => chunks.push(String(c)));
    logThrough(fromConsole(new Console({ stdout: out, stderr: err })));
    await new Promise((resolve) => setImmediate(resolve));
    // console.warn writes to stderr.
    expectFieldsKept(JSON.parse(chunks.join('').trim()));
  });
});
