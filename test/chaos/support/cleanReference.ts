import { SUMMARIZE_CODE_VERSION } from '../../../app/partition/codeVersion.js';
import { summaryKey } from '../../../app/partition/summaryLayout.js';
import type { Topology } from '../../../app/topology.js';
import { type Day, daysInWindow } from '../../../src/keys/partition.js';
import type { PipelineClients } from '../../../src/ledger/pipelineClients.js';
import { createNormalizeWorker } from '../../../src/normalize/normalizeWorker.js';
import { ChaosPipeline, type ChaosRunnerSettings } from './ChaosPipeline.js';
import { type CleanOutput, type CleanReference, contentSha256 } from './verifyAgainstClean.js';
import { type CleanSummary, finalSummaryInputs, lineageIds } from './verifySummaries.js';

/** One content to run through the clean pipeline. */
export interface CleanContent {
  readonly key: string;
  readonly body: string;
}

/**
 * Runs every content a scenario ever uploads through a clean pipeline: no faults, no kills, one
 * runner per stage, its own buckets, queues, ledger and sink. `finals` (what the input bucket holds
 * at the end) go to their own keys; `superseded` contents (overwritten or deleted during the run) go
 * under `incoming/__history/<n>/`, outside every partition, so each content still gets its own
 * output but no day's summary includes it. The poison messages are sent too, so the clean DLQ shows
 * what "only true poison" means. With `window`, the summary stage then runs a backfill of it and
 * its summaries become the reference of each day.
 *
 * @example
 * const clean = await runCleanReference({ endpoint, clients, id: 'clean-1', topology, runner, finals, superseded: [], poison: [] });
 * clean.byEtag.get(etag)?.output; // the bytes a correct run produces for that content
 */
export async function runCleanReference(options: {
  readonly endpoint: string;
  readonly clients: PipelineClients;
  readonly id: string;
  readonly topology: Topology;
  readonly runner: ChaosRunnerSettings;
  readonly finals: readonly CleanContent[];
  readonly superseded: readonly CleanContent[];
  readonly poison: readonly string[];
  /** Backfill these days with the summary stage once normalize is done. @default no summary stage */
  readonly window?: { readonly from: Day; readonly to: Day };
  readonly timeoutMs?: number;
}): Promise<CleanReference> {
  const pipeline = await ChaosPipeline.create({
    endpoint: options.endpoint,
    clients: options.clients,
    id: options.id,
    topology: options.topology,
    runner: options.runner,
    runners: 1,
    summaryRunners: options.window ? 1 : 0,
  });
  try {
    const uploaded: { key: string; etag: string }[] = [];
    for (const content of options.finals) {
      uploaded.push({ key: content.key, etag: await pipeline.upload(content.key, content.body) });
    }
    for (const [n, content] of options.superseded.entries()) {
      const key = content.key.replace(/^incoming\//, `incoming/__history/${n}/`);
      uploaded.push({ key, etag: await pipeline.upload(key, content.body) });
    }
    for (const body of options.poison) await pipeline.sendRaw(body);
    pipeline.startRunners();
    await pipeline.waitDrained(options.timeoutMs ?? 300_000);
    if (options.window) {
      await pipeline.backfill(options.window);
      await pipeline.waitDrained(options.timeoutMs ?? 300_000);
    }
    await pipeline.stopRunners();
    const snapshot = await pipeline.snapshot();
    const worker = createNormalizeWorker({ outputBucket: snapshot.outputBucket, prefixes: options.topology });
    const objects = new Map(snapshot.objects.map((o) => [o.key, o]));
    const byEtag = new Map<string, CleanOutput>();
    for (const { key, etag } of uploaded) {
      const source = { bucket: snapshot.inputBucket, key };
      const output = objects.get(worker.outputKey(source));
      if (!output) continue; // a skipped input (unsupported type): no output in any run
      const quarantine = objects.get(worker.sideOutputs?.quarantine?.(source) ?? '');
      byEtag.set(etag, {
        output: output.bytes,
        checksum: contentSha256(output.bytes),
        ...(quarantine ? { quarantine: quarantine.bytes } : {}),
      });
    }
    const summaries = new Map<Day, CleanSummary>();
    for (const day of options.window ? daysInWindow(options.window.from, options.window.to) : []) {
      const summary = objects.get(summaryKey(pipeline.summaryLayout, day));
      if (!summary) throw new Error(`the clean run published no summary for ${day}`);
      const { lineage, hash } = finalSummaryInputs(snapshot, pipeline.summaryLayout, day, SUMMARIZE_CODE_VERSION);
      summaries.set(day, {
        bytes: summary.bytes,
        lineageHash: hash,
        lineage: lineageIds(lineage),
      });
    }
    return { byEtag, dlqBodies: snapshot.dlq.map((m) => m.body), summaries };
  } finally {
    await pipeline.dispose();
  }
}
