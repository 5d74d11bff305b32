import { RerunError } from '../../src/errors.js';
import type { TimePartitionSpec } from '../../src/partitions/partitionSpec.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { defineWindowTask, type WindowTask } from '../../src/window/defineWindowTask.js';
import type { SkippedKey } from '../../src/window/WindowTaskDefinition.js';
import type { Actor } from './Scheduler.js';
import type { SimWorld } from './SimWorld.js';

/**
 * A user's window task, not rerun's summary: what the simulation tier explores to show that
 * defineWindowTask keeps its promises for a pipeline of someone else's making (issue 31). Its own
 * bucket, its own schemes (daily windows `year=/month=/day=` over an upstream stage's hourly outputs
 * `year=/month=/day=/hour=`), its own output layout and format (one tab-separated line per input:
 * its path, the ETag the build read, its event count), its own validation.
 */

/** The bucket of the user's stage: the upstream's hourly outputs and this task's daily outputs. */
export const LAKE_BUCKET = 'lake';

/** Where the upstream stage writes its hourly outputs (the task's input). */
export const HOURLY_PREFIX = 'hourly/';

/** Where the task writes its daily outputs. */
export const DAILY_PREFIX = 'daily/';

/** The window every configuration builds. */
export const SIM_WINDOW = '2026-01-05';

const HOURLY: TimePartitionSpec = {
  kind: 'time',
  grain: 'hourly',
  template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}',
};
const DAILY: TimePartitionSpec = { kind: 'time', grain: 'daily', template: 'year={yyyy}/month={MM}/day={dd}' };

/** The key of an hourly output of the upstream stage in {@link SIM_WINDOW}. */
export function hourlyKey(hour: string, file: string): string {
  return `${HOURLY_PREFIX}year=2026/month=01/day=05/hour=${hour}/${file}`;
}

/** The task's counts: its build's return value. */
export interface EventCounts {
  readonly files: number;
  readonly events: number;
}

/** One line of the task's output: an input it read, the ETag it read it at, and its events. */
export interface CountLine {
  readonly path: string;
  readonly etag: string;
  readonly events: number;
}

/** Reads the task's output format, or the reason it is not one. */
export function parseCounts(bytes: Uint8Array): CountLine[] | string {
  const text = Buffer.from(bytes).toString('utf8');
  if (text !== '' && !text.endsWith('\n')) return 'the last line is cut short';
  const lines: CountLine[] = [];
  for (const line of text.split('\n').slice(0, -1)) {
    const match = /^([^\t]+)\t([0-9a-f]+(?:-\d+)?)\t(\d+)$/.exec(line);
    if (!match) return `a line is not "path<TAB>etag<TAB>events": ${JSON.stringify(line)}`;
    lines.push({ path: match[1] as string, etag: match[2] as string, events: Number(match[3]) });
  }
  return lines;
}

/** The events of one hourly output: its non-empty lines. */
export function countEvents(content: string): number {
  return content.split('\n').filter((line) => line !== '').length;
}

/** The code version of the user's task. */
export const SIM_WINDOW_CODE_VERSION = 'daily-event-counts@1';

/** The most inputs one run builds in the configurations with parts: each hour is a part of its own. */
export const SIM_PARTS_MAX_INPUTS = 1;

