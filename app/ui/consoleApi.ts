import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { type Day, dayOfInstant, daysInWindow } from '../../src/keys/partition.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { referenceInputRules } from '../cli/inputRules.js';
import { SUMMARIZE_CODE_VERSION } from '../partition/codeVersion.js';
import type { InputRules } from '../partition/inputCoverage.js';
import { S3PartitionStore } from '../partition/S3PartitionStore.js';
import { summaryLayout } from '../partition/summaryLayout.js';
import { referenceRecheck } from '../redrive/recheckDeadLetter.js';
import { type DeadLetter, redriveDeadLetters } from '../redrive/redriveDeadLetters.js';
import { type RunView, readRuns } from '../runs/runProgressFile.js';
import { partitionStatus, type StatusReport } from '../status/partitionStatus.js';
import type { WorkerTopology } from '../topology.js';
import { CloudWatchFeed, type CloudWatchSnapshot } from './cloudWatchFeed.js';
import type { ConsoleSource } from './consoleSource.js';
import { type InputPage, inputDaySpan, listInputPage, UNDATED } from './dayInputs.js';
import { LiveFeed, type LiveSnapshot } from './liveFeed.js';
import { type ObjectPreview, previewObject } from './objectPreview.js';

/** The longest window one days request judges (the days view pages by window). */
export const MAX_WINDOW_DAYS = 62;
/** The most inputs one page lists. */
export const MAX_PAGE = 200;

/** A queue's depth as SQS attributes tell it. */
export interface QueueDepth {
  readonly name: string;
  readonly url: string;
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  /** Age of its oldest message (AWS/SQS ApproximateAgeOfOldestMessage) and the datapoint's time. */
  readonly oldest?: { readonly seconds: number; readonly at: number };
}

/** The live view: outcomes, queues, and the runs of `rerun reprocess` and `rerun backfill` on this machine. */
export interface LiveView {
  /** Where outcomes come from: a running `rerun dev`'s journal, or a deployed stack's CloudWatch. */
  readonly from: 'dev' | 'cloudwatch';
  readonly feed?: LiveSnapshot | CloudWatchSnapshot;
  readonly queues: readonly QueueDepth[];
  readonly runs: readonly RunView[];
  readonly notes: readonly string[];
}

/** A DLQ as the console shows it: what `rerun redrive --dry-run` shows, and the command to act. */
export interface DeadLetterView {
  readonly worker: string;
  readonly dlqUrl: string;
  readonly depth: number;
  readonly inFlight: number;
  readonly letters: readonly DeadLetter[];
  /** Age of the oldest inspected message (from SentTimestamp), seconds. */
  readonly oldestAgeSeconds?: number;
  /** The exact command that moves them back (the console moves nothing). */
  readonly command: string;
  readonly notes: readonly string[];
}

/**
 * The console's read-only API: each method is one view, computed by the library functions the CLI
 * uses (`partitionStatus` of `rerun status`, `classifyInputs`, `redriveDeadLetters` in dry-run mode of
 * `rerun redrive --dry-run`), over the guarded clients of its {@link ConsoleSource}.
 *
 * @example
 * const api = new ConsoleApi(source);
 * const days = await api.days('2026-01-01', '2026-01-14');
 */
export class ConsoleApi {
  private readonly reader: S3PartitionStore;
  private readonly rules: InputRules;
  private readonly recorder: S3FailureRecorder;
  private readonly feed?: LiveFeed;
  private cloudFeed?: CloudWatchFeed;
  private readonly letters = new Map<string, { at: number; view: Promise<DeadLetterView> }>();

  private readonly now: () => number;

  constructor(
    readonly source: ConsoleSource,
    private readonly options: {
      /** The days view's first window. @default the 14 days up to today */
      readonly window?: { readonly from: Day; readonly to: Day };
      /** @default Date.now */
      readonly now?: () => number;
      /**
       * How the stage's inputs are judged (app/cli/pipelineStage.ts, stageInputRules).
       * @default the reference normalizer's (referenceInputRules)
       */
      readonly rules?: InputRules;
    } = {},
  ) {
    const { target } = source;
    this.now = options.now ?? Date.now;
    this.reader = new S3PartitionStore(target.clients.s3);
    this.rules = options.rules ?? referenceInputRules(target);
    this.recorder = new S3FailureRecorder({
      store: new S3ObjectStore(target.clients.s3),
      sqs: target.clients.sqs,
      bucket: target.outputBucket,
      prefix: target.topology.failurePrefix,
    });
    if (source.session) this.feed = new LiveFeed(source.session.journal);
  }

