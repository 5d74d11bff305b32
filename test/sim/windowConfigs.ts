import { createHash } from 'node:crypto';
import type { SimConfig } from './explore.js';
import { fullModeOf } from './fullMode.js';
import { checkWindowTask } from './invariants.js';
import type { Actor } from './Scheduler.js';
import { SimWorld } from './SimWorld.js';
import {
  countEvents,
  dailyEventCounts,
  hourlyKey,
  LAKE_BUCKET,
  SIM_PARTS_MAX_INPUTS,
  spawnWindowDelivery,
  type WindowTaskSetup,
} from './windowTaskActor.js';

/** One write of an hourly output of the upstream stage: the key and its content. */
export interface HourlyWrite {
  readonly key: string;
  readonly body: string;
}

/** What one configuration of the user's window task runs. */
export interface WindowTaskSpec {
  readonly name: string;
  /** The window's hourly outputs before the deliveries start (written one request at a time, no choice). */
  readonly before: readonly HourlyWrite[];
  /** Writes of the upstream stage while the deliveries run (a late input, an input rewritten), in order. */
  readonly during: readonly HourlyWrite[];
  /** Deliveries of the window's task, racing each other. */
  readonly deliveries: number;
  /** Crashes per execution, at most. */
  readonly crashes: number;
  /** Whether a day of more than one input is built from its hours (WindowTaskDefinition's `parts`). */
  readonly parts?: boolean;
}

/**
 * A key under the window's listing that no hourly window holds (a producer wrote the hour with one
 * digit): every delivery must report it skipped, with its reason.
 */
const NOT_AN_INPUT = hourlyKey('03', 'part-0.jsonl').replace('hour=03', 'hour=3');

/** Contents of the hourly outputs (one event per line). */
export const HOURLY = {
  early: { key: hourlyKey('03', 'part-0.jsonl'), body: '{"e":1}\n{"e":2}\n' },
  evening: { key: hourlyKey('17', 'part-0.jsonl'), body: '{"e":3}\n' },
  /** A late hour of its own. */
  late: { key: hourlyKey('20', 'part-0.jsonl'), body: '{"e":5}\n' },
  /** The early hour rewritten by the upstream stage (a retry of its own): three events instead of two. */
  earlyRewritten: { key: hourlyKey('03', 'part-0.jsonl'), body: '{"e":1}\n{"e":2}\n{"e":4}\n' },
} as const;

/**
 * A configuration of a user's window task (windowTaskActor.ts: daily event counts over an upstream
 * stage's hourly outputs, in a bucket of its own): `deliveries` runs of the same window racing, the
 * upstream stage writing `during` them, up to `crashes` crashes at any request boundary, checked by
 * checkWindowTask once everything settled. Explored to the end in full mode (SimConfig.exhaustive).
 */
export function windowTaskConfig(spec: WindowTaskSpec): SimConfig {
  const task = dailyEventCounts({ parts: spec.parts ?? false });
  const maxInputs = spec.parts ? { maxInputs: SIM_PARTS_MAX_INPUTS } : {};
  const versions = new Map<string, number>();
  for (const write of [...spec.before, ...spec.during]) {
    const etag = createHash('md5').update(write.body).digest('hex');
    versions.set(`${write.key.slice('hourly/'.length)}|${etag}`, countEvents(write.body));
  }
  const stableLineage = spec.during.length === 0;
  let setup: WindowTaskSetup = { task, ...maxInputs, outcomes: [], failures: [] };
  let upstream: Actor | undefined;
  return {
    name: spec.name,
    crashes: spec.crashes,
    ...fullModeOf(spec.name),
    // Only the upstream writer changes the hourly outputs: once it is done (or when there is none),
    // reads and listings of them commute with everything.
    frozen: (resource) =>
      resource.startsWith(`s3:${LAKE_BUCKET}/hourly/`) && (spec.during.length === 0 || upstream?.status === 'done'),
    setUp(scheduler) {
      setup = { task, ...maxInputs, outcomes: [], failures: [] };
      upstream = undefined;
      const world = new SimWorld(scheduler, { minPartBytes: 16, eventCopies: 1 });
      world.s3.createBucket(LAKE_BUCKET);
      scheduler.spawn('before', async (self) => {
        for (const write of [...spec.before, { key: NOT_AN_INPUT, body: '' }]) {
          await world.request(self, 'S3', 'PutObject', { Bucket: LAKE_BUCKET, Key: write.key, Body: write.body });
        }
        if (spec.during.length > 0) {
          upstream = scheduler.spawn('upstream', async (writer) => {
            for (const write of spec.during) {
              await world.request(writer, 'S3', 'PutObject', { Bucket: LAKE_BUCKET, Key: write.key, Body: write.body });
            }
          });
        }
        for (let i = 1; i <= spec.deliveries; i++) spawnWindowDelivery(world, setup, `window-${i}`);
      });
      return world;
    },
    check(world) {
      return checkWindowTask(world, { setup, versions, notInputs: [NOT_AN_INPUT], stableLineage });
    },
  };
}

/**
 * The configurations of a user's window task the simulation tier explores to the end:
 *
 * - two deliveries of a built window racing (the schedule's and a backfill's): each ends with the
 *   output current, published once;
 * - a late input: the upstream stage writes another hour while one delivery builds the window, and
 *   while two race (no crash only: with a crash it outgrows the tier's time);
 * - an input rewritten while one delivery reads it: reads pinned to the listed ETag start the round
 *   over rather than publish counts of a version the lineage does not name.
 */
export function windowTaskConfigs(crashes: number): SimConfig[] {
  const configs = [
    windowTaskConfig({
      name: `window task: two deliveries of a built window, crashes ${crashes}`,
      before: [HOURLY.early, HOURLY.evening],
      during: [],
      deliveries: 2,
      crashes,
    }),
    windowTaskConfig({
      name: `window task: a late input during the build, crashes ${crashes}`,
      before: [HOURLY.early],
      during: [HOURLY.evening],
      deliveries: 1,
      crashes,
    }),
    windowTaskConfig({
      name: `window task: an input rewritten during the build, crashes ${crashes}`,
      before: [HOURLY.early],
      during: [HOURLY.earlyRewritten],
      deliveries: 1,
      crashes,
    }),
  ];
  // A day of two or three inputs built from its hours (one input per run): the parts' own publishes
  // crash and go stale like the window's. Two deliveries of such a day racing, with no crash, are
  // explored within a CPU budget, not to the end (fullMode.ts says why, with its size).
  configs.push(
    windowTaskConfig({
      name: `window task from parts: a late input during the build, crashes ${crashes}`,
      before: [HOURLY.early, HOURLY.evening],
      during: [HOURLY.late],
      deliveries: 1,
      crashes,
      parts: true,
    }),
    windowTaskConfig({
      name: `window task from parts: an input rewritten during the build, crashes ${crashes}`,
      before: [HOURLY.early, HOURLY.evening],
      during: [HOURLY.earlyRewritten],
      deliveries: 1,
      crashes,
      parts: true,
    }),
  );
  if (crashes === 0) {
    configs.push(
      windowTaskConfig({
        name: 'window task from parts: two deliveries of a day racing, crashes 0',
        before: [HOURLY.early, HOURLY.evening],
        during: [],
        deliveries: 2,
        crashes,
        parts: true,
      }),
      windowTaskConfig({
        name: 'window task: a late input while two deliveries race, crashes 0',
        before: [HOURLY.early],
        during: [HOURLY.evening],
        deliveries: 2,
        crashes,
      }),
    );
  }
  return configs;
}
