import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { type Day, dayOfInstant, daysInWindow } from '../../src/keys/partition.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { referenceInputRules } from '../common/inputRules.js';
import { SUMMARIZE_CODE_VERSION } from '../partition/codeVersion.js';
import type { InputRules } from '../partition/inputCoverage.js';
import { S3PartitionStore } from '../partition/S3PartitionStore.js';
import { summaryLayout } from '../partition/summaryLayout.js';
import { type RunView, readRuns } from '../runs/runProgressFile.js';
import { partitionStatus, type StatusReport } from '../status/partitionStatus.js';
import { windowStageStatus } from '../status/windowStageStatus.js';
import type { WorkerTopology } from '../topology.js';
import { CloudWatchFeed, type CloudWatchSnapshot } from './cloudWatchFeed.js';
import { type ConsoleDay, type ConsoleDaysReport, UNJUDGED } from './consoleDays.js';
import type { ConsoleDaysJudge } from './consoleDaysJudge.js';
import { type DeadLetterView, MAX_DEAD_LETTERS, readDeadLetters } from './consoleDeadLetters.js';
import type { ConsoleSource } from './consoleSource.js';
import { defaultWindow, latestInputWindow, windowsOfDays } from './consoleWindows.js';
import { type InputPage, inputDaySpan, listInputPage, UNDATED } from './dayInputs.js';
import { LiveFeed, type LiveSnapshot } from './liveFeed.js';
import { type ObjectPreview, previewObject } from './objectPreview.js';
import { type QueueDepth, queueNameOfUrl, readQueueDepth } from './queueDepth.js';
import { countInputDays, stageInputGroup } from './stageInputDays.js';
import { layoutView } from './stageInputLayout.js';
import {
  listUndatedWindowInputs,
  listWindowInputPage,
  type UndatedWindowInputPage,
  type WindowInputPage,
} from './windowInputs.js';
import { type WindowStageQueue, windowStageQueues } from './windowStageQueues.js';

/** The longest window one days request judges (the days view pages by window). */
export const MAX_WINDOW_DAYS = 62;
/** The most inputs one page lists. */
export const MAX_PAGE = 200;
/** The most windows one days request judges for a stage of another grain than daily (a month of hours). */
export const MAX_WINDOWS = 744;

/** The live view: outcomes, queues, and the runs of `rerun reprocess` and `rerun backfill` on this machine. */
export interface LiveView {
  /** Where outcomes come from: a running `rerun dev`'s journal, or a deployed stack's CloudWatch. */
  readonly from: 'dev' | 'cloudwatch';
  readonly feed?: LiveSnapshot | CloudWatchSnapshot;
  readonly queues: readonly QueueDepth[];
  readonly runs: readonly RunView[];
  readonly notes: readonly string[];
}