  /**
   * What the console looks at. The first window is the 14 days up to today, or, when none of them has
   * inputs, the 14 days up to the last day that has (the demo's samples are dated 2026-03).
   */
  async overview() {
    const { target, kind, session } = this.source;
    const today = dayOfInstant(this.now());
    const span = await inputDaySpan(target.clients.s3, target.inputBucket, this.rules.prefix);
    const recent = defaultWindow(today);
    const window = this.options.window ?? (span && span.last < recent.from ? defaultWindow(span.last) : recent);
    return {
      kind,
      where: target.where,
      appName: target.appName,
      ...(target.stack ? { stackName: target.stack.stackName } : {}),
      inputBucket: target.inputBucket,
      inputPrefix: this.rules.prefix,
      outputBucket: target.outputBucket,
      codeVersion: SUMMARIZE_CODE_VERSION,
      today,
      window,
      ...(span ? { inputDays: span } : {}),
      live: session ? 'dev' : 'cloudwatch',
    };
  }

  /** `rerun status` of a window, judged by inputs as well (no more than {@link MAX_WINDOW_DAYS}). */
  async days(from: Day, to: Day): Promise<StatusReport> {
    const days = daysInWindow(from, to);
    if (days.length > MAX_WINDOW_DAYS) throw new RangeError(`at most ${MAX_WINDOW_DAYS} days per request`);
    const { target } = this.source;
    return partitionStatus({
      reader: this.reader,
      bucket: target.outputBucket,
      layout: summaryLayout(target.inputBucket, target.topology),
      codeVersion: SUMMARIZE_CODE_VERSION,
      from,
      to,
      inputs: this.rules,
      validateWith: new S3ObjectStore(target.clients.s3),
    });
  }

  /** One page of a day's (or the undated) inputs, classified. */
  async inputs(day: Day | typeof UNDATED, after: string | undefined, limit: number): Promise<InputPage> {
    if (day !== UNDATED) daysInWindow(day, day); // refuses anything but a valid day
    return listInputPage(
      {
        reader: this.reader,
        s3: this.source.target.clients.s3,
        outputBucket: this.source.target.outputBucket,
        rules: this.rules,
        readFailure: (queue, id) => this.recorder.read(queue, id),
      },
      day,
      { ...(after ? { after } : {}), limit: Math.min(Math.max(1, limit), MAX_PAGE) },
    );
  }

  /** An input's output and quarantine: metadata and first lines. */
  async output(inputKey: string): Promise<{ output?: ObjectPreview; quarantine?: ObjectPreview; outputKey: string }> {
    const { target } = this.source;
    const source = { bucket: target.inputBucket, key: inputKey };
    const outputKey = this.rules.outputKey(source);
    const quarantineKey = this.rules.quarantineKey?.(source);
    const [output, quarantine] = await Promise.all([
      previewObject(target.clients.s3, target.outputBucket, outputKey),
      quarantineKey ? previewObject(target.clients.s3, target.outputBucket, quarantineKey) : undefined,
    ]);
    return { outputKey, ...(output ? { output } : {}), ...(quarantine ? { quarantine } : {}) };
  }

