import { hash } from 'node:crypto';
import type { Footprint } from './model/S3Model.js';
import { type Actor, conflicts, type PendingStep, Scheduler, type TraceEntry } from './Scheduler.js';
import type { SimWorld } from './SimWorld.js';
import { SIM_FULL } from './simMode.js';

/**
 * One pick at a choice point: run a pending request, run it and then crash its actor (the service
 * applied it, the actor never read the answer), crash an actor before its next request, or let
 * time pass to the next timer (a message's visibility timeout, a sleep) while requests are still
 * pending: work takes time, and a redelivery can arrive in the middle of another delivery's work.
 */
export interface Alternative {
  /** Names this pick across replays: `run:poller-1#7`, `crash-after:poller-1#7`, `crash:poller-2`, `tick`. */
  readonly key: string;
  readonly kind: 'run' | 'crash-after' | 'crash' | 'tick';
  readonly actor?: Actor;
  readonly step?: PendingStep;
  readonly footprint: Footprint;
}

/** A configuration to explore: what runs, how many crashes it may have, and what must hold after. */
export interface SimConfig {
  readonly name: string;
  /** Crashes per execution, at most. */
  readonly crashes: number;
  /** Builds the world and starts the actors of one execution. */
  setUp(scheduler: Scheduler): SimWorld;
  /** What must hold once nothing can run any more: the violations found (none when all is well). */
  check(world: SimWorld): string[];
  /**
   * Whether no actor can write this resource any more (e.g. the input key once the uploader is done):
   * its reads then run at once, without a choice point.
   * @default nothing is frozen
   */
  readonly frozen?: (resource: string) => boolean;
  /** Choice points per execution, at most (a guard against a livelock). @default 2000 */
  readonly maxDepth?: number;
  /**
   * CPU seconds (process.cpuUsage of the exploring process) the configuration may take in full mode
   * (`npm run test:sim`). Sized from its measured size, with room for a slower machine.
   * @default FULL_MODE_CPU_SECONDS (test/sim/simMode.ts)
   */
  readonly cpuBudget?: number;
  /**
   * Meant to be explored to the end in full mode, within `cpuBudget`: its test fails when the
   * exploration stops short, so a configuration that outgrows its budget says so instead of quietly
   * becoming a sample. A configuration too large for the tier's time sets `false` and says why in
   * `bounded` (it is then also in the seeded random exploration, test/sim/random.test.ts).
   * @default true
   */
  readonly exhaustive?: boolean;
  /** Why a configuration with `exhaustive: false` is not explored to the end: its measured size. */
  readonly bounded?: string;
}

/** Decides each choice point of one execution. */
export interface Chooser {
  /**
   * The pick at depth `depth` among `alternatives`, or undefined to abandon the execution (its
   * state, named by `stateKey()`, was explored before).
   */
  choose(
    depth: number,
    alternatives: readonly Alternative[],
    stateKey: () => string,
    since: StepsSince,
    crashedStateKey: (actor: string) => string,
  ): Alternative | undefined;
}

/**
 * What ran since the previous choice point: the pick and every step run without a choice point
 * after it (invisible steps, reads of frozen resources), by actor and footprint. The sleep sets'
 * independence is judged against all of it, not the pick alone: a pick can make another actor's
 * pending read frozen, which then runs at once, in that actor's order of answers.
 */
export interface StepsSince {
  readonly actors: ReadonlySet<string>;
  readonly footprints: readonly Footprint[];
  /**
   * Whether an actor was started, ended or crashed since the pick was made (a crash's own included),
   * or the clock moved: what a crash's consequences (a poller's replacement, a redelivery) and the
   * order of the actors depend on.
   */
  readonly actorsChanged: boolean;
}

/** The actors as a crash's consequences see them (how many there are, how many live), and the clock. */
function actorsOf(scheduler: Scheduler): string {
  return `${scheduler.all().length}/${scheduler.live().length}/${scheduler.now}`;
}

/** How one execution ended. */
export interface Execution {
  readonly abandoned: boolean;
  readonly violations: string[];
  readonly choices: string[];
  readonly trace: readonly TraceEntry[];
  readonly depth: number;
}

/**
 * Whether each settle checks that a second turn of the event loop is quiet (Scheduler.settle): inside
 * `npm test`, whose bounded exploration of every configuration covers the code the full one runs.
 */
export const VERIFY_SETTLE = !SIM_FULL;