/** The body of one input, whole. */
async function readAll(body: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The user's task: daily event counts over the hourly outputs of an upstream stage. With `parts`, a
 * day of more than {@link SIM_PARTS_MAX_INPUTS} inputs is built from its hours: each hour's lines
 * by `build`, then the day by `combine`, which concatenates them (the bytes a direct build gives).
 */
export function dailyEventCounts(options: { readonly parts?: boolean } = {}): WindowTask<EventCounts> {
  return defineWindowTask<EventCounts>({
    ...(options.parts
      ? {
          parts: {
            grain: 'hourly' as const,
            async combine(hours, writer) {
              let files = 0;
              let events = 0;
              for await (const hour of hours) {
                const lines = parseCounts(Buffer.from(await readAll(hour.body), 'utf8'));
                if (typeof lines === 'string') throw new Error(`a part is not the task's format: ${lines}`);
                for (const line of lines) {
                  writer.write(`${line.path}\t${line.etag}\t${line.events}\n`);
                  files++;
                  events += line.events;
                }
              }
              return { files, events };
            },
          },
        }
      : {}),
    name: 'daily-event-counts',
    codeVersion: SIM_WINDOW_CODE_VERSION,
    partitions: DAILY,
    inputs: [{ name: 'hourly', prefix: HOURLY_PREFIX, partitions: HOURLY }],
    output: {
      bucket: LAKE_BUCKET,
      prefix: DAILY_PREFIX,
      fileName: 'counts.tsv',
      contentType: 'text/tab-separated-values',
    },
    async build(inputs, writer) {
      let files = 0;
      let events = 0;
      for await (const input of inputs) {
        const n = countEvents(await readAll(input.body));
        writer.write(`${input.path}\t${input.etag}\t${n}\n`);
        files++;
        events += n;
      }
      return { files, events };
    },
    validate(bytes) {
      const parsed = parseCounts(bytes);
      return typeof parsed === 'string' ? parsed : undefined;
    },
  });
}

/** The queue of the user's task (a standard queue; one message per window and delivery). */
export const WINDOW_QUEUE = { maxReceiveCount: 3, visibilityTimeoutSeconds: 60 } as const;

/** How one delivery ended, as the user's handler would report it. */
export interface WindowTaskOutcome {
  readonly actor: string;
  readonly status: 'processed' | 'skipped';
  readonly reason: string;
  readonly lineageHash: string;
  readonly skipped: readonly SkippedKey[];
}

/** What the deliveries of one execution share. */
export interface WindowTaskSetup {
  readonly task: WindowTask<EventCounts>;
  /** The most inputs one run builds (a larger day is built from its parts), or the task's default. */
  readonly maxInputs?: number;
  readonly outcomes: WindowTaskOutcome[];
  /** Deliveries that failed for good or were dead-lettered (none may be: no window here is poison). */
  readonly failures: string[];
}

/**
 * One delivery of the user's task for {@link SIM_WINDOW}, run as a user's handler runs it
 * (`task.run(window, { store, reader })` over the function's S3 client). A crash at any request
 * boundary, or a retryable failure, returns the message after the visibility timeout, up to the
 * queue's maxReceiveCount; then it is dead-lettered.
 */
export function spawnWindowDelivery(world: SimWorld, setup: WindowTaskSetup, id: string, receiveCount = 1): Actor {
  const { scheduler } = world;
  const redeliver = (why: string) => {
    if (receiveCount < WINDOW_QUEUE.maxReceiveCount) spawnWindowDelivery(world, setup, `${id}'`, receiveCount + 1);
    else setup.failures.push(`${id}: dead-lettered after ${receiveCount} receives (${why})`);
  };
  const actor = scheduler.spawn(
    id,
    async (self) => {
      if (receiveCount > 1) await scheduler.sleep(self, WINDOW_QUEUE.visibilityTimeoutSeconds * 1000);
      const { s3 } = world.clientsFor(self);
      const store = new S3ObjectStore(s3, {
        minPartBytes: world.s3.minPartBytes,
        conflictRetry: { random: () => 0.5, sleep: (ms) => scheduler.sleep(self, ms) },
      });
      try {
        const outcome = await setup.task.run(SIM_WINDOW, {
          store,
          reader: new S3PartitionStore(s3),
          ...(setup.maxInputs !== undefined ? { maxInputs: setup.maxInputs } : {}),
        });
        setup.outcomes.push({
          actor: self.id,
          status: outcome.status,
          reason: outcome.reason,
          lineageHash: outcome.lineageHash,
          skipped: outcome.skipped,
        });
      } catch (error) {
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        if (RerunError.isRerunError(error) && error.retryable) redeliver(message);
        else setup.failures.push(`${self.id}: failed, not retryable: ${message}`);
      }
    },
    { crashable: true },
  );
  actor.onCrash = () => redeliver('crashed');
  return actor;
}
