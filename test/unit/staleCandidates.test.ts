import { describe, expect, it } from 'vitest';
import { deterministicKeyMapping } from '../../app/reprocess/outputKeyMapping.js';
import {
  emptyPlanCounts,
  type ListedObject,
  planReprocess,
  ReprocessState,
  type ReprocessVerdict,
} from '../../app/reprocess/planReprocess.js';
import { verifyVerdicts } from '../../app/reprocess/verifyVerdicts.js';
import type { OutputHead } from '../../src/done/judgeOutput.js';
import { buildOutputMetadata } from '../../src/done/outputMetadata.js';

// Identical bytes uploaded again (s5cmd sync, `aws s3 cp` twice, a copy onto itself) give the input a
// later LastModified and the same ETag. The worker's done-check finds the output built from that ETag
// and writes nothing; planning must call it current too, or it plans the input stale forever.

const mapping = deterministicKeyMapping({
  inputBucket: 'in',
  inputPrefix: 'incoming/',
  outputPrefix: 'normalized/',
  suffix: '.ndjson',
});
const CODE = 'normalize@2';

const listed = (key: string, etag: string, lastModified: number): ListedObject => ({
  key,
  etag,
  size: 10,
  lastModified,
});

/** The HEAD of an output the worker built from input `key` at content `sourceEtag`. */
function builtHead(key: string, sourceEtag: string, codeVersion = CODE): OutputHead {
  return {
    etag: `out-${key}`,
    contentLength: 20,
    checksumSHA256: 'd=',
    metadata: buildOutputMetadata({
      source: { bucket: 'in', key, etag: sourceEtag },
      codeVersion,
      integrity: { kind: 'sha256', sha256Base64: 'd=', bytes: 20 },
    }),
  };
}

async function* each<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

/** runReprocess's stream without --verify: listings, the merge, then the HEADs of the candidates. */
async function judge(
  inputs: readonly ListedObject[],
  outputs: readonly ListedObject[],
  heads: ReadonlyMap<string, OutputHead>,
  options: { readonly concurrency?: number; readonly verify?: boolean } = {},
) {
  const counts = emptyPlanCounts();
  const headed: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const verdicts: ReprocessVerdict[] = [];
  const planned = planReprocess(
    {
      inputs: each(inputs),
      outputs: each(outputs),
      mapping,
      lookups: { findOutput: async () => undefined, inputExists: async () => true },
    },
    counts,
  );
  for await (const v of verifyVerdicts(planned, {
    inputBucket: 'in',
    codeVersion: CODE,
    ...(options.verify ? {} : { select: (v: ReprocessVerdict) => v.checkCode === true }),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    head: async (key) => {
      headed.push(key);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight--;
      return heads.get(key);
    },
  }))
    verdicts.push(v);
  return { verdicts, counts, headed, maxInFlight };
}