/** Runs one execution of `config`, every choice made by `chooser`. */
export async function execute(
  config: SimConfig,
  chooser: Chooser,
  {
    verifySettle = VERIFY_SETTLE,
    forgetCrashed = false,
  }: {
    readonly verifySettle?: boolean;
    /** States name a crashed actor by its status alone (Scheduler.digest): see exploreExhaustively. */
    readonly forgetCrashed?: boolean;
  } = {},
): Promise<Execution> {
  const scheduler = new Scheduler();
  const world = config.setUp(scheduler);
  const choices: string[] = [];
  let crashesLeft = config.crashes;
  const maxDepth = config.maxDepth ?? 2000;
  let since = { actors: new Set<string>(), footprints: [] as Footprint[], actorsChanged: false };
  // The actors and the clock just before the last pick was applied: StepsSince.actorsChanged.
  let actorsAtPick = '';
  for (let depth = 0; ; ) {
    await scheduler.settle({ verify: verifySettle });
    const enabled = scheduler.enabled();
    const invisible = enabled.find((step) => step.invisible || readsOnlyFrozen(step, config));
    if (invisible) {
      since.actors.add(invisible.actor.id);
      since.footprints.push(invisible.footprint);
      scheduler.run(invisible);
      continue;
    }
    if (enabled.length === 0) {
      const next = earliest(scheduler.nextWake(), world.sqs.nextVisibleAt(scheduler.now));
      if (next === undefined) break;
      scheduler.now = next;
      continue;
    }
    if (depth >= maxDepth) {
      return {
        abandoned: false,
        violations: [`no quiescence after ${maxDepth} choice points (livelock?)`],
        choices,
        trace: scheduler.trace,
        depth,
      };
    }
    const alternatives = alternativesOf(symmetric(enabled), scheduler, crashesLeft, forgetCrashed);
    // Time may pass while requests are pending, up to the deadline of the invocations in flight
    // (Lambda stops an invocation at its timeout; the visibility timeout is 6 times as long).
    const timer = earliest(scheduler.nextWake(), world.sqs.nextVisibleAt(scheduler.now));
    const deadline = scheduler.live().reduce<number | undefined>((d, a) => earliest(d, a.deadline), undefined);
    if (timer !== undefined && (deadline === undefined || timer <= deadline)) {
      alternatives.push({ key: 'tick', kind: 'tick', footprint: { reads: [], writes: [] } });
    }
    since.actorsChanged = depth > 0 && actorsOf(scheduler) !== actorsAtPick;
    let worldDigest: string | undefined;
    const worldState = () => {
      worldDigest ??= world.digest();
      return worldDigest;
    };
    const pick = chooser.choose(
      depth,
      alternatives,
      () => `${crashesLeft}|${scheduler.digest({ forgetCrashed })}|${worldState()}`,
      since,
      // The state a crash of `actor` (before its requests) leaves at once, before anything runs on.
      (actor) => `${crashesLeft - 1}|${scheduler.digest({ forgetCrashed: true, crashed: actor })}|${worldState()}`,
    );
    if (!pick) return { abandoned: true, violations: [], choices, trace: scheduler.trace, depth };
    choices.push(pick.key);
    since = { actors: new Set(pick.actor ? [pick.actor.id] : []), footprints: [pick.footprint], actorsChanged: false };
    // Before the pick is applied: a request's write can start actors at once (S3's events).
    actorsAtPick = actorsOf(scheduler);
    depth++;
    if (pick.kind === 'tick') {
      scheduler.now = timer as number;
      scheduler.trace.push({ at: scheduler.now, actor: '-', label: 'time passes to the next timer', answer: '-' });
    } else if (pick.kind === 'crash') {
      crashesLeft--;
      scheduler.crash(pick.actor as Actor);
    } else if (pick.kind === 'crash-after') {
      crashesLeft--;
      scheduler.run(pick.step as PendingStep, { crashAfter: true });
    } else {
      scheduler.run(pick.step as PendingStep);
    }
  }
  const violations = [...config.check(world)];
  for (const actor of scheduler.all()) {
    if (actor.status === 'done' && actor.error) violations.push(`actor ${actor.id} threw: ${describe(actor.error)}`);
    if (actor.status === 'live' && actor.pending.length === 0) {
      violations.push(`actor ${actor.id} is blocked outside the scheduler (a real timer or I/O?)`);
    }
  }
  return { abandoned: false, violations, choices, trace: scheduler.trace, depth: choices.length };
}

