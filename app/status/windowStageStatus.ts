import { mapWithConcurrency } from '../../src/batch/mapWithConcurrency.js';
import {
  dayOfInputKey,
  type FailureIndexEntry,
  failureIndexDayPrefix,
  parseFailureIndexKey,
} from '../../src/failures/failureIndex.js';
import { windowsIntersecting } from '../../src/partitions/mapWindows.js';
import type { PartitionWindow } from '../../src/partitions/partitionScheme.js';
import type { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import type { WindowTask } from '../../src/window/defineWindowTask.js';
import { WindowStatus } from '../../src/window/judgeWindow.js';
import { judgeWindowHead, WindowOutputState } from '../../src/window/judgeWindowHead.js';
import { listWindowStatus, type WindowStatusReport } from '../../src/window/listWindowStatus.js';
import type { SkippedKey } from '../../src/window/WindowTaskDefinition.js';
import { windowOutputKeys } from '../../src/window/windowOutputLayout.js';
import { alignColumns } from '../alignColumns.js';
import {
  type CoverageInput,
  classifyInputs,
  describeCoverage,
  InputClass,
  type InputCoverage,
  type InputRules,
  isFullyCovered,
  judgeInputCoverage,
} from '../partition/inputCoverage.js';
import { PartitionStatus } from '../partition/judgePartition.js';
import { coverageInput, readRecordedSources } from '../partition/listPartitions.js';

/** One window of a user's window stage, as status reports it. */
export interface WindowStageVerdict {
  /** The window's name (`2026-12-05`, `2026-12-05T13`, `2026-W49`, `2026-12`). */
  readonly window: string;
  readonly status: PartitionStatus;
  readonly reason: string;
  /** Its inputs now (the upstream outputs in it). */
  readonly inputs: number;
  readonly outputKey: string;
  /** Keys under its listings that are in no window of their scheme. */
  readonly skipped: number;
}

/** The state of a window stage's windows over a range. */
export interface WindowStageStatus {
  readonly stage: string;
  /** Where the description came from. */
  readonly from: string;
  /** The stage's grain (`daily`), or its scheme's kind when it is not a time scheme. */
  readonly grain: string;
  readonly codeVersion: string;
  readonly range: { readonly from: string; readonly to: string };
  readonly outputBucket: string;
  /** One verdict per window, in window order. */
  readonly windows: readonly WindowStageVerdict[];
  /** Every state's count (the keys of the reference status, so one SUMMARY reads both). */
  readonly counts: Readonly<Record<PartitionStatus, number>>;
  /**
   * Upstream keys under the windows' listings that are in no window of their scheme (or, beside a
   * window stage's outputs, not its output): never inputs, each with its reason. `first` keeps 20.
   */
  readonly skipped: { readonly count: number; readonly first: readonly SkippedKey[] };
  readonly requests: { readonly list: number; readonly head: number };
}

/** Options of {@link windowStageStatus}. */
export interface WindowStageStatusOptions {
  readonly reader: S3PartitionStore;
  /**
   * HEAD each published, incomplete or stale output and run the window task's done-check on it (integrity
   * against S3's stored SHA-256, metadata against its marker), to report `invalid` ones.
   * @default undefined: listings only
   */
  readonly validateWith?: S3ObjectStore;
  /** Windows judged at once when validating or listing upstream inputs. @default 8 */
  readonly concurrency?: number;
  /**
   * The key rules of the upstream object stage over its input prefix (windowStageInputRules): each
   * published window's upstream inputs are listed too, and a window some of whose inputs have no
   * current output (pending, or changed since their output) is `incomplete`, not `published`.
   * @default undefined: the window's outputs only
   */
  readonly upstreamInputs?: InputRules;
}

/** How many skipped keys a report keeps. */
const FIRST_SKIPPED = 20;

/**
 * `rerun status` of a user's window stage: each window of the range judged by the library's window
 * judge (listWindowStatus, as the window task's own `status`): its inputs' listings (the upstream
 * outputs in it, as a run lists them) and its output folder's listing, then judgeWindow: published,
 * missing, stale (an upstream output added, removed or rebuilt since its publish changes the
 * lineage), invalid (the output changed behind rerun's back); with validation, the done-check of
 * each published output (one HEAD). Keys in no window are counted as skipped with their reason.
 * Sends nothing and writes nothing.
 *
 * @example
 * const report = await windowStageStatus(task, task.scheme.windowsBetween('2026-12-01', '2026-12-05'), { reader });
 * report.counts.stale; // windows whose upstream changed since their publish
 */
export async function windowStageStatus(
  task: WindowTask<unknown, unknown>,
  windows: readonly PartitionWindow[],
  options: WindowStageStatusOptions,
): Promise<Omit<WindowStageStatus, 'from' | 'range' | 'outputBucket'>> {
  const { reader } = options;
  const { definition } = task;
  const listBefore = reader.listRequests;
  const headBefore = reader.headRequests;
  const reports = await listWindowStatus(task, windows, reader);
  let head = 0;
  const skipped: SkippedKey[] = [];
  let skippedCount = 0;
  let verdicts: WindowStageVerdict[] = reports.map((report) => {
    skippedCount += report.skipped.length;
    skipped.push(...report.skipped.slice(0, FIRST_SKIPPED - skipped.length));
    return {
      window: report.window.name,
      status: report.status,
      reason: report.reason,
      inputs: report.inputs,
      outputKey: windowOutputKeys(task.scheme, report.window, definition.output).outputKey,
      skipped: report.skipped.length,
    };
  });
  const rules = options.upstreamInputs;
  const source = task.sources[0];
  if (rules && source) {
    const failures = new FailureIndexCache(reader, definition.output.bucket, rules);
    verdicts = await mapWithConcurrency(verdicts, options.concurrency ?? 8, async (verdict, i) => {
      const report = reports[i];
      if (!report || verdict.status !== WindowStatus.PUBLISHED) return verdict;
      const coverage = await upstreamCoverage(reader, source, report, rules, failures);
      if (isFullyCovered(coverage)) return verdict;
      return {
        ...verdict,
        status: PartitionStatus.INCOMPLETE,
        reason: `output current, but not every upstream input has a current output (${describeCoverage(coverage)})`,
      };
    });
  }
  const store = options.validateWith;
  if (store) {
    verdicts = await mapWithConcurrency(verdicts, options.concurrency ?? 8, async (verdict, i) => {
      const report = reports[i];
      const judgedByHead: readonly PartitionStatus[] = [
        PartitionStatus.PUBLISHED,
        PartitionStatus.STALE,
        PartitionStatus.INCOMPLETE,
      ];
      if (!report || !judgedByHead.includes(verdict.status)) return verdict;
      head++;
      // A stale output is checked against what its marker says was published, a current one against now.
      const judged = judgeWindowHead(await store.head(definition.output.bucket, verdict.outputKey), {
        partition: report.window.name,
        lineageHash: report.published?.lineageHash ?? report.lineageHash,
        codeVersion: report.published?.codeVersion ?? definition.codeVersion,
      });
      if (judged.state === WindowOutputState.MISSING) {
        return { ...verdict, status: PartitionStatus.MISSING, reason: 'output was deleted while checking' };
      }
      if (judged.state === WindowOutputState.INVALID) {
        return { ...verdict, status: PartitionStatus.INVALID, reason: judged.reason };
      }
      if (judged.state === WindowOutputState.OUTDATED && report.published) {
        return {
          ...verdict,
          status: PartitionStatus.INVALID,
          reason: `output metadata disagrees with its manifest marker (${judged.reason})`,
        };
      }
      return verdict;
    });
  }
  const counts = { published: 0, missing: 0, stale: 0, invalid: 0, incomplete: 0 } as Record<PartitionStatus, number>;
  for (const v of verdicts) counts[v.status]++;
  const { spec } = task.scheme;
  const heads = reader.headRequests - headBefore;
  return {
    stage: definition.name,
    grain: spec.kind === 'time' ? spec.grain : spec.kind,
    codeVersion: definition.codeVersion,
    windows: verdicts,
    counts,
    skipped: { count: skippedCount, first: skipped },
    requests: { list: reader.listRequests - listBefore, head: head + heads },
  };
}

/** One upstream source of the task, as the compiled task holds it. */
type TaskSource = WindowTask<unknown, unknown>['sources'][number];

/**
 * The coverage of one window's upstream inputs (app/partition/inputCoverage.ts, the rule rerun's own
 * summary and `rerun status` share): the inputs of the upstream object stage in the window's
 * intersecting windows, listed in the input bucket as the window's lineage is listed in the output
 * bucket, against the window's lineage (output key to LastModified); an output older than its input
 * costs one HEAD, whose recorded source ETag decides. The failure index is listed only for inputs
 * without a current output (a dead-lettered input is a classified outcome, not incomplete).
 */
async function upstreamCoverage(
  reader: S3PartitionStore,
  source: TaskSource,
  report: WindowStatusReport,
  rules: InputRules,
  failures: FailureIndexCache,
): Promise<InputCoverage> {
  const { scheme, listingScheme } = source;
  const wanted = new Set(windowsIntersecting(scheme, report.window).map((w) => w.name));
  const prefixes = listingScheme
    ? listingScheme.prefixesOf(report.window as never)
    : [...wanted].flatMap((name) => scheme.prefixesOf(scheme.parseWindow(name) as never));
  const inputs: CoverageInput[] = [];
  for (const prefix of new Set(prefixes)) {
    for await (const object of reader.list(rules.bucket, { prefix: `${rules.prefix}${prefix}` })) {
      if (object.key.endsWith('/')) continue; // a folder marker is no input
      const reading = scheme.windowOfKey(object.key.slice(rules.prefix.length));
      // An input in no window is the object stage's to judge: its output, if any, is counted skipped here.
      if ('window' in reading && wanted.has(reading.window.name)) inputs.push(coverageInput(object));
    }
  }
  const outputs = new Map(report.lineage.map((entry) => [entry.key, entry.lastModified]));
  const listing = { inputs, outputs, failures: [] as FailureIndexEntry[] };
  const recordedSources = await readRecordedSources(reader, failures.bucket, listing, rules);
  const first = classifyInputs({ ...listing, recordedSources }, rules);
  const uncovered = first.filter((c) => c.class === InputClass.PENDING || c.class === InputClass.OUTDATED);
  if (uncovered.length === 0) return judgeInputCoverage({ ...listing, recordedSources }, rules);
  const indexed = await failures.of(uncovered.map((c) => c.key));
  return judgeInputCoverage({ ...listing, failures: indexed, recordedSources }, rules);
}

/** The failure index entries of the input bucket, listed once per folder (a day, or the keys of none). */
class FailureIndexCache {
  private readonly folders = new Map<string, Promise<FailureIndexEntry[]>>();
  constructor(
    private readonly reader: S3PartitionStore,
    readonly bucket: string,
    private readonly rules: InputRules,
  ) {}

  async of(inputKeys: readonly string[]): Promise<FailureIndexEntry[]> {
    const prefixes = new Set(
      inputKeys.map((key) => failureIndexDayPrefix(this.rules.failurePrefix, this.rules.bucket, dayOfInputKey(key))),
    );
    const lists = await Promise.all([...prefixes].map((prefix) => this.folder(prefix)));
    return lists.flat();
  }

  private folder(prefix: string): Promise<FailureIndexEntry[]> {
    let entries = this.folders.get(prefix);
    if (!entries) {
      entries = (async () => {
        const found: FailureIndexEntry[] = [];
        for await (const object of this.reader.list(this.bucket, { prefix })) {
          const entry = parseFailureIndexKey(object.key);
          if (entry) found.push(entry);
        }
        return found;
      })();
      this.folders.set(prefix, entries);
    }
    return entries;
  }
}

/**
 * One line per window (window, status, inputs, reason) in aligned columns, then the first keys in
 * no window with their reason, plain text.
 *
 * @example
 * process.stdout.write(formatWindowStageStatus(report));
 * // WINDOW      STATUS     INPUTS  REASON
 * // 2026-12-05  published  3       up to date (3 inputs)
 */
export function formatWindowStageStatus(report: Pick<WindowStageStatus, 'windows' | 'skipped'>, shown = 5): string {
  if (report.windows.length === 0) return 'No window in the range.\n';
  const rows = report.windows.map((w) => [
    w.window,
    w.status,
    String(w.inputs),
    w.skipped > 0 ? `${w.reason}; ${w.skipped} key(s) in no window skipped` : w.reason,
  ]);
  const lines = [alignColumns([['WINDOW', 'STATUS', 'INPUTS', 'REASON'], ...rows])];
  if (report.skipped.count > 0) {
    lines.push('', `Skipped, in no window (${report.skipped.count}):`);
    lines.push(alignColumns(report.skipped.first.slice(0, shown).map((s) => [`  ${s.key}`, s.reason])));
    if (report.skipped.count > shown) lines.push(`  ... (--json lists the first ${FIRST_SKIPPED})`);
  }
  return `${lines.join('\n')}\n`;
}
