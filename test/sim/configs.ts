import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { RecordOutcome } from '../../src/worker/outcomes.js';
import { processObject } from '../../src/worker/processObject.js';
import {
  type ExploredFirstRun,
  Receiver,
  spawnPoller,
  spawnPruner,
  spawnRedrive,
  spawnUploader,
  type Tamper,
  tamper,
  type Upload,
} from './actors.js';
import type { SimConfig } from './explore.js';
import { fullModeOf } from './fullMode.js';
import { checkPipeline, checkSummary } from './invariants.js';
import { SimServiceError } from './model/serviceError.js';
import type { Actor } from './Scheduler.js';
import {
  INPUT_BUCKET,
  MAX_RECEIVE_COUNT,
  OUTPUT_BUCKET,
  OUTPUT_PREFIXES,
  SimWorld,
  VISIBILITY_TIMEOUT_SECONDS,
} from './SimWorld.js';
import { INPUT_PREFIX, simWorker } from './simWorker.js';
import { SIM_SUMMARY_CODE_VERSION, SIM_SUMMARY_LAYOUT, type SummarySetup, spawnSummaryTask } from './summaryActor.js';

/** How long after its event a dead letter is redriven: its receives, then an operator's look. */
const REDRIVE_AFTER_MS = (MAX_RECEIVE_COUNT + 1) * VISIBILITY_TIMEOUT_SECONDS * 1000;

/** Multipart parts in the simulation: 16 bytes, so an output of a few lines has several parts. */
export const SIM_PART_BYTES = 16;

/** The input key every configuration writes (a space, a `+`: S3's form encoding in events). */
export const SIM_INPUT_KEY = `${INPUT_PREFIX}dt=2026-01-05/a b+c.csv`;

/** The day of {@link SIM_INPUT_KEY}: the partition the summary stage summarizes. */
export const SIM_DAY = '2026-01-05';

/** What one pipeline configuration runs. */
export interface PipelineSpec {
  readonly name: string;
  /**
   * Content uploaded and processed before the concurrent part starts (one request at a time, no
   * choice), so the race begins from a built output.
   * @default nothing: the race begins from empty buckets
   */
  readonly before?: string;
  /** Deliver the event of `before` once more during the race (a duplicate, or a stale event). */
  readonly redeliverBefore?: boolean;
  /**
   * Changes made to the outputs of `before` behind the pipeline before the race (an operator's
   * `aws s3 rm`, a buggy job), so that the race's deliveries must find and repair them.
   * @default none
   */
  readonly tamperBefore?: readonly Tamper[];
  /**
   * Delete the input of `before` with its event lost (a paused mapping, a purged queue) before the
   * race: only `rerun reprocess --prune` can remove its outputs then. @default false
   */
  readonly deleteBeforeUnnoticed?: boolean;
  /**
   * The history of a redrive, after `before` was built: `other` content was uploaded and a delivery
   * of its event read it; `before`'s bytes were uploaded again and that event's delivery found the
   * output built from them done; then the first delivery published `other`'s output and died before
   * its closing check (the input check after the publish). Its message's next receives failed (an
   * outage) and it was dead-lettered, with `other`'s event in it. Some time later, during the race,
   * an operator redrives the DLQ: the message comes back new, receive count 1, its event as old as
   * it is. The state is built directly, one request at a time (the history's end, not its steps).
   * @default no redrive
   */
  readonly redriveStale?: { readonly other: string };
  /**
   * The input bucket is versioned, as RerunPipeline creates it (every write has its event, naming
   * its version). @default true
   */
  readonly versioned?: boolean;
  /** S3's 409 on a conditional completion overtaken by a delete of its key (S3Model). @default false */
  readonly conditionalConflicts?: boolean;
  /**
   * S3's 409 on a conditional PutObject that another write of its key overtook (S3Model): each such
   * put is two steps, its upload beginning and ending. @default false
   */
  readonly putConflicts?: boolean;
  /** Told of each 409 a PutObject answers (with `putConflicts`), so a test can see the model reached. */
  readonly onPutConflict?: () => void;
  /** Copies of the event of `before` delivered during the race. @default 1 with `redeliverBefore` */
  readonly redeliverCopies?: number;
  /** The uploader's operations on the input key during the race, in order. */
  readonly uploads: readonly Upload[];
  /** Copies S3 delivers of each event of the race (2: every event is delivered twice). @default 1 */
  readonly eventCopies?: number;
  /** Lambda sandboxes on the work queue at once. @default 2 */
  readonly pollers?: number;
  /** Crashes per execution, at most. */
  readonly crashes: number;
  /** The ledger-backed webhook after each output. @default false */
  readonly notify?: boolean;
  /** `rerun reprocess --prune` runs during the race. @default false */
  readonly prune?: boolean;
  /**
   * The input's content never changes during the race and nothing is tampered with: then, without
   * a crash, no delivery may rebuild a valid output (a duplicate finds it done, a lost race leaves
   * the winner's in place). A rebuild there is wasted work and, worse, the sign of a window in which
   * the output was missing a side output that someone removed.
   * @default false
   */
  readonly stableContent?: boolean;
  /**
   * Deliveries of a summary task for the day of the input (the summary stage, app/partition/),
   * started with the race and racing each other; checked by checkSummary after quiescence.
   * @default 0: no summary stage
   */
  readonly summaryDeliveries?: number;
  readonly maxDepth?: number;
  /** Multipart part size (and the in-memory S3's smallest part). @default SIM_PART_BYTES */
  readonly partBytes?: number;
  /**
   * Each sandbox's first run of S3's fresh deliveries is its own nondeterministic decision ('create'
   * or 'check', both explored), each told here. @default the handler's AdaptiveFirstRun
   */
  readonly exploreFirstRun?: ExploredFirstRun | undefined;
}