/**
 * A read of resources nobody can write any more (the configuration says which: the input once the
 * uploader is done) sees the same answer wherever it runs: no choice point around it.
 */
function readsOnlyFrozen(step: PendingStep, config: SimConfig): boolean {
  const { reads, writes } = step.footprint;
  return (
    config.frozen !== undefined &&
    writes.length === 0 &&
    reads.length > 0 &&
    reads.every((r) => config.frozen?.(r) === true)
  );
}

/**
 * Symmetry: two actors with the same name up to their number (`lambda-1`, `lambda-2`) run the same
 * code; when both have seen nothing yet and wait for the same request, which one goes first makes
 * no difference but their names. Only the first is offered.
 */
function symmetric(enabled: readonly PendingStep[]): PendingStep[] {
  const seen = new Set<string>();
  return enabled.filter((step) => {
    if (step.actor.seen !== '' || step.actor.nextSeq !== 1) return true;
    const kind = `${step.actor.id.replace(/-\d+$/, '')}|${step.label}`;
    if (seen.has(kind)) return false;
    seen.add(kind);
    return true;
  });
}

/**
 * The picks at a choice point. With `forgetCrashed` (states forget where a crashed actor crashed), a
 * crash right after a request that writes nothing (a read, a decision) is not offered: it leaves the
 * same world, and so the same state, as the crash before that request, which is.
 */
function alternativesOf(
  enabled: readonly PendingStep[],
  scheduler: Scheduler,
  crashesLeft: number,
  forgetCrashed: boolean,
): Alternative[] {
  const crashable = (actor: Actor) => actor.crashable;
  const out: Alternative[] = enabled.map((step) => ({
    key: `run:${step.key}`,
    kind: 'run' as const,
    actor: step.actor,
    step,
    footprint: step.footprint,
  }));
  if (crashesLeft > 0) {
    for (const step of enabled) {
      if (!crashable(step.actor) || step.wakeAt !== undefined) continue;
      if (forgetCrashed && step.footprint.writes.length === 0) continue;
      out.push({
        key: `crash-after:${step.key}`,
        kind: 'crash-after',
        actor: step.actor,
        step,
        footprint: step.footprint,
      });
    }
    for (const actor of scheduler.live()) {
      if (!crashable(actor) || actor.pending.length === 0) continue;
      out.push({ key: `crash:${actor.id}`, kind: 'crash', actor, footprint: { reads: [], writes: [] } });
    }
  }
  return out;
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
}

/** The result of exploring a configuration. */
export interface Exploration {
  readonly config: string;
  /** Executions run to quiescence and checked: the distinct schedules of the configuration. */
  readonly schedules: number;
  /**
   * Executions cut short at a state already explored (by another order of the same steps, mostly),
   * or at one whose every alternative sleeps (sleep sets: explored from an earlier order).
   */
  readonly merged: number;
  /** Distinct states reached (choice points expanded). */
  readonly states: number;
  /** True when every state was expanded within the budget. */
  readonly exhaustive: boolean;
  readonly failure?: Execution;
  /** Wall time, milliseconds. */
  readonly ms: number;
  /** CPU time of the exploring process (user + system, process.cpuUsage), seconds. */
  readonly cpuSeconds: number;
}

/**
 * When an exploration stops short of the end: after `executions` executions, or once the process
 * has spent `cpuSeconds` of CPU time on it (process.cpuUsage: user + system, so a loaded machine
 * stretches the wall time, not the budget). Either may be left out.
 */
export interface ExplorationBudget {
  readonly executions?: number;
  readonly cpuSeconds?: number;
}

/**
 * Whether the exhaustive exploration uses sleep sets (see exploreExhaustively). `RERUN_SIM_REDUCTION=none`
 * turns them off: the explorer as it was before them, whose counts they are compared with.
 */
export const SLEEP_SETS = process.env.RERUN_SIM_REDUCTION !== 'none';

/**
 * Whether the exhaustive exploration's states forget where a crashed actor crashed (see
 * exploreExhaustively): with the sleep sets, off with `RERUN_SIM_REDUCTION=none`.
 */
export const FORGET_CRASHED = SLEEP_SETS;

