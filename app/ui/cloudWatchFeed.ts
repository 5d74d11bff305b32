import type { CloudWatchClient, MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { errorMessage } from '../../src/batch/errorMessage.js';
import { parseRecordOutcomeLogLine } from '../../src/batch/recordOutcomeLog.js';
import { OutcomeMetric } from '../../src/metrics/outcomeMetrics.js';
import { type JournalOutcome, journalOutcome } from '../common/devSessionFile.js';
import type { LiveSnapshot } from './liveFeed.js';

/** The outcome metrics' namespace of the stack's workers (`emfOutcomeMetrics()`'s default). */
export const DEFAULT_OUTCOME_NAMESPACE = 'rerun';
/** The throughput chart's interval: CloudWatch's standard resolution. */
const PERIOD_SECONDS = 60;
const CHART_BUCKETS = 60;
/** Metrics change once a minute: one GetMetricData per this interval serves every poll. */
const METRICS_EVERY_MS = 30_000;
/**
 * At most one FilterLogEvents per log group per this interval, whatever the page's polling: the
 * call's quota is a few per second for the whole account and region.
 */
const LOGS_EVERY_MS = 5_000;
/** How far back the first poll reads the workers' logs. */
const FIRST_LOOK_BACK_MS = 15 * 60_000;
/**
 * How far before the newest event seen each read starts again: CloudWatch Logs takes events in
 * seconds, so one stream's older event can arrive after another stream's newer one was read.
 */
const LATE_EVENTS_MS = 60_000;
/** Pages of FilterLogEvents per log group and poll (the newest outcomes are what the list shows). */
const MAX_PAGES = 5;

/** What the feed reads: the clients, and the stack's log groups, workers and queues. */
export interface CloudWatchFeedSources {
  readonly cloudwatch?: CloudWatchClient;
  readonly logs?: CloudWatchLogsClient;
  /** The workers' log groups (the stack's outputs). */
  readonly logGroups: readonly string[];
  /** The worker names of the outcome metrics' `Worker` dimension. */
  readonly workers: readonly string[];
  /** Queue names whose `ApproximateAgeOfOldestMessage` to read (AWS/SQS). */
  readonly queueNames: readonly string[];
  /** What to say when a client is missing (its package is not installed). */
  readonly missing?: readonly string[];
  /** The workers' outcome metrics' namespace. @default {@link DEFAULT_OUTCOME_NAMESPACE} */
  readonly namespace?: string;
}

/** A deployed pipeline's live view: outcomes from its logs, throughput and ages from CloudWatch metrics. */
export interface CloudWatchSnapshot extends LiveSnapshot {
  /** Age of the oldest message per queue name, from its newest datapoint (CloudWatch lags a few minutes). */
  readonly queueAges: Readonly<Record<string, { readonly seconds: number; readonly at: number }>>;
  /** Entries quarantined in the chart's hour (EntriesQuarantined). */
  readonly quarantinedEntries: number;
  /** Why a part is missing: a client not installed, access denied... */
  readonly notes: readonly string[];
}

/**
 * The live view of a deployed stack, read from CloudWatch as an operator would in its console:
 * - outcomes: the workers' log lines of each record outcome (`record processed`...; one JSON line
 *   each, `parseRecordOutcomeLogLine`), read with FilterLogEvents since the last poll;
 * - throughput: records processed, skipped and failed per minute over the last hour (the workers'
 *   outcome metrics, `emfOutcomeMetrics`, dimension `Worker`);
 * - each queue's age of its oldest message (AWS/SQS `ApproximateAgeOfOldestMessage`, maximum).
 *
 * Two reads only (GetMetricData, FilterLogEvents); a part it cannot read becomes a note.
 *
 * @example
 * const feed = new CloudWatchFeed({ cloudwatch, logs, logGroups, workers: ['normalize'], queueNames });
 * const snapshot = await feed.poll(Date.now(), 0);
 */
export class CloudWatchFeed {
  private seq = 0;
  private readonly recent: (JournalOutcome & { seq: number })[] = [];
  /** Events read, by stream, time and line, with their time: those before a read's start are let go. */
  private readonly seen = new Map<string, number>();
  private readonly since = new Map<string, number>();
  private logsReadAt?: number;
  private metrics?: { at: number; value: Pick<CloudWatchSnapshot, 'throughput' | 'queueAges' | 'quarantinedEntries'> };
  private readonly notes = new Map<string, string>();

  constructor(
    private readonly sources: CloudWatchFeedSources,
    private readonly options: { readonly keep?: number } = {},
  ) {
    for (const m of sources.missing ?? []) this.notes.set(m, m);
  }

  async poll(now: number, afterSeq = 0): Promise<CloudWatchSnapshot> {
    if (this.logsReadAt === undefined || now - this.logsReadAt >= LOGS_EVERY_MS) {
      this.logsReadAt = now;
      await Promise.all(this.sources.logGroups.map((group) => this.readLogs(group, now)));
    }
    if (!this.metrics || now - this.metrics.at >= METRICS_EVERY_MS) {
      const value = await this.readMetrics(now);
      if (value) this.metrics = { at: now, value };
    }
    const metrics = this.metrics?.value ?? { throughput: [], queueAges: {}, quarantinedEntries: 0 };
    return {
      outcomes: this.recent.filter((o) => o.seq > afterSeq),
      seq: this.seq,
      bucketMs: PERIOD_SECONDS * 1000,
      ...metrics,
      notes: [...this.notes.values()],
    };
  }

  private async readLogs(group: string, now: number): Promise<void> {
    const { logs } = this.sources;
    if (!logs) return;
    const { FilterLogEventsCommand } = await import('@aws-sdk/client-cloudwatch-logs');
    // From a minute before the newest event seen (late events); the events read again are told apart.
    const newest = this.since.get(group);
    const startTime = newest === undefined ? now - FIRST_LOOK_BACK_MS : newest - LATE_EVENTS_MS;
    let token: string | undefined;
    const found: JournalOutcome[] = [];
    try {
      for (let page = 0; page < MAX_PAGES; page++) {
        const out = await logs.send(
          new FilterLogEventsCommand({
            logGroupName: group,
            startTime,
            // A term: the lines of record outcomes (`"message":"record processed"`...) and few others.
            filterPattern: '"record"',
            ...(token ? { nextToken: token } : {}),
          }),
        );
        for (const event of out.events ?? []) {
          // An event comes again while it is in a read's window: its stream, time and line say it is
          // the same (no eventId needed: MiniStack returns none).
          const id = `${group}|${event.logStreamName ?? ''}|${event.timestamp ?? 0}|${event.message ?? ''}`;
          if (this.seen.has(id)) continue;
          this.seen.set(id, event.timestamp ?? 0);
          const outcome = parseRecordOutcomeLogLine((event.message ?? '').trim());
          if (outcome) found.push(journalOutcome(outcome, event.timestamp ?? now));
          this.since.set(group, Math.max(this.since.get(group) ?? 0, event.timestamp ?? 0));
        }
        token = out.nextToken;
        if (!token) break;
      }
      this.notes.delete(`logs ${group}`);
    } catch (error) {
      this.notes.set(`logs ${group}`, `Outcomes from ${group}: ${errorMessage(error)}`);
    }
    for (const [id, at] of this.seen) if (at < startTime && id.startsWith(`${group}|`)) this.seen.delete(id);
    for (const o of found.sort((a, b) => a.at - b.at)) {
      this.seq++;
      this.recent.push({ ...o, seq: this.seq });
      if (this.recent.length > (this.options.keep ?? 200)) this.recent.shift();
    }
  }

  private async readMetrics(now: number): Promise<NonNullable<CloudWatchFeed['metrics']>['value'] | undefined> {
    const { cloudwatch, workers, queueNames } = this.sources;
    if (!cloudwatch) return undefined;
    const { GetMetricDataCommand } = await import('@aws-sdk/client-cloudwatch');
    const series = {
      processed: OutcomeMetric.PROCESSED,
      skipped: OutcomeMetric.SKIPPED,
      failed: OutcomeMetric.FAILED,
      quarantined: OutcomeMetric.QUARANTINED,
    } as const;
    const queries: MetricDataQuery[] = [];
    const meaning = new Map<string, { kind: keyof typeof series } | { queue: string }>();
    workers.forEach((worker, w) => {
      for (const [kind, name] of Object.entries(series) as [keyof typeof series, string][]) {
        const id = `w${w}${kind}`;
        meaning.set(id, { kind });
        const namespace = this.sources.namespace ?? DEFAULT_OUTCOME_NAMESPACE;
        queries.push(metricQuery(id, namespace, name, { Worker: worker }, 'Sum'));
      }
    });
    queueNames.forEach((queue, q) => {
      const id = `q${q}age`;
      meaning.set(id, { queue });
      queries.push(metricQuery(id, 'AWS/SQS', 'ApproximateAgeOfOldestMessage', { QueueName: queue }, 'Maximum'));
    });
    const end = Math.floor(now / 60_000) * 60_000 + 60_000;
    const start = end - CHART_BUCKETS * PERIOD_SECONDS * 1000;
    const counts = new Map<number, Record<string, number>>();
    const queueAges: Record<string, { seconds: number; at: number }> = {};
    let quarantinedEntries = 0;
    try {
      let token: string | undefined;
      do {
        const out = await cloudwatch.send(
          new GetMetricDataCommand({
            MetricDataQueries: queries,
            StartTime: new Date(start),
            EndTime: new Date(end),
            ...(token ? { NextToken: token } : {}),
          }),
        );
        for (const result of out.MetricDataResults ?? []) {
          const what = meaning.get(result.Id ?? '');
          const times = result.Timestamps ?? [];
          const values = result.Values ?? [];
          if (!what) continue;
          times.forEach((time, i) => {
            const at = time.getTime();
            const value = values[i] ?? 0;
            if ('queue' in what) {
              const known = queueAges[what.queue];
              if (!known || at > known.at) queueAges[what.queue] = { seconds: value, at };
            } else if (what.kind === 'quarantined') quarantinedEntries += value;
            else {
              const bucket = counts.get(at) ?? {};
              bucket[what.kind] = (bucket[what.kind] ?? 0) + value;
              counts.set(at, bucket);
            }
          });
        }
        token = out.NextToken;
      } while (token);
      this.notes.delete('metrics');
    } catch (error) {
      this.notes.set('metrics', `Throughput and queue ages from CloudWatch metrics: ${errorMessage(error)}`);
      return undefined;
    }
    const throughput = [];
    for (let at = start; at < end; at += PERIOD_SECONDS * 1000) throughput.push({ at, counts: counts.get(at) ?? {} });
    return { throughput, queueAges, quarantinedEntries };
  }
}

function metricQuery(
  id: string,
  namespace: string,
  name: string,
  dimensions: Record<string, string>,
  stat: string,
): MetricDataQuery {
  return {
    Id: id,
    MetricStat: {
      Metric: {
        Namespace: namespace,
        MetricName: name,
        Dimensions: Object.entries(dimensions).map(([Name, Value]) => ({ Name, Value })),
      },
      Period: PERIOD_SECONDS,
      Stat: stat,
    },
    ReturnData: true,
  };
}
