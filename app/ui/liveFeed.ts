import { open } from 'node:fs/promises';
import type { JournalOutcome } from '../common/devSessionFile.js';

/** What the console shows live: the latest outcomes and the throughput per bucket of time. */
export interface LiveSnapshot {
  /** Newest last; at most the feed's `keep`. */
  readonly outcomes: readonly JournalOutcome[];
  /** The sequence number of the newest outcome (a client asks for what came after it). */
  readonly seq: number;
  /** Outcomes per `bucketMs`, oldest first, covering the last `buckets` buckets up to now. */
  readonly throughput: readonly { readonly at: number; readonly counts: Readonly<Record<string, number>> }[];
  readonly bucketMs: number;
}

/**
 * Tails the outcome journal of a running `rerun dev` (app/common/devSessionFile.ts): each poll reads the
 * lines appended since the last one, keeps the newest `keep` outcomes and counts every outcome into
 * time buckets for the throughput chart. Reading is all it does.
 *
 * @example
 * const feed = new LiveFeed(session.journal);
 * const snapshot = await feed.poll(Date.now());
 */
export class LiveFeed {
  private offset = 0;
  private partial = '';
  private seq = 0;
  private readonly recent: (JournalOutcome & { seq: number })[] = [];
  private readonly counts = new Map<number, Record<string, number>>();

  constructor(
    private readonly journal: string,
    private readonly options: { readonly keep?: number; readonly bucketMs?: number; readonly buckets?: number } = {},
  ) {}

  /** Reads what was appended since the last poll; the snapshot holds outcomes after `afterSeq`. */
  async poll(now: number, afterSeq = 0): Promise<LiveSnapshot> {
    await this.readNew();
    const bucketMs = this.options.bucketMs ?? 5000;
    const buckets = this.options.buckets ?? 60;
    const newest = Math.floor(now / bucketMs) * bucketMs;
    const throughput = [];
    for (let at = newest - (buckets - 1) * bucketMs; at <= newest; at += bucketMs) {
      throughput.push({ at, counts: this.counts.get(at) ?? {} });
    }
    for (const at of this.counts.keys()) if (at < newest - buckets * bucketMs) this.counts.delete(at);
    return { outcomes: this.recent.filter((o) => o.seq > afterSeq), seq: this.seq, throughput, bucketMs };
  }

  private async readNew(): Promise<void> {
    let file: Awaited<ReturnType<typeof open>>;
    try {
      file = await open(this.journal, 'r');
    } catch {
      return; // the session ended (its journal is removed) or has not written yet
    }
    try {
      const { size } = await file.stat();
      if (size < this.offset) this.offset = 0; // a new session started a new journal
      if (size === this.offset) return;
      const buffer = Buffer.alloc(size - this.offset);
      await file.read(buffer, 0, buffer.length, this.offset);
      this.offset = size;
      const text = this.partial + buffer.toString('utf8');
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.add(JSON.parse(line) as JournalOutcome);
    } finally {
      await file.close();
    }
  }

  private add(outcome: JournalOutcome): void {
    this.seq++;
    this.recent.push({ ...outcome, seq: this.seq });
    if (this.recent.length > (this.options.keep ?? 200)) this.recent.shift();
    const bucketMs = this.options.bucketMs ?? 5000;
    const at = Math.floor(outcome.at / bucketMs) * bucketMs;
    const counts = this.counts.get(at) ?? {};
    const kind = liveKind(outcome);
    counts[kind] = (counts[kind] ?? 0) + 1;
    this.counts.set(at, counts);
  }
}

/**
 * How the console names an outcome: processed, quarantined (processed with quarantined lines),
 * skipped, failed or requeued. A journal line does not say whether a failure had receives left.
 *
 * @example
 * liveKind({ status: 'processed', quarantined: 4, ... }); // 'quarantined'
 */
export function liveKind(o: Pick<JournalOutcome, 'status' | 'quarantined' | 'retryable'>): string {
  if (o.status === 'processed' && (o.quarantined ?? 0) > 0) return 'quarantined';
  return o.status;
}