/**
 * Bounded-exhaustive exploration: a depth-first search over every choice point of the
 * configuration, each alternative of each point explored, with state caching: an execution that
 * reaches a state already expanded (the same objects, messages, ledger items and clock, and every
 * actor having seen the same answers in the same order, hence in the same place of its code) stops
 * there, since everything that can follow was explored from that state before. Orders of steps that
 * commute reach the same state, so this prunes what partial-order reduction would, and also orders
 * that do not commute but end alike. Each schedule is replayed from the start (the actors' state
 * cannot be copied), following the recorded picks.
 *
 * Sleep sets (Godefroid, "Partial-Order Methods for the Verification of Concurrent Systems", 1996,
 * ch. 5) spare the executions that the state cache would only cut short after replaying them: once
 * a request `b` was explored at a point, a sibling `a` independent of it explores on with `b`
 * asleep (`a` then `b` reaches the state `b` then `a` reached), and a request asleep is not picked
 * until something dependent on it runs. Independence is judged conservatively:
 * - only two requests (`run`) of two different actors, neither touched by anything that ran
 *   without a choice point after the pick (StepsSince), and whose footprints do not conflict (the
 *   models' footprints: an S3 object, an upload id, a listing's prefix, a queue's arrivals and each
 *   message, a DynamoDB item; a receive writes the queue's arrivals and every message, so it depends
 *   on every send, delete and visibility change);
 * - a crash (before or after a request) and a request of another actor, when the request's
 *   footprint is independent (a crash-after's request's too) and the request, run from the point
 *   where both were offered, ran no step of the crashed actor, started, ended or crashed no actor and
 *   moved no clock (StepsSince.actorsChanged): a crash removes its actor's requests, which changes
 *   when the clock moves next, and its consequences (a poller's replacement, a redelivery) depend on
 *   which actors live. After a crash only the requests explored beside it at that point sleep, since
 *   only their own runs from there say so (see sleepSetOf);
 * - two crashes depend on each other (the crashes left), and the passing of time (a tick) on
 *   everything: after a tick nothing sleeps, and a tick is never put asleep;
 * - invisible steps (a part of one's own upload, whose id is the caller's own, a sleep) are not
 *   choice points; they run inside the transition and count in its StepsSince.
 * The state cache keeps, per state, the requests asleep at every visit so far (at the first, its
 * sleep set; after that, the intersection): every other alternative of the state was explored from
 * it. A revisit whose sleep set holds them all is cut; otherwise it explores only those of them
 * awake at this visit (never explored from the state), with the sleep set both visits share
 * (Godefroid's state caching with sleep sets, fig. 5.3), so no alternative of a state is explored
 * twice. That needs the state graph to be acyclic, which it is: every pick changes something that
 * never comes back (an actor's digest of the answers it has seen, an actor's crash, the clock).
 * With `forgetCrashed`, a state names a crashed actor by its status alone (Scheduler.digest): it
 * never runs again, and all it did is in the world (its writes, its open uploads, the message it
 * left in flight), so crashes at different places of its code that left the same world are one
 * state. No invariant reads what a crashed actor saw: the pipeline's checks of the records'
 * outcomes apply only to executions without a crash, and the summary and window tasks report their
 * outcomes when they end, which a crashed one never does.
 * Stops at the first violation, or when `budget` (executions, CPU seconds; a number is executions)
 * is spent. `sleepSets` and `forgetCrashed` false (RERUN_SIM_REDUCTION=none) explore as before them
 * (the counts they are compared with).
 */
