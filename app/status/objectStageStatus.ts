import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { alignColumns } from '../alignColumns.js';
import { type PlanningStage, planningWorker } from '../common/pipelineStage.js';
import type { PipelineTarget } from '../common/pipelineTarget.js';
import { readCodeVersionCutoff } from '../reprocess/codeVersionCutoff.js';
import { deterministicKeyMapping } from '../reprocess/outputKeyMapping.js';
import { ReprocessMode, ReprocessState } from '../reprocess/planReprocess.js';
import type { StateCounts } from '../reprocess/reprocessResult.js';
import { runReprocess } from '../reprocess/runReprocess.js';
import { S3ListingReader } from '../reprocess/S3ListingReader.js';

/** One input (or, for an orphan, one output) that is not current, as status reports it. */
export interface ObjectStageEntry {
  readonly state: ReprocessState;
  readonly inputKey?: string;
  readonly outputKey: string;
  readonly reason: string;
}

/** The state of an object stage's inputs under a prefix. */
export interface ObjectStageStatus {
  readonly stage: string;
  /** Where the stage's description came from (`the stack "X"`, a file). */
  readonly from: string;
  readonly prefix: string;
  readonly inputBucket: string;
  readonly outputBucket: string;
  /** Whether each current-looking output got the exact done-check (one HEAD). */
  readonly verify: boolean;
  /** Every verdict by state: `current` inputs are done; `missing`, `stale`, `invalid` and `old-code` are to do. */
  readonly counts: StateCounts;
  /** Inputs to do: what `rerun reprocess` would enqueue (mode stale). */
  readonly toDo: number;
  readonly inputs: number;
  readonly outputs: number;
  /** Outputs older than their input whose recorded source ETag was read (one HEAD each). */
  readonly sourceChecks: number;
  readonly requests: { readonly list: number; readonly lookup: number; readonly head: number };
  /** What the code-version markers say (old-code outputs are told from listings only when known). */
  readonly codeVersion: { readonly known: boolean; readonly note: string };
  /** The first inputs to do and orphans, in key order. */
  readonly first: readonly ObjectStageEntry[];
}

/**
 * `rerun status` of an object stage (one output per input): each input under the prefix judged by
 * the stage's published key rule exactly as `rerun reprocess --dry-run` plans it (the same merge of
 * the two listings; an output older than its input is judged by the source ETag it records, one
 * HEAD; with `verify`, the done-check of every current-looking output). Sends nothing and writes
 * nothing.
 *
 * @example
 * const status = await objectStageStatus(target, stage, { prefix: 'incoming/', verify: false });
 * status.counts.missing; // inputs with no output
 */
export async function objectStageStatus(
  target: PipelineTarget,
  stage: PlanningStage,
  options: { readonly prefix: string; readonly verify: boolean; readonly signal?: AbortSignal },
): Promise<ObjectStageStatus> {
  const reader = new S3ListingReader(target.clients.s3);
  const worker = planningWorker(stage, target.outputBucket, () => {
    throw new Error('objectStageStatus judges a user stage; rerun status judges the reference stage by its windows');
  });
  const overlapMs = (target.topology.normalize.functionTimeoutSeconds + 60) * 1000;
  const cutoff = await readCodeVersionCutoff(
    reader,
    target.outputBucket,
    { prefix: target.topology.codeVersionPrefix, worker: worker.name, codeVersion: worker.codeVersion, overlapMs },
    `stage "${stage.name}" declares no codeVersion: old-code outputs cannot be told`,
  );
  const mappingOf = (rule: PlanningStage['outputKey']) =>
    deterministicKeyMapping({
      inputBucket: target.inputBucket,
      inputPrefix: stage.inputPrefix,
      outputPrefix: rule.prefix,
      suffix: rule.suffix ?? '',
      stripPrefix: rule.stripPrefix ?? '',
    });
  const result = await runReprocess({
    reader,
    store: new S3ObjectStore(target.clients.s3),
    // A dry run sends nothing: a send here would be a defect, and fails loudly.
    sqs: { send: () => Promise.reject(new Error('rerun status sends no message')) },
    queueUrl: '',
    inputBucket: target.inputBucket,
    worker,
    mapping: mappingOf(stage.outputKey),
    sideMappings: Object.values(stage.sideOutputs).map(mappingOf),
    prefix: options.prefix,
    mode: ReprocessMode.STALE,
    verify: options.verify,
    dryRun: true,
    ...(cutoff.state === 'known' ? { codeCutoff: cutoff } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return {
    stage: stage.name,
    from: stage.from,
    prefix: options.prefix,
    inputBucket: target.inputBucket,
    outputBucket: target.outputBucket,
    verify: options.verify,
    counts: result.counts,
    toDo: result.planned,
    inputs: result.plan.inputs,
    outputs: result.plan.outputs,
    sourceChecks: result.plan.sourceChecks,
    // The reader counts every listing page it sent, the code-version markers' too.
    requests: result.requests,
    codeVersion:
      cutoff.state === 'known'
        ? {
            known: true,
            note: `code version ${cutoff.codeVersion} first ran at ${new Date(cutoff.since).toISOString()}: older outputs are old-code`,
          }
        : { known: false, note: cutoff.reason },
    first: result.sample.map((v) => ({
      state: v.state,
      ...(v.inputKey !== undefined ? { inputKey: v.inputKey } : {}),
      outputKey: v.outputKey,
      reason: v.reason,
    })),
  };
}

/** The states in the order a table shows them: done first, then what is to do, then the rest. */
const STATE_ORDER: readonly ReprocessState[] = [
  ReprocessState.CURRENT,
  ReprocessState.MISSING,
  ReprocessState.STALE,
  ReprocessState.INVALID,
  ReprocessState.OLD_CODE,
  ReprocessState.ORPHAN,
  ReprocessState.SKIPPED,
];

/** What each state means, for the table's last column. */
const MEANING: Record<ReprocessState, string> = {
  current: 'done: its output is built from the input as it is now',
  missing: 'to do: no output',
  stale: 'to do: its output was built from other input bytes',
  invalid: 'to do: its output is not an intact rerun output (--verify)',
  'old-code': 'to do: its output was built by another code version',
  orphan: 'an output whose input is gone (rerun reprocess --prune removes it)',
  skipped: "not processed: the stage's own skip rule",
};

/**
 * The human report of {@link objectStageStatus}: a table of the states with their counts, the first
 * inputs to do with their reason, and a closing line with the requests made.
 *
 * @example
 * process.stdout.write(formatObjectStageStatus(status));
 * // STATE    INPUTS  MEANING
 * // current  3       done: its output is built from the input as it is now
 */
export function formatObjectStageStatus(status: ObjectStageStatus, shown = 10): string {
  const rows = STATE_ORDER.filter(
    (s) => s === ReprocessState.CURRENT || s === ReprocessState.MISSING || status.counts[s] > 0,
  ).map((s) => [s, String(status.counts[s]), MEANING[s]]);
  const lines = [alignColumns([['STATE', 'INPUTS', 'MEANING'], ...rows])];
  const first = status.first.slice(0, shown);
  if (first.length > 0) {
    lines.push('', 'First to look at:');
    lines.push(alignColumns(first.map((e) => [`  ${e.state}`, e.inputKey ?? e.outputKey, e.reason])));
    if (status.toDo + status.counts.orphan > first.length) lines.push('  ... (--json lists the first 20)');
  }
  return `${lines.join('\n')}\n`;
}
