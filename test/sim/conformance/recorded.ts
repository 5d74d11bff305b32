import { CONTENT, pipelineConfig } from '../configs.js';
import { execute, randomChooser } from '../explore.js';
import type { Sequence, Step } from './replay.js';

/**
 * Request sequences recorded from the simulation itself: the S3 requests of whole schedules of the
 * pipeline (racing deliveries, lost races, seals, deletes), in the order the in-memory S3 applied
 * them, with S3's real part size, so that an emulator accepts the same multipart uploads. Ids the
 * answers gave (upload ids, ETags) become references to the step that returned them.
 */
export async function recordedSequences(seeds: readonly number[]): Promise<Sequence[]> {
  const big = `${'row of a large input '.repeat(50)}\n`.repeat(5_200); // 5.2 MiB: a multipart output
  const configs = [
    pipelineConfig({
      name: 'create',
      uploads: [{ put: `${big}!bad row\n` }],
      eventCopies: 2,
      crashes: 1,
      partBytes: 5 * 1024 * 1024,
    }),
    pipelineConfig({
      name: 'overwrite',
      before: `${big}!bad row\n`,
      redeliverBefore: true,
      uploads: [{ put: CONTENT.smallBad }],
      crashes: 1,
      partBytes: 5 * 1024 * 1024,
    }),
  ];
  const sequences: Sequence[] = [];
  for (const config of configs) {
    for (const seed of seeds) {
      const records: { name: string; input: Record<string, unknown>; answer?: Record<string, unknown> }[] = [];
      const recording = {
        ...config,
        setUp(scheduler: Parameters<typeof config.setUp>[0]) {
          const world = config.setUp(scheduler);
          world.onRequest = (r) => {
            if (r.service === 'S3')
              records.push({ name: r.name, input: r.input, ...(r.answer ? { answer: r.answer } : {}) });
          };
          return world;
        },
      };
      await execute(recording, randomChooser(seed, 0.03));
      sequences.push({ name: `recorded: ${config.name}, seed ${seed}`, steps: symbolic(records) });
    }
  }
  return sequences;
}

/** Replaces the ids a recorded step got from earlier answers with references to those answers. */
function symbolic(
  records: readonly { name: string; input: Record<string, unknown>; answer?: Record<string, unknown> }[],
): Step[] {
  const uploads = new Map<string, number>();
  const etags = new Map<string, number>();
  const copyEtags = new Map<string, number>();
  const steps: Step[] = [];
  const etagRef = (value: unknown, kind: 'quoted-etag' | 'etag') => {
    const at = etags.get(String(value).replace(/"/g, ''));
    return at === undefined ? value : `$${kind}:${at}`;
  };
  for (const [i, r] of records.entries()) {
    const input: Record<string, unknown> = { ...r.input, Bucket: `$bucket:${String(r.input.Bucket)}` };
    if (typeof input.UploadId === 'string') input.UploadId = `$upload:${uploads.get(input.UploadId)}`;
    for (const field of ['IfMatch', 'CopySourceIfMatch'] as const) {
      if (typeof input[field] === 'string') input[field] = etagRef(input[field], 'quoted-etag');
    }
    if (typeof input.CopySource === 'string') input.CopySource = `$copy-source:${input.CopySource}`;
    const parts = (input.MultipartUpload as { Parts?: { ETag: string }[] } | undefined)?.Parts;
    if (parts) {
      input.MultipartUpload = {
        Parts: parts.map((p) => {
          const copied = copyEtags.get(p.ETag.replace(/"/g, ''));
          return { ...p, ETag: copied !== undefined ? `$copy-etag:${copied}` : etagRef(p.ETag, 'etag') };
        }),
      };
    }
    steps.push({ service: 'S3', name: r.name, input });
    const answer = r.answer ?? {};
    if (typeof answer.UploadId === 'string') uploads.set(answer.UploadId, i);
    if (typeof answer.ETag === 'string' && !etags.has(answer.ETag.replace(/"/g, '')))
      etags.set(answer.ETag.replace(/"/g, ''), i);
    const copied = (answer.CopyPartResult as { ETag?: string } | undefined)?.ETag;
    if (copied && !copyEtags.has(copied.replace(/"/g, ''))) copyEtags.set(copied.replace(/"/g, ''), i);
  }
  return steps;
}
