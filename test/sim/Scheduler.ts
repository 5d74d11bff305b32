import { hash } from 'node:crypto';
import type { Footprint } from './model/S3Model.js';

/**
 * The simulation's scheduler: it owns every await point of the actors that matter, their requests
 * to S3, SQS and DynamoDB (and the sleeps they take). An actor runs freely between requests (plain
 * JavaScript, no I/O); each request it sends waits until the explorer picks it, then is applied to
 * the in-memory model in one atomic step, and only then answered. So one execution is fully
 * determined by the sequence of picks, and any execution can be replayed from that sequence.
 *
 * A crash is a pick too: the actor stops at a request boundary, before the request reaches the
 * service or after the service applied it but before the actor read the answer. Its pending
 * requests are never answered and nothing of its code runs again (no `finally`), as when Lambda's
 * sandbox dies.
 *
 * Time is virtual: the clock moves only when no request can run (to the next sleep's end or the
 * next message that becomes visible), so an execution never waits for real time.
 */
export class Scheduler {
  /** Virtual time, epoch milliseconds. */
  now: number;
  private readonly actors: Actor[] = [];
  private activity = 0;
  /** Every step applied, in order: the trace a failing schedule prints. */
  readonly trace: TraceEntry[] = [];

  constructor(start = Date.UTC(2026, 0, 5, 12)) {
    this.now = start;
  }

  /** Starts an actor. Its body runs at once until its first request. */
  spawn(name: string, body: (actor: Actor) => Promise<void>, options: { crashable?: boolean } = {}): Actor {
    const actor = new Actor(`${name}`, options.crashable ?? false);
    this.actors.push(actor);
    this.activity++;
    void (async () => {
      try {
        await body(actor);
      } catch (error) {
        if (actor.status !== 'crashed') actor.error = error;
      } finally {
        if (actor.status !== 'crashed') actor.status = 'done';
        this.activity++;
      }
    })();
    return actor;
  }

  /** The live actors (not done, not crashed). */
  live(): Actor[] {
    return this.actors.filter((a) => a.status === 'live');
  }

  all(): readonly Actor[] {
    return this.actors;
  }

  /**
   * A request of `actor`: resolves with what `apply` returns (or rejects with what it throws) once
   * the explorer picks it. `enabled` says when it may run (a receive waits for a visible message),
   * `wakeAt` holds it until the clock reaches that time (a sleep).
   */
  request<T>(actor: Actor, spec: StepSpec<T>): Promise<T> {
    if (actor.status !== 'live') return new Promise<T>(() => {});
    this.activity++;
    return new Promise<T>((resolve, reject) => {
      const seq = actor.nextSeq++;
      actor.pending.push({
        ...spec,
        actor,
        seq,
        key: `${actor.id}#${seq}`,
        resolve: resolve as (value: unknown) => void,
        reject,
      } as PendingStep);
    });
  }

  /**
   * A decision of `actor` between `options`, each a step of its own that the explorer may pick, so
   * every branch is explored like an order of requests: the first picked answers, and the others are
   * withdrawn. It touches no resource (an empty footprint): only what follows from it differs.
   */
  decide<T extends string>(actor: Actor, label: string, options: readonly T[]): Promise<T> {
    if (actor.status !== 'live') return new Promise<T>(() => {});
    this.activity++;
    return new Promise<T>((resolve, reject) => {
      const steps: PendingStep[] = options.map((option) => {
        const seq = actor.nextSeq++;
        return {
          label: `${label}: ${option}`,
          footprint: { reads: [], writes: [] },
          apply: () => {
            for (const other of steps) {
              const at = actor.pending.indexOf(other);
              if (at >= 0) actor.pending.splice(at, 1);
            }
            return option;
          },
          actor,
          seq,
          key: `${actor.id}#${seq}`,
          resolve: resolve as (value: unknown) => void,
          reject,
        };
      });
      actor.pending.push(...steps);
    });
  }

