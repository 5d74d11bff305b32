import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseRecordOutcomeLogLine } from '../../src/batch/recordOutcomeLog.js';
import { createInvocationLogger, lambdaContextFields, xrayTraceIdOf } from '../../src/logging/lambdaContext.js';
import { createLogger } from '../../src/logging/logger.js';
import { offlineBatchHandler, offlineEvent } from '../support/offlineBatch.js';

const lambdaContext = (awsRequestId: string): Context =>
  ({
    functionName: 'rerun-normalize',
    memoryLimitInMB: '1024',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:rerun-normalize',
    awsRequestId,
    getRemainingTimeInMillis: () => 60_000,
  }) as unknown as Context;

const TRACE = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=557abcec3ee5a047;Sampled=1';

describe('lambdaContextFields', () => {
  it('names the keys as the Powertools Logger does and leaves out what the context lacks', () => {
    expect(lambdaContextFields(lambdaContext('r-1'), { coldStart: true, traceHeader: TRACE })).toEqual({
      function_name: 'rerun-normalize',
      function_memory_size: 1024,
      function_arn: 'arn:aws:lambda:us-east-1:123456789012:function:rerun-normalize',
      function_request_id: 'r-1',
      cold_start: true,
      xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793',
    });
    expect(lambdaContextFields({ awsRequestId: 'r-2' }, { coldStart: false })).toEqual({
      function_request_id: 'r-2',
      cold_start: false,
    });
  });

  it('reads the trace id from the Root of the header, or the header itself when it has no fields', () => {
    expect(xrayTraceIdOf('Parent=557abcec3ee5a047;Root=1-abc;Sampled=0')).toBe('1-abc');
    expect(xrayTraceIdOf('1-abc')).toBe('1-abc');
    expect(xrayTraceIdOf('Parent=557abcec3ee5a047')).toBeUndefined();
    expect(xrayTraceIdOf(undefined)).toBeUndefined();
  });
});

describe('createInvocationLogger', () => {
  const linesOf = () => {
    const lines: Record<string, unknown>[] = [];
    return { lines, logger: createLogger({ sink: (l) => lines.push(JSON.parse(l)) }) };
  };

  it('marks the first invocation as the cold start, and no later one', () => {
    const { lines, logger } = linesOf();
    const forInvocation = createInvocationLogger(logger, {
      traceHeader: () => undefined,
      initializationType: () => 'on-demand',
    });
    forInvocation(lambdaContext('r-1')).info('a');
    forInvocation(lambdaContext('r-2')).info('b');
    expect(lines.map((l) => [l.function_request_id, l.cold_start])).toEqual([
      ['r-1', true],
      ['r-2', false],
    ]);
  });

  it('is no cold start when the environment was initialized ahead (provisioned concurrency)', () => {
    const { lines, logger } = linesOf();
    const forInvocation = createInvocationLogger(logger, {
      traceHeader: () => TRACE,
      initializationType: () => 'provisioned-concurrency',
    });
    forInvocation(lambdaContext('r-1')).info('a');
    expect(lines[0]).toMatchObject({ cold_start: false, xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793' });
  });
});

describe('the batch handler’s log lines', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('all carry a timestamp and the invocation’s Lambda context keys, and outcomes still read back', async () => {
    vi.stubEnv('_X_AMZN_TRACE_ID', TRACE);
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const raw: string[] = [];
    // A test event and a body that is not an S3 event need neither S3 nor SQS.
    const handler = offlineBatchHandler({ logger: createLogger({ sink: (l) => raw.push(l) }) });
    const event = offlineEvent;
    await handler(event(['t1', 'junk']), lambdaContext('r-1'));
    await handler(event(['t2']), lambdaContext('r-2'));
    const lines = raw.map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(line).toMatchObject({
        worker: 'copy',
        function_name: 'rerun-normalize',
        function_memory_size: 1024,
        function_arn: 'arn:aws:lambda:us-east-1:123456789012:function:rerun-normalize',
        xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793',
      });
    }
    expect(lines.map((l) => [l.messageId, l.function_request_id, l.cold_start])).toEqual([
      ['t1', 'r-1', true],
      ['junk', 'r-1', true],
      ['t2', 'r-2', false],
    ]);
    // What `rerun dev` reads back from such a line is the outcome alone, not the logger's keys.
    expect(parseRecordOutcomeLogLine(raw[0] ?? '')).toEqual({
      messageId: 't1',
      receiveCount: 1,
      status: 'skipped',
      reason: 's3:TestEvent acknowledged (sent when notifications are set up)',
    });
  });
});
