import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { formatEmfLine } from '../../src/metrics/emf.js';
import { emfOutcomeMetrics } from '../../src/metrics/emfOutcomeMetrics.js';
import { addOutcome, OutcomeMetric, zeroOutcomeCounts } from '../../src/metrics/outcomeMetrics.js';
import { powertoolsOutcomeMetrics } from '../../src/metrics/powertoolsOutcomeMetrics.js';
import type { OutcomeHook, RecordOutcome } from '../../src/worker/outcomes.js';
import { OFFLINE_CONTEXT, offlineBatchHandler, offlineEvent } from '../support/offlineBatch.js';

const context = OFFLINE_CONTEXT;
const event = offlineEvent;

const handlerWith = (onOutcome: OutcomeHook, lines: string[] = []) =>
  offlineBatchHandler({ onOutcome, logger: createLogger({ sink: (l) => lines.push(l) }) });

const processed: RecordOutcome = {
  messageId: 'p',
  status: 'processed',
  reason: 'output created',
  quarantined: 3,
  publishRacesLost: 1,
  effectsExecuted: 1,
};

describe('formatEmfLine', () => {
  it('writes the _aws block of the embedded metric format, with dimension and metric values at the root', () => {
    const line = formatEmfLine({
      namespace: 'rerun',
      dimensions: { Worker: 'normalize' },
      metrics: [
        { name: 'RecordsFailed', value: 2 },
        { name: 'Latency', value: 12, unit: 'Milliseconds' },
      ],
      timestamp: Date.parse('2026-01-05T10:00:00Z'),
    });
    expect(JSON.parse(line)).toEqual({
      _aws: {
        Timestamp: 1767607200000,
        CloudWatchMetrics: [
          {
            Namespace: 'rerun',
            Dimensions: [['Worker']],
            Metrics: [
              { Name: 'RecordsFailed', Unit: 'Count' },
              { Name: 'Latency', Unit: 'Milliseconds' },
            ],
          },
        ],
      },
      Worker: 'normalize',
      RecordsFailed: 2,
      Latency: 12,
    });
    expect(line).not.toContain('\n');
  });

  it('refuses a member that is both a dimension and a metric', () => {
    expect(() =>
      formatEmfLine({ namespace: 'n', dimensions: { A: 'x' }, metrics: [{ name: 'A', value: 1 }], timestamp: 0 }),
    ).toThrow(/both a dimension and a metric/);
  });
});

describe('addOutcome', () => {
  it('counts a record by its status and adds its quarantined entries, lost races and executed effects', () => {
    const counts = zeroOutcomeCounts();
    addOutcome(counts, processed);
    addOutcome(counts, { messageId: 's', status: 'skipped', reason: 'already done' });
    addOutcome(counts, { messageId: 'f', status: 'failed', reason: 'Error: x', publishRacesLost: 4 });
    // A requeued message is its own count, never a failure: its records went back as a new message.
    addOutcome(counts, { messageId: 'r', status: 'requeued', reason: '3 records requeued', requeuedRecords: 3 });
    expect(counts).toEqual({
      [OutcomeMetric.PROCESSED]: 1,
      [OutcomeMetric.SKIPPED]: 1,
      [OutcomeMetric.FAILED]: 1,
      [OutcomeMetric.REQUEUED]: 1,
      [OutcomeMetric.QUARANTINED]: 3,
      [OutcomeMetric.PUBLISH_RACES_LOST]: 5,
      [OutcomeMetric.EFFECTS_EXECUTED]: 1,
    });
  });
});

describe('emfOutcomeMetrics as a batch handler’s onOutcome', () => {
  it('writes one EMF line per invocation with every outcome metric, zeros included', async () => {
    const emf: string[] = [];
    const handler = handlerWith(emfOutcomeMetrics({ namespace: 'pipeline', sink: (l) => emf.push(l), now: () => 42 }));
    await handler(event(['t1', 't2', 'junk']), context);
    expect(emf).toHaveLength(1);
    const doc = JSON.parse(emf[0] ?? '{}');
    expect(doc._aws).toEqual({
      Timestamp: 42,
      CloudWatchMetrics: [
        {
          Namespace: 'pipeline',
          Dimensions: [['Worker']],
          Metrics: Object.values(OutcomeMetric).map((Name) => ({ Name, Unit: 'Count' })),
        },
      ],
    });
    expect(doc).toMatchObject({
      Worker: 'copy',
      RecordsProcessed: 0,
      RecordsSkipped: 2,
      RecordsFailed: 1,
      EntriesQuarantined: 0,
      PublishRacesLost: 0,
      EffectsExecuted: 0,
    });
    // The next invocation starts from zero.
    await handler(event(['t3']), context);
    expect(JSON.parse(emf[1] ?? '{}')).toMatchObject({ RecordsSkipped: 1, RecordsFailed: 0 });
  });

  it('never fails the batch: a hook that throws is logged and the batch result stands', async () => {
    const lines: string[] = [];
    const hook = Object.assign(
      () => {
        throw new Error('metrics down');
      },
      {
        flush: async () => {
          throw new Error('flush down');
        },
      },
    );
    const response = await handlerWith(hook, lines)(event(['t1', 'junk']), context);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'junk' }] });
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'warn' && /onOutcome/.test(l.message));
    expect(warnings.map((w) => [w.message, w.error?.message])).toEqual([
      ['the onOutcome hook failed; the batch result stands', 'metrics down'],
      ['the onOutcome hook failed; the batch result stands', 'metrics down'],
      ['the onOutcome hook could not flush; the batch result stands', 'flush down'],
    ]);
  });
});

describe('powertoolsOutcomeMetrics', () => {
  const originalWrite = process.stdout.write;
  afterEach(() => {
    process.stdout.write = originalWrite;
  });

  it('makes the real Powertools Metrics write the outcome counts as EMF, with its service and the Worker dimension', async () => {
    const metrics = new Metrics({ namespace: 'pipeline', serviceName: 'normalize' });
    const hook = powertoolsOutcomeMetrics(metrics);
    const handler = handlerWith(hook);
    const lines: string[] = [];
    // Powertools Metrics writes each EMF document to stdout through its own Console.
    process.stdout.write = ((chunk: string | Uint8Array) => {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(line);
      return true;
    }) as typeof process.stdout.write;
    hook(processed, { worker: 'copy' });
    await handler(event(['t1', 'junk']), context);
    process.stdout.write = originalWrite;
    const docs = lines.map((l) => JSON.parse(l)).filter((d) => d._aws);
    expect(docs).toHaveLength(1);
    const [doc] = docs;
    expect(doc._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'pipeline',
        Dimensions: [['service', 'Worker']],
        Metrics: expect.arrayContaining(Object.values(OutcomeMetric).map((Name) => ({ Name, Unit: 'Count' }))),
      },
    ]);
    expect(doc._aws.CloudWatchMetrics[0].Metrics).toHaveLength(Object.values(OutcomeMetric).length);
    expect(doc).toMatchObject({
      service: 'normalize',
      Worker: 'copy',
      RecordsProcessed: 1,
      RecordsSkipped: 1,
      RecordsFailed: 1,
      RecordsRequeued: 0,
      EntriesQuarantined: 3,
      PublishRacesLost: 1,
      EffectsExecuted: 1,
    });
  });
});