  /** A sleep of `ms` virtual milliseconds. */
  sleep(actor: Actor, ms: number): Promise<void> {
    const wakeAt = this.now + Math.max(0, ms);
    return this.request(actor, {
      label: `sleep ${ms} ms`,
      footprint: { reads: [], writes: [] },
      wakeAt,
      invisible: true,
      apply: () => undefined,
    });
  }

  /**
   * Lets every actor run until each is blocked on a request or done. Actors do no I/O outside the
   * scheduler; Node.js streams hand chunks on through nextTick and the microtask queue, both of
   * which Node.js drains before it turns to the next macrotask. So one turn of the event loop
   * (setImmediate) runs everything that the last step set going, unless something queued a
   * macrotask of its own (a timer, an immediate): with `verify`, a second turn checks that nothing
   * did, and throws if it did. The bounded exploration inside `npm test` verifies every settle; the
   * full exploration, which that check covers, takes the one turn.
   */
  async settle({ verify = true }: { readonly verify?: boolean } = {}): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    if (!verify) return;
    const before = this.activity;
    await new Promise((resolve) => setImmediate(resolve));
    if (this.activity !== before) {
      throw new Error(
        'simulation: an actor ran on after the event loop turned once (a timer or setImmediate outside the scheduler?): one turn per settle would miss it',
      );
    }
  }

  /** Requests that may run now (in a deterministic order: actor creation, then request order). */
  enabled(): PendingStep[] {
    const steps: PendingStep[] = [];
    for (const actor of this.actors) {
      if (actor.status !== 'live') continue;
      for (const step of actor.pending) {
        if (step.wakeAt !== undefined && step.wakeAt > this.now) continue;
        if (step.enabled && !step.enabled()) continue;
        steps.push(step);
      }
    }
    return steps;
  }

  /** The earliest `wakeAt` still in the future, if any. */
  nextWake(): number | undefined {
    let next: number | undefined;
    for (const actor of this.live()) {
      for (const step of actor.pending) {
        if (step.wakeAt !== undefined && step.wakeAt > this.now && (next === undefined || step.wakeAt < next)) {
          next = step.wakeAt;
        }
      }
    }
    return next;
  }

  /** Applies a request and answers it (or, with `crashAfter`, applies it and stops its actor). */
  run(step: PendingStep, options: { crashAfter?: boolean } = {}): void {
    const actor = step.actor;
    actor.pending.splice(actor.pending.indexOf(step), 1);
    let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: step.apply() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    this.trace.push({
      at: this.now,
      actor: actor.id,
      label: step.label,
      answer: outcome.ok ? 'ok' : describeError(outcome.error),
      ...(options.crashAfter ? { crash: 'after' as const } : {}),
    });
    if (options.crashAfter) {
      this.crash(actor, 'after');
      return;
    }
    this.activity++;
    // What the actor has seen so far, in order: with its code, it fixes where the actor is.
    actor.seen = hash(
      'sha1',
      `${actor.seen}|${step.label}|${outcome.ok ? digestValue(outcome.value) : `${describeError(outcome.error)} ${digestValue(outcome.error)}`}`,
      'base64',
    );
    if (outcome.ok) step.resolve(outcome.value);
    else step.reject(outcome.error);
  }

  /**
   * The scheduler's part of a state: the clock, and each actor's status and what it has seen. With
   * `forgetCrashed`, a crashed actor is named by its status alone: it never runs again, and what it
   * did is in the world already (its writes, its open uploads, the message it left in flight), so
   * where it crashed changes nothing that can follow. `crashed` names a live actor as if it had
   * just crashed (the state its crash would leave).
   */
  digest({
    forgetCrashed = false,
    crashed,
  }: {
    readonly forgetCrashed?: boolean;
    readonly crashed?: string;
  } = {}): string {
    return `${this.now}|${this.actors
      .map((a) =>
        forgetCrashed && (a.status === 'crashed' || a.id === crashed)
          ? `${a.id}:crashed`
          : `${a.id}:${a.status}:${a.seen}`,
      )
      .join(',')}`;
  }

  /** Stops an actor for good: its pending requests are never answered. */
  crash(actor: Actor, when: 'before' | 'after' = 'before'): void {
    if (when === 'before')
      this.trace.push({ at: this.now, actor: actor.id, label: 'crash', answer: '-', crash: 'before' });
    actor.status = 'crashed';
    actor.pending.length = 0;
    this.activity++;
    actor.onCrash?.();
  }
}

