import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Path of the runner fixture process (LocalRunner + a real handler module). */
export const LAMBDA_RUNNER_FIXTURE = fileURLToPath(new URL('../fixtures/lambdaRunner.ts', import.meta.url));

/** One JSON line printed by the runner fixture. */
export interface RunnerEvent {
  readonly event: 'ready' | 'received' | 'invocation' | 'record' | 'exit';
  readonly [field: string]: unknown;
}

/** How the batch handler names a record it did not start because its invocation's time ran out (src/batch/runBatch.ts). */
const DEADLINE_NOT_STARTED = 'not started: function deadline is near';

/**
 * The messages whose receive a runner event shows dying with them: each message of an invocation
 * that timed out, and the message of a record the handler did not start because its invocation's
 * time ran out ("not started: function deadline is near"), which spends a receive with no attempt
 * just as a timeout does: on a loaded machine the invocation's time went to the records before it.
 * A failure of the message's own (an error, a quarantine, a retry the handler asked for) is not.
 *
 * @example
 * receivesThatDied({ event: 'invocation', outcome: 'timeout', messageIds: ['m1', 'm2'] }); // ['m1', 'm2']
 * receivesThatDied({ event: 'record', status: 'failed', messageId: 'm3', reason: 'not started: function deadline is near (less than 800 ms left)' }); // ['m3']
 */
export function receivesThatDied(event: RunnerEvent): string[] {
  if (event.event === 'invocation' && event.outcome === 'timeout' && Array.isArray(event.messageIds)) {
    return event.messageIds.map(String);
  }
  if (
    event.event === 'record' &&
    event.status === 'failed' &&
    typeof event.messageId === 'string' &&
    String(event.reason).startsWith(DEADLINE_NOT_STARTED)
  ) {
    return [event.messageId];
  }
  return [];
}

/** Totals over every process a {@link RunnerSupervisor} started. */
export interface RunnerTotals {
  /** Processes started (1 + restarts). */
  starts: number;
  /** SIGKILLs sent by {@link RunnerSupervisor.kill}. */
  kills: number;
  /** Processes that exited on their own with an error (e.g. could not resolve the queue under faults). */
  crashes: number;
  invocations: number;
  /** Invocations by outcome (success, partial, error, timeout...). */
  outcomes: Record<string, number>;
  /** Records by status (processed, skipped, failed). */
  records: Record<string, number>;
  /** Side effects executed by records (webhook notifications sent now, not replayed). */
  effectsExecuted: number;
  /** Reasons of failed records, counted (first 120 characters). */
  failureReasons: Record<string, number>;
  /** Messages left in the queue by invocations (failed records, failed or timed-out invocations, failed deletes). */
  retained: number;
  /** Messages whose delete SQS refused or that could not be deleted (they come back after the visibility timeout). */
  deleteFailures: number;
  /** Errors of failed invocations, counted (first 120 characters). */
  invocationErrors: Record<string, number>;
  /**
   * Per message id: attempts that died with the message in hand, i.e. its invocation was running
   * when the process was SIGKILLed, or the invocation timed out. A healthy message in the DLQ is a
   * crash storm only when this reaches the queue's maxReceiveCount.
   */
  diedWhileHeld: Record<string, number>;
}

/** Options of {@link RunnerSupervisor}. */
/** Totals of a runner that has not run yet. */
export function emptyRunnerTotals(): RunnerTotals {
  return {
    starts: 0,
    kills: 0,
    crashes: 0,
    invocations: 0,
    outcomes: {},
    records: {},
    effectsExecuted: 0,
    failureReasons: {},
    retained: 0,
    deleteFailures: 0,
    invocationErrors: {},
    diedWhileHeld: {},
  };
}

export interface RunnerSupervisorOptions {
  /** Environment of the runner process (merged over this process's). */
  readonly env: Readonly<Record<string, string>>;
  /** Start a fresh process whenever one dies, until {@link RunnerSupervisor.stop}. @default true */
  readonly restart?: boolean;
  /** Called for every event line of every process. @default none */
  readonly onEvent?: (event: RunnerEvent) => void;
  /** @default the lambdaRunner fixture */
  readonly script?: string;
  /**
   * Stop restarting after this many processes exited on their own with an error (a broken
   * configuration would otherwise restart forever).
   * @default 20
   */
  readonly maxCrashes?: number;
}

/**
 * Keeps one runner process alive, like Lambda keeps polling a queue: when the process is killed
 * (SIGKILL, as a sandbox can die at any moment) or crashes, a fresh one starts with a cold module
 * scope. The chaos suite kills it through {@link kill}; {@link stop} ends it gracefully.
 *
 * @example
 * const runner = new RunnerSupervisor({ env: { RUNNER_QUEUE_URL: queueUrl, OUTPUT_BUCKET: out } });
 * runner.start();
 * await runner.kill(); // a fresh process is already starting
 * await runner.stop();
 */
export class RunnerSupervisor {
  readonly totals: RunnerTotals = emptyRunnerTotals();
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stopping = false;
  private readonly stderrTail: string[] = [];
  /** Messages the live process holds (received, invocation not ended). */
  private held = new Set<string>();
  /** Processes ended by a SIGKILL. */
  private readonly killedPids = new Set<number>();

  constructor(private readonly options: RunnerSupervisorOptions) {}

  /** The live process's pid, if one is running. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last lines the runner processes wrote to stderr (for diagnostics). */
  get stderr(): string {
    return this.stderrTail.join('');
  }

