import { S3PartitionStore } from '../../app/partition/S3PartitionStore.js';
import { summarizePartition } from '../../app/partition/summarizePartition.js';
import type { SummaryLayout } from '../../app/partition/summaryLayout.js';
import { topology } from '../../app/topology.js';
import { RerunError } from '../../src/errors.js';
import type { Day } from '../../src/keys/partition.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { Actor } from './Scheduler.js';
import { INPUT_BUCKET, OUTPUT_BUCKET, type SimWorld } from './SimWorld.js';

/** The summary stage's layout over the simulated worker's outputs (`out/in/dt=D/...`, `quarantine/in/dt=D/...`). */
export const SIM_SUMMARY_LAYOUT: SummaryLayout = {
  source: INPUT_BUCKET,
  outputPrefix: 'out/',
  quarantinePrefix: 'quarantine/',
  summaryPrefix: 'summaries/',
};

/** The simulated summary stage's code version. */
export const SIM_SUMMARY_CODE_VERSION = 'summarize-sim@1';

/** How one summary task ended, as its handler would report it. */
export interface SummaryTaskOutcome {
  readonly actor: string;
  readonly status: 'processed' | 'skipped';
  readonly reason: string;
  readonly lineageHash: string;
}

/** What the summary deliveries of one execution share. */
export interface SummarySetup {
  readonly day: Day;
  /** Every task's outcome, in the order they returned. */
  readonly outcomes: SummaryTaskOutcome[];
  /** Tasks that failed for good or were dead-lettered (none may be: no day here is poison). */
  readonly failures: string[];
}

/**
 * One delivery of a summary task for `setup.day`, run as the summarize handler runs it
 * (createSummarizeHandler: summarizePartition with an S3ObjectStore and an S3PartitionStore over
 * the function's S3 client), called directly rather than through a simulated queue: the summarize
 * queue is FIFO with one message group per partition (and one per weekday for the schedule), which
 * the SQS model does not implement, and a standard queue would let two messages of one group run at
 * once, which FIFO forbids. Two deliveries racing are the two groups that can hold one day at once:
 * a backfill's `dt=D` and the schedule's `schedule-<weekday>`.
 *
 * A crash at any request boundary, or a retryable failure, returns the message after the queue's
 * visibility timeout (`receiveCount` + 1), up to its maxReceiveCount; then it is dead-lettered.
 */
export function spawnSummaryTask(world: SimWorld, setup: SummarySetup, id: string, receiveCount = 1): Actor {
  const { scheduler } = world;
  const { maxReceiveCount, visibilityTimeoutSeconds } = topology.summarize;
  const redeliver = (why: string) => {
    if (receiveCount < maxReceiveCount) spawnSummaryTask(world, setup, `${id}'`, receiveCount + 1);
    else setup.failures.push(`${id}: dead-lettered after ${receiveCount} receives (${why})`);
  };
  const actor = scheduler.spawn(
    id,
    async (self) => {
      // A redelivery: the group's message returns once its visibility timeout has passed.
      if (receiveCount > 1) await scheduler.sleep(self, visibilityTimeoutSeconds * 1000);
      const { s3 } = world.clientsFor(self);
      const store = new S3ObjectStore(s3, {
        minPartBytes: world.s3.minPartBytes,
        conflictRetry: { random: () => 0.5, sleep: (ms) => scheduler.sleep(self, ms) },
      });
      const reader = new S3PartitionStore(s3);
      try {
        const outcome = await summarizePartition(setup.day, {
          store,
          reader,
          bucket: OUTPUT_BUCKET,
          layout: SIM_SUMMARY_LAYOUT,
          codeVersion: SIM_SUMMARY_CODE_VERSION,
        });
        setup.outcomes.push({
          actor: self.id,
          status: outcome.status,
          reason: outcome.reason,
          lineageHash: outcome.lineageHash,
        });
      } catch (error) {
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        if (error instanceof RerunError && error.retryable) redeliver(message);
        else setup.failures.push(`${self.id}: failed, not retryable: ${message}`);
      }
    },
    { crashable: true },
  );
  actor.onCrash = () => redeliver('crashed');
  return actor;
}