describe('reprocess planning: a timestamp nominates a stale candidate, its recorded source decides', () => {
  it('an output older than its input is only a candidate by the listing (stale, checkSource), counted in sourceChecks', async () => {
    const counts = emptyPlanCounts();
    const verdicts: ReprocessVerdict[] = [];
    for await (const v of planReprocess(
      {
        inputs: each([listed('incoming/a.csv', 'e1', 2000), listed('incoming/b.csv', 'e2', 1000)]),
        outputs: each([
          listed('normalized/in/a.csv.ndjson', 'o1', 1000),
          listed('normalized/in/b.csv.ndjson', 'o2', 2000),
        ]),
        mapping,
        lookups: { findOutput: async () => undefined, inputExists: async () => true },
      },
      counts,
    ))
      verdicts.push(v);
    expect(verdicts.map((v) => [v.inputKey, v.state, v.checkSource])).toEqual([
      ['incoming/a.csv', 'stale', true],
      ['incoming/b.csv', 'current', undefined],
    ]);
    expect(counts.sourceChecks).toBe(1);
  });

  it('identical bytes uploaded again (same ETag, later LastModified) are current after one HEAD of the output', async () => {
    const { verdicts, headed, counts } = await judge(
      [listed('incoming/a.csv', 'e1', 5000)],
      [listed('normalized/in/a.csv.ndjson', 'o1', 1000)],
      new Map([['normalized/in/a.csv.ndjson', builtHead('incoming/a.csv', 'e1')]]),
    );
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]).toMatchObject({ state: ReprocessState.CURRENT, inputKey: 'incoming/a.csv' });
    expect(verdicts[0]?.reason).toMatch(/older than its input but built from its content \(input ETag e1/);
    expect(verdicts[0]?.checkSource).toBeUndefined();
    expect(headed).toEqual(['normalized/in/a.csv.ndjson']);
    expect(counts.sourceChecks).toBe(1);
  });

  it('an input re-uploaded with other bytes (another ETag) stays stale after the HEAD, naming both ETags', async () => {
    const { verdicts } = await judge(
      [listed('incoming/a.csv', 'e2', 5000)],
      [listed('normalized/in/a.csv.ndjson', 'o1', 1000)],
      new Map([['normalized/in/a.csv.ndjson', builtHead('incoming/a.csv', 'e1')]]),
    );
    expect(verdicts[0]).toMatchObject({
      state: ReprocessState.STALE,
      reason: 'built from input ETag e1, the input is e2',
    });
  });

  it('the HEAD judges a candidate as the worker does: old code is old-code, no rerun metadata invalid, gone missing', async () => {
    const inputs = ['a', 'b', 'c'].map((n) => listed(`incoming/${n}.csv`, 'e1', 5000));
    const outputs = ['a', 'b', 'c'].map((n) => listed(`normalized/in/${n}.csv.ndjson`, 'o', 1000));
    const { verdicts } = await judge(
      inputs,
      outputs,
      new Map([
        ['normalized/in/a.csv.ndjson', builtHead('incoming/a.csv', 'e1', 'normalize@1')],
        ['normalized/in/b.csv.ndjson', { etag: 'o', contentLength: 1, metadata: {} }],
      ]),
    );
    expect(verdicts.map((v) => v.state)).toEqual([
      ReprocessState.OLD_CODE,
      ReprocessState.INVALID,
      ReprocessState.MISSING,
    ]);
  });

  it('HEADs only the candidates, never an output the listing calls current (without --verify), with bounded concurrency', async () => {
    const inputs: ListedObject[] = [];
    const outputs: ListedObject[] = [];
    const heads = new Map<string, OutputHead>();
    for (let i = 0; i < 40; i++) {
      const key = `incoming/f${String(i).padStart(2, '0')}.csv`;
      const outputKey = mapping.outputKeyOf(key);
      const candidate = i % 2 === 0;
      inputs.push(listed(key, `e${i}`, candidate ? 5000 : 1000));
      outputs.push(listed(outputKey, `o${i}`, 2000));
      heads.set(outputKey, builtHead(key, `e${i}`));
    }
    const { verdicts, headed, maxInFlight, counts } = await judge(inputs, outputs, heads, { concurrency: 4 });
    expect(verdicts.map((v) => v.inputKey)).toEqual(inputs.map((i) => i.key)); // in listing order
    expect(verdicts.every((v) => v.state === ReprocessState.CURRENT)).toBe(true);
    expect(headed).toHaveLength(20);
    expect(counts.sourceChecks).toBe(20);
    expect(maxInFlight).toBeLessThanOrEqual(4);
    expect(maxInFlight).toBeGreaterThan(1);
  });

  it('--verify judges a candidate the same way (its HEAD is the one --verify would send)', async () => {
    const { verdicts, headed } = await judge(
      [listed('incoming/a.csv', 'e1', 5000), listed('incoming/b.csv', 'e9', 5000)],
      [listed('normalized/in/a.csv.ndjson', 'o1', 1000), listed('normalized/in/b.csv.ndjson', 'o2', 1000)],
      new Map([
        ['normalized/in/a.csv.ndjson', builtHead('incoming/a.csv', 'e1')],
        ['normalized/in/b.csv.ndjson', builtHead('incoming/b.csv', 'e1')],
      ]),
      { verify: true },
    );
    expect(verdicts.map((v) => v.state)).toEqual([ReprocessState.CURRENT, ReprocessState.STALE]);
    expect(headed).toHaveLength(2);
  });
});