/** What a request is, for the scheduler. */
export interface StepSpec<T> {
  /** For traces: `S3 PutObject out/a.txt If-None-Match`. */
  readonly label: string;
  /** What it reads and writes: requests whose footprints do not conflict commute. */
  readonly footprint: Footprint;
  /** Applies it to the model and returns the answer (throws the service's error). */
  readonly apply: () => T;
  readonly enabled?: () => boolean;
  readonly wakeAt?: number;
  /**
   * Nothing any other actor does can see it or be seen by it (a part of one's own multipart upload,
   * a sleep): it runs as soon as it may, with no choice point around it. A crash just before or
   * just after it is the same as one at the request before or after it, which are choice points.
   */
  readonly invisible?: boolean;
}

export interface PendingStep extends StepSpec<unknown> {
  readonly actor: Actor;
  /** The actor's n-th request: with the actor's id, it names this request across replays. */
  readonly seq: number;
  readonly key: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** One concurrent participant: a Lambda sandbox, an uploader, an operator's command. */
export class Actor {
  status: 'live' | 'done' | 'crashed' = 'live';
  readonly pending: PendingStep[] = [];
  nextSeq = 0;
  error: unknown;
  /** A digest of every answer it was given, in order. */
  seen = '';
  /** When the work in flight must end (a Lambda invocation's timeout), if it has one. */
  deadline: number | undefined;
  /** Called once when it crashes (a poller's replacement starts here). */
  onCrash?: () => void;
  constructor(
    readonly id: string,
    readonly crashable: boolean,
  ) {}
}

/** One applied step, for the printed trace. */
export interface TraceEntry {
  readonly at: number;
  readonly actor: string;
  readonly label: string;
  readonly answer: string;
  readonly crash?: 'before' | 'after';
}

/** A stable digest of an answer: bodies (streams, bytes) are named by the answer's ETag and length. */
function digestValue(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v) => {
    if (v && typeof v === 'object' && typeof (v as { pipe?: unknown }).pipe === 'function') return '<body>';
    if (v instanceof Uint8Array) return `<${v.byteLength} bytes>`;
    return v;
  });
}

function describeError(error: unknown): string {
  const e = error as { $metadata?: { httpStatusCode?: number }; name?: string };
  return e?.$metadata?.httpStatusCode ? `${e.$metadata.httpStatusCode} ${e.name}` : String(e?.name ?? error);
}

/** Whether two footprints conflict: one writes what the other reads or writes. */
export function conflicts(a: Footprint, b: Footprint): boolean {
  const overlaps = (xs: readonly string[], ys: readonly string[]) => xs.some((x) => ys.some((y) => matches(x, y)));
  return overlaps(a.writes, b.writes) || overlaps(a.writes, b.reads) || overlaps(a.reads, b.writes);
}

/** `s3:bucket/*` matches every object of the bucket, `s3:bucket/prefix*` every object under the prefix. */
function matches(x: string, y: string): boolean {
  if (x === y) return true;
  if (x.endsWith('*') && y.endsWith('*')) return x.startsWith(y.slice(0, -1)) || y.startsWith(x.slice(0, -1));
  if (x.endsWith('*')) return y.startsWith(x.slice(0, -1));
  if (y.endsWith('*')) return x.startsWith(y.slice(0, -1));
  return false;
}
