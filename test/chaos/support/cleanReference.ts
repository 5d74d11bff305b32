import { createNormalizeWorker } from '../../../functions/normalize/normalizeWorker.js';
import type { AwsClients } from '../../../src/aws/clients.js';
import type { Topology } from '../../../src/topology.js';
import { ChaosPipeline, type ChaosRunnerSettings } from './ChaosPipeline.js';
import { type CleanOutput, type CleanReference, storedChecksum } from './verifyAgainstClean.js';

/** One content to run through the clean pipeline. */
export interface CleanContent {
  readonly key: string;
  readonly body: string;
}

/**
 * Runs every content a scenario ever uploads (final and superseded versions) through a clean
 * pipeline: no faults, no kills, one runner, its own buckets, queue, ledger and sink. Superseded
 * versions go under `incoming/__history/<n>/` so each content gets its own output. The poison
 * messages are sent too, so the clean DLQ shows what "only true poison" means.
 *
 * @example
 * const clean = await runCleanReference({ endpoint, clients, id: 'clean-1', topology, runner, contents, poison });
 * clean.byEtag.get(etag)?.output; // the bytes a correct run produces for that content
 */
export async function runCleanReference(options: {
  readonly endpoint: string;
  readonly clients: AwsClients;
  readonly id: string;
  readonly topology: Topology;
  readonly runner: ChaosRunnerSettings;
  /** Final contents (their own keys) and superseded ones. */
  readonly contents: readonly CleanContent[];
  readonly poison: readonly string[];
  readonly timeoutMs?: number;
}): Promise<CleanReference> {
  const pipeline = await ChaosPipeline.create({
    endpoint: options.endpoint,
    clients: options.clients,
    id: options.id,
    topology: options.topology,
    runner: options.runner,
    runners: 1,
  });
  try {
    const uploaded: { key: string; etag: string }[] = [];
    const seen = new Set<string>();
    let n = 0;
    for (const content of options.contents) {
      // A key used twice (a superseded version) gets its own key, so every content keeps its output.
      const key = seen.has(content.key)
        ? content.key.replace(/^incoming\//, `incoming/__history/${n++}/`)
        : content.key;
      seen.add(key);
      uploaded.push({ key, etag: await pipeline.upload(key, content.body) });
    }
    for (const body of options.poison) await pipeline.sendRaw(body);
    pipeline.startRunners();
    await pipeline.waitDrained(options.timeoutMs ?? 300_000);
    await pipeline.stopRunners();
    const snapshot = await pipeline.snapshot();
    const worker = createNormalizeWorker({ outputBucket: snapshot.outputBucket, topology: options.topology });
    const objects = new Map(snapshot.objects.map((o) => [o.key, o]));
    const byEtag = new Map<string, CleanOutput>();
    for (const { key, etag } of uploaded) {
      const source = { bucket: snapshot.inputBucket, key };
      const output = objects.get(worker.outputKey(source));
      if (!output) continue; // a skipped input (unsupported type): no output in any run
      const quarantine = objects.get(worker.sideOutputs?.quarantine?.(source) ?? '');
      byEtag.set(etag, {
        output: output.bytes,
        checksum: storedChecksum(output.head),
        ...(quarantine ? { quarantine: quarantine.bytes } : {}),
      });
    }
    return { byEtag, dlqBodies: snapshot.dlq.map((m) => m.body) };
  } finally {
    await pipeline.dispose();
  }
}