export async function exploreExhaustively(
  config: SimConfig,
  budget: ExplorationBudget | number = {},
  {
    sleepSets = SLEEP_SETS,
    forgetCrashed = FORGET_CRASHED,
    verifySettle = VERIFY_SETTLE,
  }: { readonly sleepSets?: boolean; readonly forgetCrashed?: boolean; readonly verifySettle?: boolean } = {},
): Promise<Exploration> {
  // No stack traces while exploring: every SDK error the models throw (a 404, a 412) would capture
  // one. A failing schedule is replayed with them (shrink, replay.ts) before it is printed.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return await explore(config, budget, { sleepSets, forgetCrashed, verifySettle });
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/** A state as the cache keeps it: a SHA-1 of its key (the keys are about a kilobyte, and there are up to a million). */
function stateId(key: string): string {
  return hash('sha1', key, 'base64');
}

/** The requests asleep at a state's every visit, when there are none (most states): one set for all. */
const NONE_ASLEEP: ReadonlySet<string> = new Set();

async function explore(
  config: SimConfig,
  budget: ExplorationBudget | number,
  {
    sleepSets,
    forgetCrashed,
    verifySettle,
  }: { readonly sleepSets: boolean; readonly forgetCrashed: boolean; readonly verifySettle: boolean },
): Promise<Exploration> {
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const cpuSeconds = () => {
    const used = process.cpuUsage(cpuStart);
    return (used.user + used.system) / 1e6;
  };
  const maxExecutions = typeof budget === 'number' ? budget : (budget.executions ?? Number.POSITIVE_INFINITY);
  const maxCpuSeconds =
    typeof budget === 'number' ? Number.POSITIVE_INFINITY : (budget.cpuSeconds ?? Number.POSITIVE_INFINITY);
  const frames: Frame[] = [];
  // Each state expanded, with the requests asleep at every visit (sleep sets off: always none).
  const visited = new Map<string, ReadonlySet<string>>();
  let schedules = 0;
  let merged = 0;
  // With forgetCrashed: for each state a crash left at once (Frame.crashes), the state it led to at
  // the next choice point, first visited there, or null when the execution ended there
  // (crashExploredElsewhere).
  const crashedInto = new Map<string, string | null>();
  const nextPick = (frame: Frame): string | undefined =>
    frame.todo.find((k) => !frame.explored.has(k) && !crashExploredElsewhere(frame, k, crashedInto, visited));
  for (;;) {
    const chooser: Chooser = {
      choose(depth, alternatives, stateKey, since, crashedStateKey) {
        const parent = frames[depth - 1];
        if (parent) parent.windows.set(parent.current, since);
        const crashed = parent?.crashes.get(parent.current);
        let frame = frames[depth];
        const keys = alternatives.map((a) => a.key).join(' ');
        if (frame) {
          if (keys !== frame.keys) {
            throw new Error(
              `simulation is not deterministic at depth ${depth}: ${keys} vs ${frame.keys} (${config.name})`,
            );
          }
        } else {
          const reached = sleepSets ? sleepSetOf(frames[depth - 1], alternatives, since) : new Map<string, Sleeper>();
          const state = stateId(stateKey());
          const kept = visited.get(state);
          // Only a first visit: its requests asleep are then those this crash put asleep.
          if (crashed !== undefined && kept === undefined && !crashedInto.has(crashed)) crashedInto.set(crashed, state);
          // A first visit explores every alternative awake. A revisit explores only those asleep
          // when the state was expanded and awake now (none were explored from it yet), with the
          // sleep set both visits share (Godefroid 1996, fig. 5.3).
          let sleep = reached;
          let todo = alternatives.filter((a) => !reached.has(a.key));
          if (kept !== undefined) {
            todo = alternatives.filter((a) => kept.has(a.key) && !reached.has(a.key));
            sleep = new Map([...reached].filter(([k]) => kept.has(k)));
          }
          visited.set(state, sleep.size === 0 ? NONE_ASLEEP : new Set(sleep.keys()));
          if (todo.length === 0) return undefined;
          frame = {
            keys,
            // Kept light: a frame outlives its execution, whose actors and world it must not hold.
            alternatives: alternatives.map((a) => ({
              key: a.key,
              kind: a.kind,
              actor: a.actor?.id,
              footprint: a.footprint,
            })),
            sleep,
            todo: todo.map((a) => a.key),
            explored: new Set(),
            windows: new Map(),
            crashes: new Map(
              forgetCrashed
                ? alternatives
                    .filter((a) => a.kind === 'crash' && a.actor)
                    .map((a) => [a.key, stateId(crashedStateKey((a.actor as Actor).id))])
                : [],
            ),
            current: '',
          };
          const first = nextPick(frame);
          if (first === undefined) return undefined;
          frame.current = first;
          frames.push(frame);
        }
        return alternatives.find((a) => a.key === frame.current);
      },
    };
    const run = await execute(config, chooser, { verifySettle, forgetCrashed });
    if (run.abandoned) merged++;
    else schedules++;
    // An execution that ended right after a crash: that crash's state leads to no choice point.
    const last = frames[run.choices.length - 1];
    const crashed = !run.abandoned && last ? last.crashes.get(last.current) : undefined;
    if (crashed !== undefined && !crashedInto.has(crashed)) crashedInto.set(crashed, null);
    if (run.violations.length > 0) {
      return {
        config: config.name,
        schedules,
        merged,
        states: visited.size,
        exhaustive: false,
        failure: run,
        ms: performance.now() - started,
        cpuSeconds: cpuSeconds(),
      };
    }
    if (schedules + merged >= maxExecutions || cpuSeconds() >= maxCpuSeconds) {
      return {
        config: config.name,
        schedules,
        merged,
        states: visited.size,
        exhaustive: false,
        ms: performance.now() - started,
        cpuSeconds: cpuSeconds(),
      };
    }
    // Backtrack: the deepest choice point with an alternative not yet explored.
    let resumed = false;
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as Frame;
      frame.explored.add(frame.current);
      const next = nextPick(frame);
      if (next) {
        frame.current = next;
        resumed = true;
        break;
      }
      frames.pop();
    }
    if (!resumed) {
      return {
        config: config.name,
        schedules,
        merged,
        states: visited.size,
        exhaustive: true,
        ms: performance.now() - started,
        cpuSeconds: cpuSeconds(),
      };
    }
  }
}