/**
 * A configuration of the pipeline: an uploader, S3's events, Lambda sandboxes running the real
 * batch handler (processObject for creates, removeOutputs for deletes), and optionally the
 * webhook through the real ledger and a concurrent `rerun reprocess --prune`.
 */
export function pipelineConfig(spec: PipelineSpec): SimConfig {
  const partBytes = spec.partBytes ?? SIM_PART_BYTES;
  const worker = simWorker({ partBytes });
  let receiver: Receiver | undefined;
  let uploader: Actor | undefined;
  let outcomes: RecordOutcome[] = [];
  let summary: SummarySetup = { day: SIM_DAY, outcomes: [], failures: [] };
  const summaryDeliveries = spec.summaryDeliveries ?? 0;
  const lineageFrozen =
    summaryDeliveries > 0 &&
    spec.uploads.length === 0 &&
    !spec.redeliverBefore &&
    (spec.redeliverCopies ?? 0) === 0 &&
    !spec.prune &&
    !spec.tamperBefore;
  return {
    name: spec.name,
    crashes: spec.crashes,
    ...fullModeOf(spec.name),
    ...(spec.maxDepth !== undefined ? { maxDepth: spec.maxDepth } : {}),
    // Only the uploader writes the input bucket: once it is done, reads of the input commute with
    // everything. Without uploads, redeliveries or prune, nothing writes the day's normalized outputs
    // after the start either: the summary stage's listings and reads of its lineage commute too.
    frozen: (resource) =>
      (resource.startsWith(`s3:${INPUT_BUCKET}/`) && uploader?.status === 'done') ||
      (lineageFrozen && OUTPUT_PREFIXES.some((prefix) => resource.startsWith(`s3:${OUTPUT_BUCKET}/${prefix}`))),
    setUp(scheduler) {
      uploader = undefined;
      outcomes = [];
      summary = { day: SIM_DAY, outcomes: [], failures: [] };
      const world = new SimWorld(scheduler, {
        minPartBytes: partBytes,
        eventCopies: spec.eventCopies ?? 1,
        ...(spec.versioned !== undefined ? { versioned: spec.versioned } : {}),
        ...(spec.conditionalConflicts ? { conditionalConflicts: true } : {}),
        ...(spec.putConflicts ? { putConflicts: true } : {}),
      });
      const told = spec.onPutConflict;
      if (told) {
        world.onRequest = ({ name, error }) => {
          if (name === 'PutObject' && error instanceof SimServiceError && error.$metadata.httpStatusCode === 409)
            told();
        };
      }
      receiver = new Receiver(scheduler);
      world.parts.push(receiver);
      const setup = {
        worker,
        minPartBytes: partBytes,
        notify: spec.notify ?? false,
        receiver,
        batchSize: 1,
        outcomes,
        ...(spec.exploreFirstRun ? { exploreFirstRun: spec.exploreFirstRun } : {}),
      };
      for (let i = 1; i <= (spec.pollers ?? 2); i++) spawnPoller(world, setup, `lambda-${i}`);
      const race = () => {
        uploader = spawnUploader(world, SIM_INPUT_KEY, spec.uploads);
        if (spec.prune) spawnPruner(world, worker);
        if (spec.redriveStale) spawnRedrive(world);
        for (let i = 1; i <= summaryDeliveries; i++) spawnSummaryTask(world, summary, `summary-${i}`);
      };
      if (spec.before === undefined) {
        race();
        return world;
      }
      const before = spec.before;
      // The state before the race: the input uploaded and its output built, one request at a time.
      scheduler.spawn('before', async (self) => {
        world.notifications = false;
        await world.request(self, 'S3', 'PutObject', { Bucket: INPUT_BUCKET, Key: SIM_INPUT_KEY, Body: before });
        world.notifications = true;
        const store = new S3ObjectStore(world.clientsFor(self).s3, { minPartBytes: partBytes });
        const event = world.lastEvent();
        await processObject(worker, event, { store });
        if (spec.tamperBefore) await tamper(world, self, SIM_INPUT_KEY, spec.tamperBefore);
        if (spec.deleteBeforeUnnoticed) {
          world.notifications = false;
          await world.request(self, 'S3', 'DeleteObject', { Bucket: INPUT_BUCKET, Key: SIM_INPUT_KEY });
          world.notifications = true;
        }
        if (spec.redriveStale) {
          world.notifications = false;
          await world.request(self, 'S3', 'PutObject', {
            Bucket: INPUT_BUCKET,
            Key: SIM_INPUT_KEY,
            Body: spec.redriveStale.other,
          });
          const stale = world.lastEvent();
          await processObject(worker, stale, { store });
          await world.request(self, 'S3', 'PutObject', { Bucket: INPUT_BUCKET, Key: SIM_INPUT_KEY, Body: before });
          world.notifications = true;
          await world.sendEvent(self, stale, world.dlqUrl);
          // maxReceiveCount receives a visibility timeout apart, then the operator's look at the DLQ.
          await scheduler.sleep(self, REDRIVE_AFTER_MS);
        }
        const copies = spec.redeliverCopies ?? (spec.redeliverBefore ? 1 : 0);
        for (let copy = 0; copy < copies; copy++) await world.sendEvent(self, event);
        race();
      });
      return world;
    },
    check(world) {
      const violations = checkPipeline(world, {
        inputKey: SIM_INPUT_KEY,
        codeVersion: worker.codeVersion,
        ...(receiver ? { receiver } : {}),
        notify: spec.notify ?? false,
        ...(summaryDeliveries > 0 ? { summaryPrefix: SIM_SUMMARY_LAYOUT.summaryPrefix } : {}),
      });
      if (summaryDeliveries > 0) {
        violations.push(
          ...checkSummary(world, {
            inputKey: SIM_INPUT_KEY,
            day: SIM_DAY,
            layout: SIM_SUMMARY_LAYOUT,
            codeVersion: SIM_SUMMARY_CODE_VERSION,
            setup: summary,
            stableLineage: lineageFrozen,
          }),
        );
      }
      const crashed = world.scheduler.all().some((a) => a.status === 'crashed');
      if (spec.stableContent && !crashed) {
        for (const o of outcomes) {
          // A valid output is never rebuilt, nor one that a live writer is sealing: a duplicate that
          // finds the other delivery between its completion and its seal waits for the seal
          // (src/worker/sealWait.ts); without a crash no writer is dead.
          if (/output replaced/.test(o.reason)) {
            violations.push(`a delivery rebuilt a valid output: ${o.reason}`);
          }
        }
      }
      return violations;
    },
  };
}