  /**
   * Outcomes since `afterSeq` (a running `rerun dev`'s journal, or a deployed stack's CloudWatch),
   * the queues' depths (and ages, where CloudWatch has them), and the runs of `rerun reprocess` and
   * `rerun backfill` on this machine that work on this pipeline (app/runs/runProgressFile.ts).
   */
  async live(afterSeq: number): Promise<LiveView> {
    const { target } = this.source;
    const { topology } = target;
    const queues: { name: string; url: string }[] = [];
    for (const worker of [topology.normalize, topology.summarize]) {
      const urls = await this.source.queueUrls(worker).catch(() => undefined);
      if (!urls) continue;
      queues.push({ name: `${worker.name} queue`, url: urls.queue }, { name: `${worker.name} DLQ`, url: urls.dlq });
    }
    const runs = readRuns(target, { now: this.now });
    const depths = await Promise.all(queues.map((q) => this.depth(q.name, q.url)));
    if (this.feed) {
      return { from: 'dev', feed: await this.feed.poll(this.now(), afterSeq), queues: depths, runs, notes: [] };
    }
    const cloudWatch = this.source.cloudWatch;
    if (!cloudWatch) return { from: 'cloudwatch', queues: depths, runs, notes: [] };
    this.cloudFeed ??= new CloudWatchFeed({
      ...cloudWatch,
      workers: [topology.normalize.name, topology.summarize.name],
      queueNames: queues.map((q) => queueNameOfUrl(q.url)),
    });
    const feed = await this.cloudFeed.poll(this.now(), afterSeq);
    const aged = depths.map((d) => {
      const oldest = feed.queueAges[queueNameOfUrl(d.url)];
      return oldest ? { ...d, oldest } : d;
    });
    return { from: 'cloudwatch', feed, queues: aged, runs, notes: feed.notes };
  }

  /**
   * A worker's DLQ inspected as `rerun redrive --dry-run` does (received, shown, made visible again),
   * at most `max` messages; one inspection serves every request for 10 s, so an open page does not
   * keep receiving.
   */
  deadLetters(worker: WorkerTopology, max = 50): Promise<DeadLetterView> {
    const cached = this.letters.get(worker.name);
    if (cached && this.now() - cached.at < 10_000) return cached.view;
    const view = this.inspect(worker, max);
    this.letters.set(worker.name, { at: this.now(), view });
    view.catch(() => this.letters.delete(worker.name));
    return view;
  }

  private async inspect(worker: WorkerTopology, max: number): Promise<DeadLetterView> {
    const { target } = this.source;
    const urls = await this.source.queueUrls(worker);
    const stage = worker.name === target.topology.summarize.name ? 'summarize' : 'normalize';
    const result = await redriveDeadLetters({
      sqs: target.clients.sqs,
      dlqUrl: urls.dlq,
      sourceQueueUrl: urls.queue,
      failures: this.recorder,
      recheck: referenceRecheck(stage),
      max,
      dryRun: true,
    });
    const sent = result.inspected.flatMap((l) => (l.sentAt ? [Date.parse(l.sentAt)] : []));
    const where = target.stack
      ? ` --stack ${target.stack.stackName}`
      : target.appName !== 'rerun'
        ? ` --app-name ${target.appName}`
        : '';
    return {
      worker: worker.name,
      dlqUrl: urls.dlq,
      depth: result.depth,
      inFlight: result.inFlight,
      letters: result.inspected,
      ...(sent.length > 0 ? { oldestAgeSeconds: Math.round((this.now() - Math.min(...sent)) / 1000) } : {}),
      command: `rerun redrive --queue ${worker.name}${where}`,
      notes: result.notes,
    };
  }

  private async depth(name: string, url: string): Promise<QueueDepth> {
    const out = await this.source.target.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
    );
    const n = (k: string) => Number(out.Attributes?.[k as keyof typeof out.Attributes] ?? 0);
    return {
      name,
      url,
      visible: n('ApproximateNumberOfMessages'),
      inFlight: n('ApproximateNumberOfMessagesNotVisible'),
      delayed: n('ApproximateNumberOfMessagesDelayed'),
    };
  }
}

/**
 * The default window of the days view: the `days` days up to today (UTC).
 *
 * @example
 * defaultWindow('2026-01-14', 14); // { from: '2026-01-01', to: '2026-01-14' }
 */
export function defaultWindow(today: Day, days = 14): { from: Day; to: Day } {
  return { from: dayOfInstant(Date.parse(`${today}T00:00:00Z`) - (days - 1) * 86_400_000), to: today };
}

/** The queue's name: the last segment of its URL. */
function queueNameOfUrl(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}
