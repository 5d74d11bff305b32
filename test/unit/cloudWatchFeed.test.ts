import type { CloudWatchClient, GetMetricDataCommandInput } from '@aws-sdk/client-cloudwatch';
import type { CloudWatchLogsClient, FilterLogEventsCommandInput } from '@aws-sdk/client-cloudwatch-logs';
import { describe, expect, it } from 'vitest';
import { CloudWatchFeed } from '../../app/ui/cloudWatchFeed.js';

const NOW = Date.parse('2026-03-02T10:30:20Z');

/** A client that records each command's input and answers with `answer(input)`. */
function fakeClient<I, O>(answer: (input: I) => O | Promise<O>) {
  const sent: I[] = [];
  return {
    sent,
    client: {
      send: async (command: { input: I }) => {
        sent.push(command.input);
        return answer(command.input);
      },
    },
  };
}

const outcomeLine = (status: string, key: string) =>
  JSON.stringify({
    timestamp: '2026-03-02T10:30:00.000Z',
    level: 'info',
    message: `record ${status}`,
    worker: 'normalize',
    messageId: `m-${key}`,
    status,
    reason: status === 'processed' ? 'output created' : 'unsupported file type',
    source: { bucket: 'in', key },
  });

describe('CloudWatchFeed', () => {
  it("asks for the workers' outcome metrics (namespace rerun, dimension Worker) and each queue's oldest age, per minute over the last hour", async () => {
    // moto's GetMetricData ignores the namespace of a query with dimensions: the query is checked here.
    const metrics = fakeClient<GetMetricDataCommandInput, object>(() => ({
      MetricDataResults: [
        { Id: 'w0processed', Timestamps: [new Date('2026-03-02T10:29:00Z')], Values: [7] },
        { Id: 'w0quarantined', Timestamps: [new Date('2026-03-02T10:29:00Z')], Values: [3] },
        {
          Id: 'q1age',
          // Newest first or not: the newest datapoint wins.
          Timestamps: [new Date('2026-03-02T10:27:00Z'), new Date('2026-03-02T10:28:00Z')],
          Values: [300, 12],
        },
      ],
    }));
    const feed = new CloudWatchFeed({
      cloudwatch: metrics.client as unknown as CloudWatchClient,
      logGroups: [],
      workers: ['normalize', 'summarize'],
      queueNames: ['app-normalize-queue', 'app-normalize-dlq'],
    });
    const snapshot = await feed.poll(NOW);
    const [input] = metrics.sent;
    expect(input?.StartTime?.toISOString()).toBe('2026-03-02T09:31:00.000Z');
    expect(input?.EndTime?.toISOString()).toBe('2026-03-02T10:31:00.000Z');
    const queries = (input?.MetricDataQueries ?? []).map((q) => ({
      id: q.Id,
      namespace: q.MetricStat?.Metric?.Namespace,
      name: q.MetricStat?.Metric?.MetricName,
      dimensions: q.MetricStat?.Metric?.Dimensions,
      stat: q.MetricStat?.Stat,
      period: q.MetricStat?.Period,
    }));
    expect(queries).toContainEqual({
      id: 'w0processed',
      namespace: 'rerun',
      name: 'RecordsProcessed',
      dimensions: [{ Name: 'Worker', Value: 'normalize' }],
      stat: 'Sum',
      period: 60,
    });
    expect(queries).toContainEqual({
      id: 'w1failed',
      namespace: 'rerun',
      name: 'RecordsFailed',
      dimensions: [{ Name: 'Worker', Value: 'summarize' }],
      stat: 'Sum',
      period: 60,
    });
    expect(queries).toContainEqual({
      id: 'q1age',
      namespace: 'AWS/SQS',
      name: 'ApproximateAgeOfOldestMessage',
      dimensions: [{ Name: 'QueueName', Value: 'app-normalize-dlq' }],
      stat: 'Maximum',
      period: 60,
    });
    expect(queries).toHaveLength(10);
    expect(snapshot.throughput).toHaveLength(60);
    expect(snapshot.throughput.find((b) => b.at === Date.parse('2026-03-02T10:29:00Z'))?.counts).toEqual({
      processed: 7,
    });
    expect(snapshot.quarantinedEntries).toBe(3);
    expect(snapshot.queueAges).toEqual({
      'app-normalize-dlq': { seconds: 12, at: Date.parse('2026-03-02T10:28:00Z') },
    });
    // Within 30 s the metrics are not asked again.
    await feed.poll(NOW + 10_000);
    expect(metrics.sent).toHaveLength(1);
  });

  it("asks a pipeline's own namespace when it has one (emfOutcomeMetrics({ namespace }), rerun ui --metrics-namespace)", async () => {
    const metrics = fakeClient<GetMetricDataCommandInput, object>(() => ({ MetricDataResults: [] }));
    const feed = new CloudWatchFeed({
      cloudwatch: metrics.client as unknown as CloudWatchClient,
      logGroups: [],
      workers: ['normalize'],
      queueNames: ['q'],
      namespace: 'acme-pipeline',
    });
    await feed.poll(NOW);
    const namespaces = (metrics.sent[0]?.MetricDataQueries ?? []).map((q) => q.MetricStat?.Metric?.Namespace);
    expect(namespaces).toEqual(['acme-pipeline', 'acme-pipeline', 'acme-pipeline', 'acme-pipeline', 'AWS/SQS']);
  });

  it('reads outcome lines from a minute before the newest one seen, once each, and keeps other lines out', async () => {
    const pages: Record<string, object> = {
      first: {
        events: [
          { logStreamName: 's1', timestamp: NOW - 5000, message: outcomeLine('processed', 'a.csv') },
          { logStreamName: 's1', timestamp: NOW - 4000, message: '{"level":"info","message":"rebuilding output"}' },
        ],
        nextToken: 'page2',
      },
      page2: { events: [{ logStreamName: 's2', timestamp: NOW - 3000, message: outcomeLine('skipped', 'b.txt') }] },
      // The next poll starts a minute before the newest event's time: the events read come again, with
      // a new one, another stream's event of the same time and text (another event), and a stream's
      // event older than the newest seen that CloudWatch took late.
      again: {
        events: [
          { logStreamName: 's1', timestamp: NOW - 5000, message: outcomeLine('processed', 'a.csv') },
          { logStreamName: 's4', timestamp: NOW - 4500, message: outcomeLine('failed', 'late.csv') },
          { logStreamName: 's2', timestamp: NOW - 3000, message: outcomeLine('skipped', 'b.txt') },
          { logStreamName: 's3', timestamp: NOW - 3000, message: outcomeLine('skipped', 'b.txt') },
          { logStreamName: 's2', timestamp: NOW - 1000, message: `${outcomeLine('processed', 'c.csv')}\n` },
        ],
      },
    };
    let polls = 0;
    const logs = fakeClient<FilterLogEventsCommandInput, object>((input) => {
      if (input.nextToken) return pages[input.nextToken] ?? {};
      polls++;
      return (polls === 1 ? pages.first : pages.again) ?? {};
    });
    const feed = new CloudWatchFeed({
      logs: logs.client as unknown as CloudWatchLogsClient,
      logGroups: ['/aws/lambda/app-normalize'],
      workers: [],
      queueNames: [],
    });
    const first = await feed.poll(NOW);
    expect(first.outcomes.map((o) => [o.status, o.subject, o.at])).toEqual([
      ['processed', 's3://in/a.csv', NOW - 5000],
      ['skipped', 's3://in/b.txt', NOW - 3000],
    ]);
    expect(logs.sent[0]).toMatchObject({ logGroupName: '/aws/lambda/app-normalize', startTime: NOW - 15 * 60_000 });
    // Within 5 s of a read, a poll does not read the logs again (FilterLogEvents has a small quota).
    const calls = logs.sent.length;
    expect((await feed.poll(NOW + 2000, first.seq)).outcomes).toEqual([]);
    expect(logs.sent).toHaveLength(calls);
    const second = await feed.poll(NOW + 5000, first.seq);
    expect(logs.sent.at(-1)).toMatchObject({ startTime: NOW - 3000 - 60_000 });
    expect(second.outcomes.map((o) => o.subject)).toEqual(['s3://in/late.csv', 's3://in/b.txt', 's3://in/c.csv']);
  });

  it('turns a read it may not do into a note, and goes on', async () => {
    const denied = Object.assign(new Error('User is not authorized to perform: logs:FilterLogEvents'), {
      name: 'AccessDeniedException',
    });
    const logs = fakeClient<FilterLogEventsCommandInput, object>(() => {
      throw denied;
    });
    const feed = new CloudWatchFeed({
      logs: logs.client as unknown as CloudWatchLogsClient,
      logGroups: ['/aws/lambda/app-normalize'],
      workers: ['normalize'],
      queueNames: [],
      missing: ['Throughput and queue ages need @aws-sdk/client-cloudwatch (npm install it).'],
    });
    const snapshot = await feed.poll(NOW);
    expect(snapshot.outcomes).toEqual([]);
    expect(snapshot.notes).toEqual([
      'Throughput and queue ages need @aws-sdk/client-cloudwatch (npm install it).',
      'Outcomes from /aws/lambda/app-normalize: AccessDeniedException: User is not authorized to perform: logs:FilterLogEvents',
    ]);
  });
});