/** Inputs: a single-part or a multipart output, with or without bad rows (a quarantine side output). */
export const CONTENT = {
  small: 'a\nb\n',
  smallBad: 'a\n!x\n',
  small2: 'c\nd\n',
  smallBad2: 'c\n!y\n',
  /** 36 bytes of output: 3 parts of 16 bytes. */
  large: 'row one\nrow two\nrow three\nrow four\n',
  large2: 'row 5\nrow six\nrow seven\nrow eight\n',
  /** A multipart output and a single-part quarantine. */
  largeBad: 'row one\n!x\nrow two\nrow three\n!y\nrow four\n',
  largeBad2: 'row 5\n!x\nrow six\nrow seven\n!z\nrow eight\n',
  /** A multipart output and a multipart quarantine (18 bytes). */
  largeBadLarge: 'row one\n!bad one\nrow two\nrow three\n!bad two\nrow four\n',
  /**
   * Rows the summary stage reads: its normalized inputs must be JSON objects (upper-cased, these
   * stay JSON), its quarantine lines may be anything. One record, one quarantined row.
   */
  summarizable: '{"n":1}\n!x\n',
} as const;

/** The contents of the grid: single-part or multipart output, with or without a side output. */
const SHAPES = {
  'single-part': [CONTENT.small, CONTENT.small2],
  'single-part+side': [CONTENT.smallBad, CONTENT.smallBad2],
  multipart: [CONTENT.large, CONTENT.large2],
  'multipart+side': [CONTENT.largeBad, CONTENT.largeBad2],
} as const;

