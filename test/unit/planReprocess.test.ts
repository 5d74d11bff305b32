import { describe, expect, it } from 'vitest';
import { codeVersionCutoff } from '../../app/reprocess/codeVersionCutoff.js';
import { deterministicKeyMapping } from '../../app/reprocess/outputKeyMapping.js';
import {
  emptyPlanCounts,
  isSelected,
  judgeListing,
  type ListedObject,
  planReprocess,
  ReprocessMode,
  ReprocessState,
  type ReprocessVerdict,
} from '../../app/reprocess/planReprocess.js';
import { encodeS3EventKey, reprocessMessageBody } from '../../app/reprocess/reprocessMessage.js';
import { compareS3Keys } from '../../app/reprocess/s3KeyOrder.js';
import { decideRemoval } from '../../src/done/removalDecision.js';
import { parseS3EventBody } from '../../src/intake/parseS3Event.js';

const mapping = deterministicKeyMapping({
  inputBucket: 'in',
  inputPrefix: 'incoming/',
  outputPrefix: 'normalized/',
  suffix: '.ndjson',
});

/** An in-memory bucket listed as ListObjectsV2 lists: UTF-8 binary order. */
class FakeBucket {
  readonly objects = new Map<string, ListedObject>();
  lookups = 0;
  put(key: string, lastModified: number, etag = `e-${key.length}`): void {
    this.objects.set(key, { key, etag, size: 1, lastModified });
  }
  async *list(prefix = ''): AsyncGenerator<ListedObject> {
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort(compareS3Keys);
    for (const key of keys) yield this.objects.get(key) as ListedObject;
  }
  async find(key: string): Promise<ListedObject | undefined> {
    this.lookups++;
    return this.objects.get(key);
  }
}

async function plan(
  inputs: FakeBucket,
  outputs: FakeBucket,
  prefix = 'incoming/',
  skip?: (k: string) => string | undefined,
) {
  const counts = emptyPlanCounts();
  const verdicts: ReprocessVerdict[] = [];
  for await (const v of planReprocess(
    {
      inputs: inputs.list(prefix),
      outputs: outputs.list(`normalized/in/${prefix.slice('incoming/'.length)}`),
      mapping,
      lookups: {
        findOutput: (key) => outputs.find(key),
        inputExists: async (key) => (await inputs.find(key)) !== undefined,
      },
      ...(skip ? { skipReason: skip } : {}),
      checkLongOrphans: prefix === 'incoming/',
    },
    counts,
  ))
    verdicts.push(v);
  return { verdicts, counts };
}

/** The obvious join with every key in memory: what the streaming merge must agree with. */
function oracle(inputs: FakeBucket, outputs: FakeBucket): Map<string, ReprocessState> {
  const result = new Map<string, ReprocessState>();
  const mapped = new Set<string>();
  for (const input of inputs.objects.values()) {
    const outputKey = mapping.outputKeyOf(input.key);
    mapped.add(outputKey);
    result.set(input.key, judgeListing(input, outputKey, outputs.objects.get(outputKey)).state);
  }
  for (const output of outputs.objects.values()) {
    if (!mapped.has(output.key) && output.key.startsWith('normalized/in/'))
      result.set(output.key, ReprocessState.ORPHAN);
  }
  return result;
}

const byKey = (verdicts: readonly ReprocessVerdict[]) =>
  new Map(verdicts.map((v) => [v.state === ReprocessState.ORPHAN ? v.outputKey : (v.inputKey as string), v.state]));