/**
 * The console's read-only API: each method is one view, computed by the library functions the CLI
 * uses (`partitionStatus` of `rerun status`, `classifyInputs`, the failure records `rerun redrive` reads),
 * over the guarded clients of its {@link ConsoleSource}.
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
  private windowQueues?: Promise<{ readonly queues: readonly WindowStageQueue[]; readonly notes: readonly string[] }>;

  private readonly now: () => number;

  constructor(
    readonly source: ConsoleSource,
    private readonly options: {
      /** The days view's first window. @default the 14 days up to today */
      readonly window?: { readonly from: Day; readonly to: Day };
      /** @default Date.now */
      readonly now?: () => number;
      /**
       * How the stage's inputs are judged (app/common/pipelineStage.ts, stageInputRules).
       * @default the reference normalizer's (referenceInputRules)
       */
      readonly rules?: InputRules;
      /**
       * How the days view judges a user's pipeline (resolveConsoleDaysJudge): its window stage, or
       * its inputs alone when it has none.
       * @default rerun's own daily summary (the reference pipeline)
       */
      readonly judge?: ConsoleDaysJudge;
      /**
       * The user's object stage the worker queue feeds: its queue rows are labelled by it (`clean queue`).
       * @default the worker's name (rerun's own pipeline: `normalize queue`)
       */
      readonly objectStage?: string;
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
   * inputs, the 14 days up to the last day that has (the demo's samples are dated 2026-03): the last
   * `dt=` day of the inputs, or on a user's window stage the day of its inputs' latest window in
   * their own partition scheme (latestInputWindow).
   */
  async overview() {
    const { target, kind, session } = this.source;
    const { judge } = this.options;
    const today = dayOfInstant(this.now());
    const latest = await this.latestInput();
    const span = judge ? undefined : await inputDaySpan(target.clients.s3, target.inputBucket, this.rules.prefix);
    const last = latest?.day ?? span?.last;
    const recent = defaultWindow(today);
    const window = this.options.window ?? (last && last < recent.from ? defaultWindow(last) : recent);
    // The window stages whose queues the Live and Dead letters views show (a user's pipeline only).
    const windowQueues = (await this.stageQueues()).queues.map((q) => q.stage);
    // A user's pipeline: the stage the days view judges, with its own code version (never the reference summary's).
    const stage = judge
      ? {
          codeVersion: judge.kind === 'window' ? judge.codeVersion : undefined,
          stage: { name: judge.stage, kind: judge.kind, from: judge.from },
        }
      : { codeVersion: SUMMARIZE_CODE_VERSION };
    return {
      kind,
      where: target.where,
      appName: target.appName,
      ...(target.stack ? { stackName: target.stack.stackName } : {}),
      inputBucket: target.inputBucket,
      inputPrefix: this.rules.prefix,
      outputBucket: target.outputBucket,
      ...stage,
      today,
      window,
      ...(span ? { inputDays: span } : {}),
      ...(latest ? { latestInput: latest } : {}),
      ...(windowQueues.length > 0 ? { windowQueues } : {}),
      ...(judge?.kind === 'inputs' ? { inputLayout: layoutView(judge.layout) } : {}),
      live: session ? 'dev' : 'cloudwatch',
      ...(session ? { session: { pid: session.pid, startedAt: session.startedAt, endpoint: session.endpoint } } : {}),
    };
  }

  /**
   * The latest window with inputs, in the scheme of a user's window stage or of its object stage's
   * own layout (latestInputWindow); none on rerun's own pipeline (its `dt=` days are spanned instead).
   */
  private async latestInput() {
    const { judge } = this.options;
    const { s3 } = this.source.target.clients;
    if (judge?.kind === 'window') return latestInputWindow(judge.task, s3);
    if (judge?.kind !== 'inputs' || judge.layout.kind !== 'days') return undefined;
    const { scheme } = judge.layout;
    return latestInputWindow(
      { sources: [{ source: { prefix: this.rules.prefix }, bucket: this.rules.bucket, scheme }] },
      s3,
    );
  }

  /**
   * `rerun status` of a window, judged by inputs as well (no more than {@link MAX_WINDOW_DAYS}): rerun's
   * daily summary on its reference pipeline; on a user's, its window stage's windows as `rerun status
   * --stage` judges it, or, with no window stage, each day's inputs counted and not judged.
   */
  async days(from: Day, to: Day): Promise<StatusReport | ConsoleDaysReport> {
    const days = daysInWindow(from, to);
    if (days.length > MAX_WINDOW_DAYS) throw new RangeError(`at most ${MAX_WINDOW_DAYS} days per request`);
    const { target } = this.source;
    const { judge } = this.options;
    if (judge?.kind === 'window') return this.windowDays(judge, from, to);
    if (judge?.kind === 'inputs') return this.inputDays(judge, days);
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

  /**
   * The windows of a user's window stage (its days, or the hours, weeks or months of the days asked
   * for), judged by the library's window judge (windowStageStatus).
   */
  private async windowDays(
    judge: Extract<ConsoleDaysJudge, { kind: 'window' }>,
    from: Day,
    to: Day,
  ): Promise<ConsoleDaysReport> {
    const { task } = judge;
    const { spec } = task.scheme;
    const grain = spec.kind === 'time' && spec.grain !== 'daily' ? spec.grain : undefined;
    const judged = await windowStageStatus(
      task,
      grain ? windowsOfDays(task, from, to, MAX_WINDOWS) : task.scheme.windowsBetween(from, to),
      {
        reader: this.reader,
        validateWith: new S3ObjectStore(this.source.target.clients.s3),
        ...(judge.upstreamInputs ? { upstreamInputs: judge.upstreamInputs } : {}),
      },
    );
    return {
      from,
      to,
      stage: { name: judge.stage, kind: 'window', codeVersion: judged.codeVersion, ...(grain ? { grain } : {}) },
      partitions: judged.windows.map((w) => ({
        day: w.window,
        status: w.status,
        reason: w.reason,
        inputs: w.inputs,
        outputKey: w.outputKey,
        skipped: w.skipped,
      })),
      counts: judged.counts,
      requests: judged.requests,
    };
  }

  /**
   * The days of a user's pipeline with no window stage: each day's inputs counted by the stage's own
   * layout (one listing each), none judged; none at all when its layout has no days (`note` says why).
   */
  private async inputDays(judge: Extract<ConsoleDaysJudge, { kind: 'inputs' }>, days: readonly Day[]) {
    const before = this.reader.listRequests;
    const counted = await countInputDays(this.reader, this.rules, judge.layout, days);
    const partitions = (counted ?? []).map(
      (inputs, i): ConsoleDay => ({
        day: days[i] as Day,
        status: UNJUDGED,
        reason: `stage "${judge.stage}" has no window stage after it: nothing summarizes the day, so it is not judged`,
        inputs,
      }),
    );
    const report: ConsoleDaysReport = {
      from: days[0] as Day,
      to: days.at(-1) as Day,
      stage: { name: judge.stage, kind: 'inputs' },
      partitions,
      ...(judge.layout.kind === 'all' ? { note: judge.layout.note } : {}),
      counts: partitions.length > 0 ? { [UNJUDGED]: partitions.length } : {},
      requests: { list: this.reader.listRequests - before, head: 0 },
    };
    return report;
  }

  /**
   * The drill-down of a day of the days view (`/api/inputs`): on a user's window stage, one page of
   * one of its windows (any grain), listed by the stage's own scheme (listWindowInputPage), and as
   * undated the objects directly under its input's root (listUndatedWindowInputs); otherwise
   * {@link ConsoleApi.inputs}.
   */
  async drillDown(
    day: string,
    after: string | undefined,
    limit: number,
  ): Promise<InputPage | WindowInputPage | UndatedWindowInputPage> {
    const { judge } = this.options;
    if (judge?.kind !== 'window') return this.inputs(day === UNDATED ? UNDATED : (day as Day), after, limit);
    const size = Math.min(Math.max(1, limit), MAX_PAGE);
    if (day === UNDATED) {
      const page = { ...(after ? { after } : {}), limit: size };
      return listUndatedWindowInputs(judge.task, judge.stage, this.source.target.clients.s3, page);
    }
    return listWindowInputPage(judge.task, judge.stage, day, this.reader, { ...(after ? { after } : {}), limit: size });
  }

  /** One page of a day's (or the undated) inputs, classified; a user's object stage's by its own layout. */
  async inputs(day: Day | typeof UNDATED, after: string | undefined, limit: number): Promise<InputPage> {
    if (day !== UNDATED) daysInWindow(day, day); // refuses anything but a valid day
    const { judge } = this.options;
    const group = judge?.kind === 'inputs' ? stageInputGroup(judge.layout, this.rules.prefix, day) : undefined;
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
      group,
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
    const queues: { name: string; url: string; stage?: string; worker?: string }[] = [];
    for (const worker of [topology.normalize, topology.summarize]) {
      const urls = await this.source.queueUrls(worker).catch(() => undefined);
      if (!urls) continue;
      // A user's object stage's queue by the stage's name (`clean queue`); rerun's own by its worker's.
      const label = (worker === topology.normalize && this.options.objectStage) || worker.name;
      queues.push(
        { name: `${label} queue`, url: urls.queue, worker: worker.name },
        { name: `${label} DLQ`, url: urls.dlq, worker: worker.name },
      );
    }
    // Each window stage's queue and DLQ, labelled by its stage.
    const stages = await this.stageQueues();
    for (const q of stages.queues) {
      queues.push(
        { name: `${q.stage} queue`, stage: q.stage, url: q.queue },
        { name: `${q.stage} DLQ`, stage: q.stage, url: q.dlq },
      );
    }
    const runs = readRuns(target, { now: this.now });
    const depths = await Promise.all(
      queues.map(async (q) => {
        const depth = await readQueueDepth(target.clients.sqs, q.name, q.url);
        return { ...depth, ...(q.stage ? { stage: q.stage } : {}), ...(q.worker ? { worker: q.worker } : {}) };
      }),
    );
    const notes = stages.notes;
    if (this.feed) {
      return { from: 'dev', feed: await this.feed.poll(this.now(), afterSeq), queues: depths, runs, notes: [...notes] };
    }
    const cloudWatch = this.source.cloudWatch;
    if (!cloudWatch) return { from: 'cloudwatch', queues: depths, runs, notes: [...notes] };
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
    return { from: 'cloudwatch', feed, queues: aged, runs, notes: [...notes, ...feed.notes] };
  }

  /**
   * A DLQ as the console shows it, never received from (readDeadLetters): a worker's, or the user's
   * window stage's of that name (`queue` is then the stage's name).
   */
  async deadLetters(queue: WorkerTopology | string, max = MAX_DEAD_LETTERS): Promise<DeadLetterView> {
    const chosen = typeof queue === 'string' ? (await this.stageQueues()).queues.find((q) => q.stage === queue) : queue;
    if (!chosen) throw new RangeError(`no window stage named ${queue} has queues the console knows`);
    const view = await readDeadLetters({ source: this.source, recorder: this.recorder, now: this.now }, chosen, max);
    const { objectStage } = this.options;
    if (!objectStage || chosen !== this.source.target.topology.normalize) return view;
    // rerun redrive takes the user's object stage by its own name, as the view is headed.
    const command = view.command.replace(`--queue ${view.worker}`, `--queue ${objectStage}`);
    return { ...view, objectStage, command };
  }

  /** The user's window stages' queues (windowStageQueues), read once. */
  private stageQueues() {
    this.windowQueues ??= windowStageQueues(this.source.target);
    return this.windowQueues;
  }
}
