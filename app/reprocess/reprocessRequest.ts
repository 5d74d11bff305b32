import type { ReprocessEngine } from './batchOperationsJob.js';
import type { ReprocessMode } from './planReprocess.js';

/**
 * What `rerun reprocess` was asked, from its options: the command turns them into this, and the
 * wing (reprocessWithEngine.ts) checks it against the stage and the target (reprocessArgs.ts).
 */
export interface ReprocessRequest {
  /** `--prefix` (default: the stage's input prefix). */
  readonly prefix?: string | undefined;
  readonly mode: ReprocessMode;
  /** `--engine` (default sqs); `engineGiven` says whether it was given. */
  readonly engine: ReprocessEngine;
  readonly engineGiven: boolean;
  readonly rate?: number | undefined;
  readonly timeoutSeconds?: number | undefined;
  readonly pollIntervalMs?: number | undefined;
  readonly verifyConcurrency?: number | undefined;
  /** `--shards`: key ranges listed at once. */
  readonly listShards?: number | undefined;
  /** `--code-overlap` in seconds (default: the worker's timeout and a minute). */
  readonly codeOverlapSeconds?: number | undefined;
  readonly dryRun: boolean;
  readonly wait: boolean;
  readonly verify: boolean;
  readonly prune: boolean;
  readonly json: boolean;
  /** `--job`: a Batch Operations job to attach to. */
  readonly job?: string | undefined;
  /** `--manifest`: the job's manifest (batch-operations), or the inputs' inventory (sqs). */
  readonly manifest?: string | undefined;
  /** `--output-manifest`: the outputs' inventory. */
  readonly outputManifest?: string | undefined;
  /** `--generate-manifest`, with `--created-after` / `--created-before`. */
  readonly generateManifest: boolean;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  /** `--queue-url` and `--dlq-url`: the normalize queue and its DLQ (default: the target's). */
  readonly queueUrl?: string | undefined;
  readonly dlqUrl?: string | undefined;
  /** `--function-arn` and `--role-arn`: a Batch Operations job's function and role on AWS. */
  readonly functionArn?: string | undefined;
  readonly roleArn?: string | undefined;
}
