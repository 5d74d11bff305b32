import { describe, expect, it } from 'vitest';
import { reprocessRequest } from '../../app/cli/reprocessOptions.js';
import { CliUsageError } from '../../app/common/command.js';
import type { PlanningStage } from '../../app/common/pipelineStage.js';
import type { PipelineTarget } from '../../app/common/pipelineTarget.js';
import { ReprocessEngine } from '../../app/reprocess/batchOperationsJob.js';
import { ReprocessMode } from '../../app/reprocess/planReprocess.js';
import { reprocessArgs } from '../../app/reprocess/reprocessArgs.js';
import { topology } from '../../app/topology.js';

/** The target as the checks read it: its topology and input bucket, nothing else. */
const TARGET = { topology, inputBucket: 'acme-input' } as PipelineTarget;

/** An object stage over incoming/ that declares its code version. */
const STAGE = {
  name: 'normalize',
  from: 'pipeline.json',
  reference: false,
  inputPrefix: 'incoming/',
  codeVersion: 'normalize@1',
} as PlanningStage;

const refused = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliUsageError);
    return (error as Error).message;
  }
  throw new Error('not refused');
};

describe('rerun reprocess: the command parses its options into a typed request, the wing checks it', () => {
  it('parses each option into its typed field, defaults included', () => {
    const request = reprocessRequest({
      prefix: 'incoming/2026/',
      mode: 'all',
      engine: 'batch-operations',
      'generate-manifest': true,
      'created-after': '2026-01-02T03:04:05Z',
      shards: '4',
      'dry-run': true,
    });
    expect(request).toMatchObject({
      prefix: 'incoming/2026/',
      mode: ReprocessMode.ALL,
      engine: ReprocessEngine.BATCH_OPERATIONS,
      engineGiven: true,
      generateManifest: true,
      createdAfter: new Date('2026-01-02T03:04:05Z'),
      listShards: 4,
      dryRun: true,
      wait: false,
      prune: false,
    });
    expect(reprocessRequest({})).toMatchObject({
      mode: ReprocessMode.STALE,
      engine: ReprocessEngine.SQS,
      engineGiven: false,
    });
  });

  it('refuses an option that does not parse, before any target is read', () => {
    expect(refused(() => reprocessRequest({ mode: 'some' }))).toBe(
      '--mode must be missing, stale or all (got "some").',
    );
    expect(refused(() => reprocessRequest({ engine: 'lambda' }))).toMatch(
      /^--engine must be sqs, batch-operations or auto/,
    );
    expect(refused(() => reprocessRequest({ 'created-before': 'yesterday' }))).toMatch(
      /^--created-before must be an ISO 8601 time/,
    );
  });

  it('the wing checks the request against the stage and target, and gives their defaults', () => {
    const args = reprocessArgs(reprocessRequest({}), TARGET, STAGE);
    expect(args.prefix).toBe('incoming/');
    expect(args.overlapSeconds).toBe(topology.normalize.functionTimeoutSeconds + 60);
    expect(refused(() => reprocessArgs(reprocessRequest({ prefix: 'other/' }), TARGET, STAGE))).toMatch(
      /^--prefix must start with the input prefix incoming\//,
    );
    expect(refused(() => reprocessArgs(reprocessRequest({ job: 'j-1', engine: 'sqs' }), TARGET, STAGE))).toMatch(
      /^--job attaches to a Batch Operations job/,
    );
    const generated = reprocessArgs(
      reprocessRequest({ engine: 'batch-operations', 'generate-manifest': true }),
      TARGET,
      STAGE,
    );
    expect(generated.generator).toEqual({
      generator: { sourceBucket: 'acme-input', prefix: 'incoming/', createdAfter: undefined, createdBefore: undefined },
    });
  });
});