/**
 * The bounded configurations the simulation tier explores exhaustively: each operation on the
 * input, for each shape of output, with up to `crashes` crashes at any request boundary.
 *
 * - create: one upload, its event delivered twice, two sandboxes racing on it;
 * - overwrite: content built, then new content uploaded while the old event is delivered again
 *   (an old event after new content, an overwrite between an event and its requests, writers of
 *   two contents racing);
 * - delete: content built, then the input deleted while its event is delivered again (a delivery
 *   that read the input before the delete, and the removal racing it);
 * - create then delete: from empty buckets, an upload and its deletion, the create (S3's first
 *   delivery creates at once, with no closing check) racing the removal and its look again;
 * - recreate: content built, deleted and uploaded again with the same bytes (the same ETag) while
 *   the deletion propagates;
 * - revert: content built, then other content, then the first bytes again (the same ETag) while
 *   the first overwrite is being built (a delivery of the older content must not win after the
 *   revert's delivery found the output done), with and without a side output;
 * - revert while building: from empty buckets, content, other content and the first again, so that a
 *   delivery of the first content that lost its create removes the quarantine it made while the
 *   revert's delivery publishes an output listing those same bytes (no crash only);
 * - tamper: content built, then its quarantine removed (or, without one, its main output
 *   corrupted) behind the pipeline, and its event delivered twice more: the done-checks of both
 *   deliveries must see it, and their repairs race;
 * - notify: the webhook through the ledger, on two deliveries of one upload;
 * - prune: `rerun reprocess --prune` running while a deletion propagates, and after a delete whose
 *   event was lost while the same bytes are uploaded again;
 * - summary: two deliveries of the day's summary task racing (app/partition/summarizePartition.ts),
 *   over a day already built, and (no crash only) while the day's one upload is processed.
 */