interface Frame {
  /** The alternatives at this point, in order (checked on every replay: determinism). */
  readonly keys: string;
  readonly alternatives: readonly { key: string; kind: Alternative['kind']; actor?: string; footprint: Footprint }[];
  /** The requests asleep here: explored from an earlier point, in another order of independent steps. */
  readonly sleep: ReadonlyMap<string, Sleeper>;
  /** The alternatives this visit explores, in order: those awake, less those explored from an earlier visit. */
  readonly todo: readonly string[];
  readonly explored: Set<string>;
  /** Of each alternative explored from here, what ran from it to the next choice point. */
  readonly windows: Map<string, StepsSince>;
  /** With forgetCrashed: of each crash offered here, the state it leaves at once (a stateId). */
  readonly crashes: ReadonlyMap<string, string>;
  current: string;
}

/** A pick asleep: its key (`run:lambda-1#7`, `crash:lambda-2`), kind, actor and footprint. */
interface Sleeper {
  readonly kind: Alternative['kind'];
  readonly actor: string;
  readonly footprint: Footprint;
}

/**
 * The sleep set of the point reached from `parent` by its current pick: of the parent's sleep set
 * and the picks it explored before this one, those still offered here and independent of everything
 * that ran since (see exploreExhaustively). Nothing sleeps after a tick, and two crashes are never
 * independent (the crashes left). A crash touches no resource but its own actor; it removes that
 * actor's requests, which can change when the clock moves next, and its consequences (a poller's
 * replacement, a redelivery) depend on which actors live. So a crash and a request of another actor
 * are independent when the request's footprint is, and when, from the state where both were offered,
 * the request ran without a step of the crashed actor, without starting, ending or crashing an actor
 * and without moving the clock: after a crash, only the requests explored beside it at the parent
 * sleep, whose runs from there say so.
 */
function sleepSetOf(
  parent: Frame | undefined,
  alternatives: readonly Alternative[],
  since: StepsSince,
): Map<string, Sleeper> {
  const sleep = new Map<string, Sleeper>();
  if (!parent) return sleep;
  const pick = parent.alternatives.find((a) => a.key === parent.current);
  if (!pick || pick.kind === 'tick') return sleep;
  const pickCrashes = pick.kind !== 'run';
  const candidates = new Map<string, Sleeper>(pickCrashes ? [] : parent.sleep);
  for (const a of parent.alternatives) {
    if (a.kind !== 'tick' && a.actor && parent.explored.has(a.key)) {
      candidates.set(a.key, { kind: a.kind, actor: a.actor, footprint: a.footprint });
    }
  }
  const offered = new Set(alternatives.map((a) => a.key));
  for (const [key, b] of candidates) {
    if (!offered.has(key) || since.actors.has(b.actor)) continue;
    if (since.footprints.some((f) => conflicts(f, b.footprint))) continue;
    if (b.kind !== 'run') {
      // A crash asleep: the pick must be a request that changed no actor and moved no clock.
      if (pickCrashes || since.actorsChanged) continue;
    } else if (pickCrashes && !independentOfCrash(parent, key, pick)) {
      continue;
    }
    sleep.set(key, b);
  }
  return sleep;
}

/**
 * Whether the crash `key` of `frame` need not be explored: it leaves at once a state that another
 * crash left before (with forgetCrashed, a crash before a request names its actor by its status
 * alone, so crashes at different points of its code that left the same world leave the same state),
 * whose continuation was explored from the state at its next choice point, or ended there. Only
 * when that exploration spared nothing this crash's own would explore: every request never
 * explored from that state (asleep at each of its visits) would be asleep after this crash too,
 * explored beside it from `frame` with a run that touched neither the crashed actor nor which actors
 * live nor the clock (the rule of sleepSetOf after a crash). Without this, each such crash was
 * replayed from the start only to be cut at the next choice point.
 */