  /** Settles when the current process has exited (with `restart: false`, when the supervisor is done). */
  waitForExit(): Promise<void> {
    return this.exited;
  }

  /** Starts the first process. */
  start(): void {
    this.stopping = false;
    this.spawnOne();
  }

  /**
   * Messages that SQS handed to the live process, as seen on the wire (the ReceiveMessage answer at
   * its proxy): the process may die before it reads them, and their receive still counts.
   */
  noteReceived(messageIds: readonly string[], pid: number | undefined): void {
    // The answer may arrive after its process was killed (the server applied the receive, nobody
    // read it): that receive died with the message too.
    if (pid !== undefined && this.killedPids.has(pid)) {
      for (const id of messageIds) this.totals.diedWhileHeld[id] = (this.totals.diedWhileHeld[id] ?? 0) + 1;
      return;
    }
    if (pid !== undefined && pid !== this.child?.pid) return;
    for (const id of messageIds) this.held.add(id);
  }

  /**
   * Messages of a ReceiveMessage that SQS applied but whose answer never reached the process (the
   * connection dropped on the way back): each one's receive counts towards maxReceiveCount, and
   * no process holds it, so that receive died with it.
   */
  noteLost(messageIds: readonly string[]): void {
    for (const id of messageIds) this.totals.diedWhileHeld[id] = (this.totals.diedWhileHeld[id] ?? 0) + 1;
  }

  /** SIGKILLs the live process and waits until it is gone; a fresh one is started unless stopping. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.totals.kills++;
    const gone = this.exited;
    if (child.pid !== undefined) this.killedPids.add(child.pid);
    child.kill('SIGKILL');
    await gone;
  }

  /** Ends the live process with SIGTERM (it stops its runner cleanly) and starts no other. */
  async stop(timeoutMs = 15_000): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = this.exited;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await gone;
    clearTimeout(timer);
  }

  private spawnOne(): void {
    this.totals.starts++;
    const child = spawn(process.execPath, ['--import', 'tsx', this.options.script ?? LAMBDA_RUNNER_FIXTURE], {
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...this.options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail.push(chunk.toString());
      if (this.stderrTail.length > 40) this.stderrTail.shift();
    });
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const held = new Set<string>();
    this.held = held;
    // Messages whose record this process did not start for want of time (counted as died), until their invocation ends.
    const starved = new Set<string>();
    lines.on('line', (line) => this.onLine(line, held, starved));
    // 'close' comes after every line of stdout was read, so a batch that ended just before the kill
    // is not counted as dying with it.
    child.once('close', (_code, signal) => {
      if (signal !== 'SIGKILL') return;
      if (child.pid !== undefined) this.killedPids.add(child.pid);
      for (const id of held) {
        if (!starved.has(id)) this.totals.diedWhileHeld[id] = (this.totals.diedWhileHeld[id] ?? 0) + 1;
      }
    });
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        if (signal === null && code !== 0) this.totals.crashes++;
        lines.close();
        if (this.child === child) this.child = undefined;
        const crashLoop = this.totals.crashes >= (this.options.maxCrashes ?? 20);
        if (!this.stopping && (this.options.restart ?? true) && !crashLoop) this.spawnOne();
        resolve();
      });
    });
  }

  private onLine(line: string, held: Set<string>, starved: Set<string>): void {
    let event: RunnerEvent;
    try {
      event = JSON.parse(line) as RunnerEvent;
    } catch {
      return; // a handler's own log line
    }
    if (typeof event?.event !== 'string') return;
    const t = this.totals;
    const ids = Array.isArray(event.messageIds) ? event.messageIds.map(String) : [];
    if (event.event === 'received') {
      for (const id of ids) held.add(id);
    }
    const died = (id: string) => {
      t.diedWhileHeld[id] = (t.diedWhileHeld[id] ?? 0) + 1;
    };
    if (event.event === 'record') {
      for (const id of receivesThatDied(event)) {
        // Only while its invocation runs: a timed-out invocation's late handler is counted by its timeout.
        if (!held.has(id) || starved.has(id)) continue;
        starved.add(id);
        died(id);
      }
    }
    if (event.event === 'invocation') {
      const timedOut = new Set(receivesThatDied(event));
      for (const id of ids) {
        held.delete(id);
        // A receive dies once: a record not started for want of time whose invocation then timed out counts once.
        if (!starved.delete(id) && timedOut.has(id)) died(id);
      }
    }
    if (event.event === 'invocation') {
      t.invocations++;
      const outcome = String(event.outcome);
      t.outcomes[outcome] = (t.outcomes[outcome] ?? 0) + 1;
      t.retained += Number(event.retained ?? 0);
      t.deleteFailures += Number(event.deleteFailures ?? 0);
      if (typeof event.error === 'string') {
        const error = event.error.slice(0, 120);
        t.invocationErrors[error] = (t.invocationErrors[error] ?? 0) + 1;
      }
    } else if (event.event === 'record') {
      const status = String(event.status);
      t.records[status] = (t.records[status] ?? 0) + 1;
      t.effectsExecuted += Number(event.effectsExecuted ?? 0);
      if (status === 'failed') {
        const reason = String(event.reason).slice(0, 120);
        t.failureReasons[reason] = (t.failureReasons[reason] ?? 0) + 1;
      }
    }
    this.options.onEvent?.(event);
  }
}