/** A small seeded generator (mulberry32), so every run checks the same cases. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('compareS3Keys: ListObjectsV2 order (UTF-8 binary)', () => {
  it('orders by code point, not by UTF-16 unit: an astral character sorts after U+FFFD', () => {
    expect('\u{1F600}' < '\uFFFD').toBe(true); // JavaScript's own order disagrees
    expect(compareS3Keys('a/\u{1F600}', 'a/\uFFFD')).toBe(1);
    expect(Buffer.compare(Buffer.from('a/\u{1F600}'), Buffer.from('a/\uFFFD'))).toBe(1);
    expect(compareS3Keys('a', 'a')).toBe(0);
    expect(compareS3Keys('a', 'ab')).toBe(-1);
  });
});

describe('planReprocess: the merge-join of inputs and outputs', () => {
  it('finds missing, stale (output older than input), current and orphan outputs from listings alone', async () => {
    const inputs = new FakeBucket();
    const outputs = new FakeBucket();
    inputs.put('incoming/a.csv', 100);
    outputs.put('normalized/in/a.csv.ndjson', 200); // current
    inputs.put('incoming/b.csv', 300);
    outputs.put('normalized/in/b.csv.ndjson', 200); // stale: input rewritten after the build
    inputs.put('incoming/c.csv', 100); // missing
    outputs.put('normalized/in/d.csv.ndjson', 100); // orphan
    inputs.put('incoming/e.csv', 500);
    outputs.put('normalized/in/e.csv.ndjson', 500); // same second: current (see planReprocess)
    const { verdicts, counts } = await plan(inputs, outputs);
    expect(verdicts.map((v) => [v.inputKey, v.state])).toEqual([
      ['incoming/a.csv', 'current'],
      ['incoming/b.csv', 'stale'],
      ['incoming/c.csv', 'missing'],
      ['incoming/d.csv', 'orphan'],
      ['incoming/e.csv', 'current'],
    ]);
    expect(counts).toMatchObject({ inputs: 4, outputs: 4, lookedUp: 0, inputChecks: 1, foreign: 0 });
  });

  it('prefix inputs whose output keys sort the other way (a.csv, a.csv-2.csv, a.csv.bak) are looked up by key', async () => {
    const inputs = new FakeBucket();
    const outputs = new FakeBucket();
    for (const key of ['incoming/a.csv', 'incoming/a.csv-2.csv', 'incoming/a.csv copy.csv', 'incoming/a.csv.bak.csv']) {
      inputs.put(key, 100);
      outputs.put(mapping.outputKeyOf(key), 200);
    }
    // The disagreement the planner must survive: in output space `a.csv.ndjson` sorts after the others.
    expect(compareS3Keys('normalized/in/a.csv-2.csv.ndjson', 'normalized/in/a.csv.ndjson')).toBe(-1);
    expect(compareS3Keys('incoming/a.csv-2.csv', 'incoming/a.csv')).toBe(1);
    const { verdicts, counts } = await plan(inputs, outputs);
    expect(verdicts.filter((v) => v.state !== 'current')).toEqual([]);
    expect(verdicts).toHaveLength(4);
    expect(counts.lookedUp).toBe(1); // only incoming/a.csv prefixes the others
    expect(counts.inputChecks).toBe(1); // its output, met unmatched in the merge, has its input
  });

  it('long keys: the hashed output is found by key, and a hashed output with no input is an orphan', async () => {
    const inputs = new FakeBucket();
    const outputs = new FakeBucket();
    const long = `incoming/${'x'.repeat(1100)}.csv`;
    const goneLong = `incoming/${'y'.repeat(1100)}.csv`;
    inputs.put(long, 100);
    outputs.put(mapping.outputKeyOf(long), 200);
    outputs.put(mapping.outputKeyOf(goneLong), 200);
    expect(mapping.isHashedOutputKey(mapping.outputKeyOf(long))).toBe(true);
    const { verdicts } = await plan(inputs, outputs);
    expect(verdicts.map((v) => v.state)).toEqual(['current', 'orphan']);
    expect(verdicts[1]?.outputKey).toBe(mapping.outputKeyOf(goneLong));
  });

  it('skips what the worker skips, and leaves foreign objects at the output prefix alone', async () => {
    const inputs = new FakeBucket();
    const outputs = new FakeBucket();
    inputs.put('incoming/notes.txt', 100);
    inputs.put('incoming/a.csv', 100);
    outputs.put('normalized/in/readme', 100); // not a key the mapping produces
    const { verdicts, counts } = await plan(inputs, outputs, 'incoming/', (k) =>
      k.endsWith('.txt') ? 'unsupported' : undefined,
    );
    expect(verdicts.map((v) => [v.inputKey, v.state])).toEqual([
      ['incoming/a.csv', 'missing'],
      ['incoming/notes.txt', 'skipped'],
    ]);
    expect(counts.foreign).toBe(1);
  });

  it('agrees with an in-memory join on 300 seeded random key sets built to collide in sort order', async () => {
    const alphabet = ['a', 'b', '.', '-', ' ', '/', '~', 'é', '\u{1F600}', '\uFFFD', '.ndjson', '.csv'];
    const next = random(42);
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
    for (let round = 0; round < 300; round++) {
      const inputs = new FakeBucket();
      const outputs = new FakeBucket();
      const keys = new Set<string>();
      for (let i = 0; i < 12; i++) {
        let relative = '';
        const base = [...keys][Math.floor(next() * keys.size)];
        if (base && next() < 0.5) relative = base.slice('incoming/'.length); // extend an existing key: prefix chains
        const parts = 1 + Math.floor(next() * 3);
        for (let p = 0; p < parts; p++) relative += pick(alphabet);
        keys.add(`incoming/${relative}`);
      }
      for (const key of keys) {
        inputs.put(key, 100);
        const roll = next();
        if (roll < 0.4) outputs.put(mapping.outputKeyOf(key), 200);
        else if (roll < 0.6) outputs.put(mapping.outputKeyOf(key), 50);
      }
      for (let i = 0; i < 3; i++) {
        const gone = `incoming/${pick(alphabet)}${pick(alphabet)}`;
        if (!keys.has(gone)) outputs.put(mapping.outputKeyOf(gone), 100);
      }
      const { verdicts } = await plan(inputs, outputs);
      expect(byKey(verdicts), `round ${round}: ${JSON.stringify([...keys])}`).toEqual(oracle(inputs, outputs));
      expect(verdicts).toHaveLength(oracle(inputs, outputs).size); // each object judged once
    }
  });

  it('plans a narrower prefix from the matching output prefix only', async () => {
    const inputs = new FakeBucket();
    const outputs = new FakeBucket();
    inputs.put('incoming/dt=2026-01-01/a.csv', 100);
    inputs.put('incoming/dt=2026-01-02/a.csv', 100);
    outputs.put('normalized/in/dt=2026-01-02/b.csv.ndjson', 100);
    const { verdicts } = await plan(inputs, outputs, 'incoming/dt=2026-01-02/');
    expect(verdicts.map((v) => [v.inputKey, v.state])).toEqual([
      ['incoming/dt=2026-01-02/a.csv', 'missing'],
      ['incoming/dt=2026-01-02/b.csv', 'orphan'],
    ]);
  });
});

describe('modes', () => {
  it('missing selects missing only; stale adds stale, invalid and old-code; all adds current; orphans never', () => {
    const states = Object.values(ReprocessState);
    const chosen = (mode: ReprocessMode) => states.filter((state) => isSelected({ state }, mode));
    expect(chosen(ReprocessMode.MISSING)).toEqual(['missing']);
    expect(chosen(ReprocessMode.STALE)).toEqual(['missing', 'stale', 'invalid', 'old-code']);
    expect(chosen(ReprocessMode.ALL)).toEqual(['missing', 'stale', 'invalid', 'old-code', 'current']);
  });
});

describe('the reprocess message', () => {
  it('is an S3 event the worker intake reads back to the same key, ETag and size', () => {
    const key = 'incoming/a b+c/café/\u{1F600}%.csv';
    expect(encodeS3EventKey('incoming/a b+c.csv')).toBe('incoming/a+b%2Bc.csv');
    const intake = parseS3EventBody(reprocessMessageBody({ bucket: 'in', key, etag: '9b2c', size: 12 }));
    const read = {
      bucket: 'in',
      key,
      eventName: 'ObjectCreated:Put',
      eTag: '9b2c',
      size: 12,
      origin: 'rerun-reprocess',
    };
    expect(intake).toEqual({ kind: 'objects', objects: [read] });
    // With its send time, that is its event's time: a first receive soon after it is a fresh delivery.
    const sent = parseS3EventBody(
      reprocessMessageBody({ bucket: 'in', key, etag: '9b2c', size: 12, sentAt: Date.parse('2026-12-04T10:00:00Z') }),
    );
    expect(sent).toEqual({ kind: 'objects', objects: [{ ...read, eventTime: '2026-12-04T10:00:00.000Z' }] });
  });
});

describe('decideRemoval (deletion propagates)', () => {
  const source = { bucket: 'in', key: 'incoming/a.csv' };
  const head = (sourceValue: string | undefined, etag: string) => ({
    etag,
    contentLength: 1,
    metadata: (sourceValue ? { 'rerun-source': sourceValue } : {}) as Record<string, string>,
  });
  it('removes the outputs naming the input, on the ETags seen, only when the input is gone', () => {
    const outputs = [
      { name: 'main', key: 'normalized/in/a.csv.ndjson', head: head('in/incoming%2Fa.csv', 'm1') },
      { name: 'quarantine', key: 'quarantine/in/a.csv.ndjson', head: head('in/incoming%2Fa.csv', 'q1') },
    ];
    expect(decideRemoval({ source, inputExists: false, outputs }).remove).toEqual([
      { name: 'main', key: 'normalized/in/a.csv.ndjson', etag: 'm1' },
      { name: 'quarantine', key: 'quarantine/in/a.csv.ndjson', etag: 'q1' },
    ]);
    const reuploaded = decideRemoval({ source, inputExists: true, outputs });
    expect(reuploaded).toMatchObject({ remove: [], skipReason: expect.stringMatching(/re-uploaded/) });
    // Each output in place is reported kept, by name and key.
    expect(reuploaded.kept.map(({ name, key }) => ({ name, key }))).toEqual([
      { name: 'main', key: 'normalized/in/a.csv.ndjson' },
      { name: 'quarantine', key: 'quarantine/in/a.csv.ndjson' },
    ]);
  });
  it('keeps an object that does not name this input, and says when there is nothing to remove', () => {
    const foreign = [{ name: 'main', key: 'normalized/in/a.csv.ndjson', head: head(undefined, 'x') }];
    expect(decideRemoval({ source, inputExists: false, outputs: foreign })).toMatchObject({
      remove: [],
      kept: [{ name: 'main', reason: expect.stringMatching(/does not name this input/) }],
    });
    const none = [{ name: 'main', key: 'normalized/in/a.csv.ndjson', head: undefined }];
    const nothing = decideRemoval({ source, inputExists: false, outputs: none });
    expect(nothing).toMatchObject({ remove: [], kept: [], skipReason: expect.stringMatching(/no output/) });
  });
});

describe('codeVersionCutoff (a code-version bump, from the markers)', () => {
  const marker = (version: string, lastModified: number) => ({
    key: `code-versions/normalize/${encodeURIComponent(version)}`,
    etag: 'e',
    size: 0,
    lastModified,
  });
  const options = { prefix: 'code-versions/', worker: 'normalize', codeVersion: 'normalize@2', overlapMs: 120_000 };

  it('is known when the current version has the newest marker: older outputs are old-code, the window gets a HEAD', () => {
    const cutoff = codeVersionCutoff([marker('normalize@1', 1_000), marker('normalize@2', 5_000)], options);
    expect(cutoff).toEqual({ state: 'known', codeVersion: 'normalize@2', since: 5_000, until: 125_000 });
    const input = { key: 'incoming/a.csv', etag: 'i', size: 1, lastModified: 0 };
    const at = (lastModified: number) =>
      judgeListing(
        input,
        'normalized/in/a.csv.ndjson',
        { ...input, key: 'o', lastModified },
        cutoff.state === 'known' ? cutoff : undefined,
      );
    expect(at(4_000)).toMatchObject({ state: 'old-code' });
    expect(at(5_000)).toMatchObject({ state: 'current', checkCode: true });
    expect(at(125_000)).toMatchObject({ state: 'current' });
    expect(at(125_000).checkCode).toBeUndefined();
  });

  it('is unknown without a marker of the current version, and after a rollback (another version ran later)', () => {
    expect(codeVersionCutoff([marker('normalize@1', 1_000)], options)).toMatchObject({
      state: 'unknown',
      reason: expect.stringMatching(/deploy it first/),
    });
    expect(codeVersionCutoff([marker('normalize@2', 1_000), marker('normalize@1', 9_000)], options)).toMatchObject({
      state: 'unknown',
      reason: expect.stringMatching(/rollback/),
    });
  });
});
