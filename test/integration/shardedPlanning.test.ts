import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { deterministicKeyMapping } from '../../app/reprocess/outputKeyMapping.js';
import { emptyPlanCounts, planReprocess, type ReprocessVerdict } from '../../app/reprocess/planReprocess.js';
import { S3ListingReader } from '../../app/reprocess/S3ListingReader.js';
import { mapWithConcurrency } from '../../src/batch/mapWithConcurrency.js';
import { testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';

describe('sharded planning against moto', () => {
  const clients = testClients();

  it('plans exactly what the sequential listing plans (missing, current, orphans; unicode and split-point keys)', async () => {
    const input = await createBucket(clients.s3, uniqueName('sp-in'));
    const output = await createBucket(clients.s3, uniqueName('sp-out'));
    const mapping = deterministicKeyMapping({
      inputBucket: input,
      inputPrefix: 'incoming/',
      outputPrefix: 'normalized/',
      suffix: '.ndjson',
    });
    // Keys around split points (a key equal to another's prefix, neighbours of '/'), unicode (BMP
    // top, astral), spaces and plus signs, and several day ranges.
    const keys = [
      'incoming/a',
      'incoming/a/b.csv',
      'incoming/a.csv',
      'incoming/a0.csv',
      'incoming/caf\u00e9 +1.csv',
      'incoming/\uFFFD.csv',
      'incoming/\u{1F600}.csv',
      ...Array.from(
        { length: 120 },
        (_, i) => `incoming/dt=2026-01-${String((i % 12) + 1).padStart(2, '0')}/f ${i}.csv`,
      ),
    ];
    await mapWithConcurrency(keys, 8, (key) =>
      clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: 'x' })),
    );
    // Outputs: most current, some missing (every fifth), one orphan per day.
    const outputs = [
      ...keys.filter((_, i) => i % 5 !== 0).map((k) => mapping.outputKeyOf(k)),
      ...Array.from({ length: 12 }, (_, d) =>
        mapping.outputKeyOf(`incoming/dt=2026-01-${String(d + 1).padStart(2, '0')}/gone.csv`),
      ),
    ];
    await mapWithConcurrency(outputs, 8, (key) =>
      clients.s3.send(new PutObjectCommand({ Bucket: output, Key: key, Body: 'y' })),
    );

    const counters = { splits: 0 };
    const plan = async (shards: number) => {
      const reader = new S3ListingReader(clients.s3);
      // Pages of 5 keys, so that moto's StartAfter answers the ranges split while they are listed.
      const sharding = { pageSize: 5, counters };
      const verdicts: ReprocessVerdict[] = [];
      const counts = emptyPlanCounts();
      for await (const verdict of planReprocess(
        {
          inputs: reader.listSharded(input, 'incoming/', shards, sharding),
          outputs: reader.listSharded(output, mapping.outputRoot, shards, sharding),
          mapping,
          lookups: {
            findOutput: (key) => reader.find(output, key),
            inputExists: async (key) => (await reader.find(input, key)) !== undefined,
          },
        },
        counts,
      ))
        verdicts.push(verdict);
      return { verdicts, counts, reader };
    };
    const sequential = await plan(1);
    const sharded = await plan(16);
    expect(sharded.verdicts).toEqual(sequential.verdicts);
    expect(sharded.counts).toEqual(sequential.counts);
    expect(sequential.verdicts.filter((v) => v.state === 'missing')).toHaveLength(Math.ceil(keys.length / 5));
    expect(sequential.verdicts.filter((v) => v.state === 'orphan')).toHaveLength(12);
    expect(counters.splits).toBeGreaterThan(4);
  });
});
