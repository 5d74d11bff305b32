import type { Logger } from '../logging/logger.js';
import type { OptionNames } from '../options/checkOptions.js';
import type { S3ObjectStore } from '../s3/S3ObjectStore.js';
import type { FirstRunPolicy } from './adaptiveFirstRun.js';
import type { ReadDeadline } from './readGuard.js';

/*
 * What processObject is given (ProcessObjectOptions, checked by name with checkOptions) and what one
 * of its rounds is given (RoundOptions): the store, the delivery's kind, the first-run policy, and
 * the limits on memory, size and time a round's read and transform keep to.
 */

/** Options for {@link processObject}. */
export interface ProcessObjectOptions {
  readonly store: S3ObjectStore;
  /** @default silentLogger */
  readonly logger?: Logger;
  /**
   * How many times to start over after losing a publish race (412) or a multipart conflict (409)
   * before giving up with a retryable {@link PublishConflictError}.
   * @default 4
   */
  readonly maxRounds?: number;
  /**
   * This call is provably the first delivery of its event (the batch handler decides it with
   * isFreshDelivery: the message's first receive, and younger than one invocation's time limit).
   * Only then may the event's eTag alone prove the output current (src/done/eventProvesCurrent.ts).
   * Otherwise an earlier attempt may have died anywhere: after its publish and before its closing
   * check (so the done-check asks S3 about the input, as that check would have), or between a side
   * output and the main output (so side objects the final output does not list are removed).
   * @default false: the full done-check, for a caller that cannot tell
   */
  readonly freshDelivery?: boolean;
  /**
   * This delivery is S3's own first delivery of an ObjectCreated event (the batch handler decides it:
   * a fresh delivery that carries the event's time; rerun's own messages never do). The first round
   * then skips the done-check and creates the output at once with `If-None-Match: *`: a new object
   * costs its GET and its PUT, with no round trip before the work. A 412 means an output is there (an
   * overwrite, or a duplicate delivery): the round is a lost race, and the next one runs the
   * done-check, which finds it done or replaces it. Only for an event that gives the input's size,
   * at most `CREATE_FIRST_MAX_BYTES`; the worker's `firstRun: 'check'` turns it off, and its
   * `firstRun: 'adaptive'` (the default) asks `firstRunPolicy` per delivery.
   * @default false: the done-check first
   */
  readonly createFirst?: boolean;
  /**
   * Chooses, for the worker's `firstRun: 'adaptive'`, whether a delivery that may create first
   * (`createFirst`) does, and learns from what the first round found (an output in place or not) and
   * what the delivery ended with (src/worker/adaptiveFirstRun.ts). The batch handler keeps one per
   * sandbox. Either answer is safe: it only picks between two paths that are each correct.
   * @default none: 'adaptive' creates first, as a policy that has learnt nothing would
   */
  readonly firstRunPolicy?: FirstRunPolicy;
  /**
   * Every removal of a deleted input looks again once every build that read it before the delete has
   * ended (the batch handler's do: src/batch/removalLookAgain.ts). Then an output this call *created*
   * needs no closing check of the input (step 6): the only way the input can have changed under a
   * create and stay unseen is a delete, and the look again removes what the create left. A replace
   * still closes with the check (a revert to older bytes is no delete).
   * @default false: step 6 after every publish
   */
  readonly removalsLookAgain?: boolean;
  /**
   * Admits the transform of an input by its size (see src/batch/MemoryBudget.ts), so that the
   * done-checks of a batch can all run at once while transforms share the function's memory. The
   * done-check itself is never held back: a reservation is taken only before reading a body.
   * @default none: every transform starts at once
   */
  readonly admission?: TransformAdmission;
  /**
   * The largest input one invocation can finish (the stack derives it from the function's memory,
   * timeout and the measured throughput: src/sizing/sizeWorker.ts). A larger one is refused before
   * its body is read, from the event's `size` or the GET's ContentLength, with a non-retryable
   * InputTooLargeError that names the limit and the setting to change: without it such an input
   * times out on every receive until the DLQ.
   * @default no limit
   */
  readonly maxInputBytes?: number;
  /**
   * The invocation's time: while the transform reads, a read that would run into the function's
   * timeout stops before it with a classified outcome (src/worker/readGuard.ts): non-retryable
   * InputTooLargeError when the input cannot finish even in a fresh invocation, else a retryable
   * DeadlineNearError. With maxInputBytes, the decoded bytes a transform reports
   * (`countDecoded`) are judged by the same limit as the stored size.
   * @default none: no time guard
   */
  readonly deadline?: ReadDeadline;
  /**
   * How a wait passes (the batch handler's clock): the pauses of a delivery that found a multipart
   * output completed but not sealed yet, while its writer may still be sealing it (src/worker/sealWait.ts,
   * which waits only with a `deadline`, the only way it knows the function's timeout).
   * @default setTimeout
   */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * The SQS message id of this delivery (the batch handler passes its record's). A multipart output
   * records it until its seal, and a later receive of the same message that finds that output
   * completed but not sealed rebuilds it at once: SQS hands a message out again only once its earlier
   * receive has ended (src/done/sealInProgress.ts). Another delivery waits for the seal.
   * @default none: not recorded, and an unsealed output is judged by its age alone
   */
  readonly messageId?: string;
}

/** The names of {@link ProcessObjectOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const PROCESS_OBJECT_OPTION_NAMES = {
  admission: true,
  createFirst: true,
  deadline: true,
  firstRunPolicy: true,
  freshDelivery: true,
  logger: true,
  maxInputBytes: true,
  maxRounds: true,
  messageId: true,
  removalsLookAgain: true,
  sleep: true,
  store: true,
} as const satisfies OptionNames<ProcessObjectOptions>;

/** What {@link ProcessObjectOptions.admission} needs: a memory budget keyed by input size. */
export interface TransformAdmission {
  /** Reserves at once if possible. */
  tryAcquire(contentLength: number | undefined): (() => void) | undefined;
  /** Waits for a reservation; may throw (e.g. the deadline came near while waiting). */
  acquire(contentLength: number | undefined): Promise<() => void>;
}

export interface HeldMemory {
  release?: () => void;
}

/** What one round is given besides the worker, the event and the logger. */
export interface RoundOptions
  extends Pick<ProcessObjectOptions, 'store' | 'admission' | 'maxInputBytes' | 'deadline' | 'sleep' | 'messageId'> {
  /** The delivery's event's eTag, when it names one: what the delivery would build (sealInProgress.ts). */
  readonly eventEtag?: string | undefined;
  /** Create at once, as if the done-check had found no output (options.createFirst, first round only). */
  readonly skipDoneCheck: boolean;
}
