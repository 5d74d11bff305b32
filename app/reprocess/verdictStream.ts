import type { OutputKeyMapping } from './outputKeyMapping.js';
import { type PlanCounts, planReprocess, ReprocessState, type ReprocessVerdict } from './planReprocess.js';
import type { RunReprocessOptions } from './runReprocessOptions.js';
import { verifyVerdicts } from './verifyVerdicts.js';

/** The plan as a stream of verdicts: listings, merge-join, optionally --verify (of `only`, when given). */
export function verdictStream(
  options: RunReprocessOptions,
  plan: PlanCounts,
  heads: { count: number },
  only?: ReadonlySet<string>,
  planning = false,
): AsyncIterable<ReprocessVerdict> {
  const { reader, mapping, worker, inputBucket } = options;
  const outputPrefix = `${mapping.outputRoot}${options.prefix.slice(mapping.inputPrefix.length)}`;
  const outputListing = planning ? options.listings?.outputs : undefined;
  const planned = planReprocess(
    {
      inputs: options.listings?.inputs
        ? options.listings.inputs()
        : reader.listSharded(inputBucket, options.prefix, options.listShards ?? 1),
      outputs: outputListing
        ? outputListing()
        : reader.listSharded(worker.outputBucket, outputPrefix, options.listShards ?? 1),
      mapping,
      lookups: {
        findOutput: (key) => reader.find(worker.outputBucket, key),
        inputExists: async (key) => (await reader.find(inputBucket, key)) !== undefined,
      },
      skipReason: (key) =>
        key.endsWith('/')
          ? 'folder marker (key ends with "/")'
          : worker.skipReason?.({ bucket: inputBucket, key, eventName: 'ObjectCreated:Put' }),
      // Hashed outputs of the whole bucket are listed only when the prefix is the whole input prefix.
      checkLongOrphans: options.prefix === mapping.inputPrefix,
      ...(options.codeCutoff ? { codeCutoff: options.codeCutoff } : {}),
    },
    plan,
  );
  const source = only ? filterVerdicts(planned, only) : planned;
  return verifyVerdicts(source, {
    // Without --verify, only the outputs of a code rollout window get the exact check (and, always,
    // the outputs older than their input: their recorded source decides, verifyVerdicts.ts).
    ...(options.verify ? {} : { select: (v: ReprocessVerdict) => v.checkCode === true }),
    inputBucket,
    codeVersion: worker.codeVersion,
    head: (key) => options.store.head(worker.outputBucket, key),
    ...(worker.validate ? { validate: (head) => worker.validate?.(head) } : {}),
    sideOutputKeys: (key) =>
      Object.fromEntries(
        Object.entries(worker.sideOutputs ?? {}).map(([name, keyOf]) => [name, keyOf({ bucket: inputBucket, key })]),
      ),
    ...(options.verifyConcurrency ? { concurrency: options.verifyConcurrency } : {}),
    onHead: () => {
      heads.count++;
    },
  });
}

/** The orphans of one side output: the inputs merged against that side's listing. */
export async function* sideOrphanStream(
  options: RunReprocessOptions,
  side: OutputKeyMapping,
): AsyncGenerator<ReprocessVerdict> {
  const { reader, inputBucket, worker } = options;
  const sidePrefix = `${side.outputRoot}${options.prefix.slice(side.inputPrefix.length)}`;
  for await (const verdict of planReprocess({
    inputs: options.listings?.inputs
      ? options.listings.inputs()
      : reader.listSharded(inputBucket, options.prefix, options.listShards ?? 1),
    outputs: reader.listSharded(worker.outputBucket, sidePrefix, options.listShards ?? 1),
    mapping: side,
    lookups: {
      findOutput: (key) => reader.find(worker.outputBucket, key),
      inputExists: async (key) => (await reader.find(inputBucket, key)) !== undefined,
    },
    checkLongOrphans: options.prefix === side.inputPrefix,
  })) {
    if (verdict.state !== ReprocessState.ORPHAN || !verdict.inputKey) continue;
    // Its main output, if still there, is an orphan of the main merge already (counted and pruned there).
    if (await reader.find(worker.outputBucket, options.mapping.outputKeyOf(verdict.inputKey))) continue;
    yield { ...verdict, reason: 'side object of an input that is gone (no main output)' };
  }
}

async function* filterVerdicts(
  verdicts: AsyncIterable<ReprocessVerdict>,
  only: ReadonlySet<string>,
): AsyncGenerator<ReprocessVerdict> {
  for await (const v of verdicts) if (v.inputKey && only.has(v.inputKey)) yield v;
}