function crashExploredElsewhere(
  frame: Frame,
  key: string,
  crashedInto: ReadonlyMap<string, string | null>,
  visited: ReadonlyMap<string, ReadonlySet<string>>,
): boolean {
  const crashed = frame.crashes.get(key);
  if (crashed === undefined || !crashedInto.has(crashed)) return false;
  const next = crashedInto.get(crashed);
  if (next === null) return true;
  const spared = next === undefined ? undefined : visited.get(next);
  if (spared === undefined) return false;
  const crash = frame.alternatives.find((a) => a.key === key);
  return crash !== undefined && [...spared].every((request) => independentOfCrash(frame, request, crash));
}

/**
 * Whether the request `key`, explored from `frame`, is independent of the crash `crash` offered
 * there (a crash before a request, or after one): its run from `frame` ran no step of the crashed
 * actor, started, ended or crashed no actor, moved no clock, and touched nothing the crash-after's
 * request touches. Only its own run from that point says so (see sleepSetOf).
 */
function independentOfCrash(
  frame: Frame,
  key: string,
  crash: { readonly actor?: string; readonly footprint: Footprint },
): boolean {
  const window = frame.windows.get(key);
  if (!frame.explored.has(key) || !window || window.actorsChanged) return false;
  if (crash.actor === undefined || window.actors.has(crash.actor)) return false;
  return !window.footprints.some((f) => conflicts(f, crash.footprint));
}

/** A seeded PRNG (mulberry32): the same seed gives the same schedule. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A random schedule: each pick uniform over the requests that may run, a crash with probability
 * `crashRate` (while the configuration allows one). Replayable from its seed.
 */
export function randomChooser(seed: number, crashRate = 0.02): Chooser {
  const random = prng(seed);
  return {
    choose(_depth, alternatives) {
      const crashes = alternatives.filter((a) => a.kind === 'crash' || a.kind === 'crash-after');
      if (crashes.length > 0 && random() < crashRate) return crashes[Math.floor(random() * crashes.length)];
      const runs = alternatives.filter((a) => a.kind === 'run' || a.kind === 'tick');
      return runs[Math.floor(random() * runs.length)];
    },
  };
}

/** Follows recorded picks (by key), then the first alternative at every later point. */
export function replayChooser(choices: readonly string[]): Chooser {
  return {
    choose(depth, alternatives) {
      const wanted = choices[depth];
      return (
        (wanted !== undefined ? alternatives.find((a) => a.key === wanted) : undefined) ??
        alternatives.find((a) => a.kind === 'run')
      );
    },
  };
}

/**
 * Shrinks a failing schedule: drops its picks one at a time, from the last, keeping each removal
 * after which the schedule (the remaining picks, then the first request at every later point)
 * still fails. What is left is a short list of deviations from the plain order, and its trace.
 */
export async function shrink(config: SimConfig, failing: Execution, maxRuns = 400): Promise<Execution> {
  let best = failing;
  let choices = [...failing.choices];
  let runs = 0;
  for (let i = choices.length - 1; i >= 0 && runs < maxRuns; i--) {
    const candidate = [...choices.slice(0, i), ...choices.slice(i + 1)];
    runs++;
    const run = await execute(config, replayChooser(candidate));
    if (!run.abandoned && run.violations.length > 0) {
      choices = candidate;
      best = run;
    }
  }
  return best;
}

/** A schedule as people read it: how it ended, the violations, the replay line and the steps. */
export function formatFailure(config: SimConfig, run: Execution, origin: string): string {
  const lines = [
    `simulation: ${config.name} (${origin})`,
    ...run.violations.map((v) => `  violation: ${v}`),
    `  replay: npx tsx test/sim/replay.ts '${config.name}|${run.choices.join(',')}'`,
    '  trace:',
    ...run.trace.map(
      (t, i) =>
        `  ${String(i + 1).padStart(3)}. t=${t.at % 1_000_000} ${t.actor}: ${t.label} -> ${t.answer}${t.crash ? ` [crash ${t.crash}]` : ''}`,
    ),
  ];
  return lines.join('\n');
}