export function boundedConfigs(crashes: number): SimConfig[] {
  const configs: SimConfig[] = [];
  for (const [shape, [first, second]] of Object.entries(SHAPES)) {
    const multipartWithSide = shape === 'multipart+side';
    configs.push(
      pipelineConfig({
        name: `create ${shape}, crashes ${crashes}`,
        uploads: [{ put: first }],
        eventCopies: 2,
        stableContent: true,
        crashes,
      }),
      pipelineConfig({
        name: `overwrite ${shape}, crashes ${crashes}`,
        before: first,
        redeliverBefore: true,
        uploads: [{ put: second }],
        crashes,
      }),
      pipelineConfig({
        name: `delete ${shape}, crashes ${crashes}`,
        before: first,
        redeliverBefore: true,
        uploads: [{ delete: true }],
        crashes,
      }),
      pipelineConfig({
        name: `tamper ${shape}, crashes ${crashes}`,
        before: first,
        tamperBefore: shape.endsWith('+side') ? [{ remove: 'quarantine' }] : [{ corrupt: 'main' }],
        redeliverCopies: 2,
        uploads: [],
        crashes,
      }),
    );
    // From empty buckets: S3's first delivery creates at once, with no closing check of the input
    // (processObject's createFirst), while the input is deleted. A create that read the input before
    // the delete and lands after its removal is removed by the removal's look again
    // (src/batch/removalLookAgain.ts), which arrives only once that create's invocation has ended.
    if (!(multipartWithSide && crashes > 0)) {
      configs.push(
        pipelineConfig({
          name: `create then delete ${shape}, crashes ${crashes}`,
          uploads: [{ put: first }, { delete: true }],
          crashes,
        }),
      );
    }
    // The largest: with a crash, covered by the random exploration instead (test/sim/random.test.ts).
    if (!(multipartWithSide && crashes > 0)) {
      configs.push(
        pipelineConfig({
          name: `recreate ${shape}, crashes ${crashes}`,
          before: first,
          uploads: [{ delete: true }, { put: first }],
          crashes,
        }),
      );
    }
  }
  configs.push(
    // Without side outputs nothing but the check of the input after the publish (processObject's
    // step 6) sees the revert; with them, the closing done-check after the quarantine's removal
    // sees it as well, and a crash between the publish and that check leaves it to the redelivery.
    pipelineConfig({
      name: `revert single-part, crashes ${crashes}`,
      before: CONTENT.small,
      uploads: [{ put: CONTENT.small2 }, { put: CONTENT.small }],
      crashes,
    }),
    pipelineConfig({
      name: `revert single-part+side, crashes ${crashes}`,
      before: CONTENT.smallBad,
      uploads: [{ put: CONTENT.small2 }, { put: CONTENT.smallBad }],
      crashes,
    }),
    // From empty buckets: a delivery of the first content loses its create to the second content's
    // and, settling on that output, removes the quarantine it created, while the revert's delivery
    // accepts that same object (the same bytes, the same ETag) and publishes an output listing it.
    // Neither sees the other's change but by the closing done-check (processObject's step 5). Without
    // a crash only: it has 300,000 states, and with a crash it is left to the random exploration.
    ...(crashes === 0
      ? [
          pipelineConfig({
            name: 'revert while building single-part+side, crashes 0',
            uploads: [{ put: CONTENT.smallBad }, { put: CONTENT.small2 }, { put: CONTENT.smallBad }],
            crashes,
          }),
        ]
      : []),
    pipelineConfig({
      name: `notify single-part+side, crashes ${crashes}`,
      uploads: [{ put: CONTENT.smallBad }],
      eventCopies: 2,
      notify: true,
      stableContent: true,
      crashes,
    }),
    // The summary stage: two deliveries of the day's task racing (the schedule's message group and
    // a backfill's), over a day already built (its lineage never changes: each must end current,
    // published once) and over a day whose one upload is processed while they run.
    pipelineConfig({
      name: `summary of a built day single-part+side, crashes ${crashes}`,
      before: CONTENT.summarizable,
      uploads: [],
      summaryDeliveries: 2,
      crashes,
    }),
    // With a crash it is left to the random exploration (test/sim/random.test.ts).
    ...(crashes === 0
      ? [
          pipelineConfig({
            name: 'summary after create single-part+side, crashes 0',
            uploads: [{ put: CONTENT.summarizable }],
            summaryDeliveries: 2,
            crashes,
          }),
        ]
      : []),
    // A delete whose event was lost, then the same bytes uploaded again while the prune runs: the prune
    // may list the input gone and delete the outputs after the re-upload's delivery found them done
    // (the same ETag). No delete event looks again here: only the prune's own look back (a HEAD of the
    // input after its deletes, removeOutputs' step 4) brings the output back.
    pipelineConfig({
      name: `prune after a lost delete, racing the same bytes again single-part, crashes ${crashes}`,
      before: CONTENT.small,
      deleteBeforeUnnoticed: true,
      uploads: [{ put: CONTENT.small }],
      prune: true,
      crashes,
    }),
    // A dead letter redriven long after its event (isFreshDelivery: a new message, receive count 1,
    // but its event older than a function timeout): the delivery that died before its closing check
    // left an output of content the input no longer has, and only the full done-check of the
    // redriven message sees it.
    pipelineConfig({
      name: `redrive of a stale dead letter single-part, crashes ${crashes}`,
      before: CONTENT.small,
      redriveStale: { other: CONTENT.small2 },
      uploads: [],
      crashes,
    }),
    // The same with a quarantine side output: the dead delivery left the other content's quarantine
    // too, listed by its output, and the redriven message's rebuild must replace both. (It does not
    // catch fresh-ignores-event-age: the redriven message's first round creates at once and replaces
    // the quarantine, which then no longer has the ETag the stale output lists, so the next round's
    // done-check rebuilds whatever the event's age.)
    pipelineConfig({
      name: `redrive of a stale dead letter single-part+side, crashes ${crashes}`,
      before: CONTENT.smallBad,
      redriveStale: { other: CONTENT.smallBad2 },
      uploads: [],
      crashes,
    }),
    // A non-versioned input bucket: the same bytes written again and new content written at the
    // same time, one event naming the first write's ETag (the output's source ETag) and no version.
    // The event's eTag proves nothing there (eventProvesCurrent): the delivery must read the input.
    pipelineConfig({
      name: `two writes at once, one event, non-versioned single-part, crashes ${crashes}`,
      before: CONTENT.small,
      uploads: [{ together: [CONTENT.small, CONTENT.small2] }],
      versioned: false,
      eventCopies: 2,
      crashes,
    }),
    // S3's 409 ConditionalRequestConflict: a delivery of the old event creates the multipart output
    // at once (If-None-Match) while the delete's removal deletes the output under its upload; the
    // completion that the delete overtook answers 409, and the delivery starts over.
    pipelineConfig({
      name: `delete multipart, 409 on a completion a delete overtook, crashes ${crashes}`,
      before: CONTENT.large,
      redeliverBefore: true,
      uploads: [{ delete: true }],
      conditionalConflicts: true,
      crashes,
    }),
    // S3's 409 ConditionalRequestConflict on a PutObject: two deliveries of one upload create the
    // single-part output at once (If-None-Match), each put's upload in flight between two steps; the
    // one that the other's write overtook answers 409, is retried by the store (S3ObjectStore.put,
    // full jitter) and then finds the output there (412, the done-check).
    pipelineConfig({
      name: `create single-part, 409 on a put another write overtook, crashes ${crashes}`,
      uploads: [{ put: CONTENT.small }],
      eventCopies: 2,
      stableContent: true,
      putConflicts: true,
      crashes,
    }),
    pipelineConfig({
      name: `prune after delete single-part+side, crashes ${crashes}`,
      before: CONTENT.smallBad,
      redeliverBefore: true,
      uploads: [{ delete: true }],
      prune: true,
      crashes,
    }),
  );
  return configs;
}
