import { describe, expect, it } from 'vitest';
import { KeyAlphabet, planRangeSplit } from '../../app/reprocess/keySpaceSplit.js';
import { compareS3Keys } from '../../app/reprocess/s3KeyOrder.js';
import { listSharded, type ShardedListingCounters } from '../../app/reprocess/shardedListing.js';
import { InMemoryListing } from '../../bench/shardedPlanning.js';

/** A seeded generator (mulberry32), so a failing key set can be reproduced from its seed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Characters that sort around split points: ASCII neighbours, the BMP's top, astral, U+10FFFF. */
const ALPHABET = ['0', '9', '/', '.', '-', ' ', '+', 'a', 'z', 'A', 'é', '\uFFFD', '\u{1F600}', '\u{10FFFF}'];

function keySet(seed: number, count: number): string[] {
  const next = random(seed);
  const keys = new Set<string>(['incoming/', 'incoming/a', 'incoming/a/', 'incoming/a/b', 'incoming/a.csv']);
  while (keys.size < count) {
    const length = 1 + Math.floor(next() * 6);
    let key = 'incoming/';
    for (let i = 0; i < length; i++) key += ALPHABET[Math.floor(next() * ALPHABET.length)];
    keys.add(key);
  }
  return [...keys, 'incominh/outside', 'incoming', 'aaa'];
}

async function collect(iterable: AsyncIterable<{ key: string }>): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of iterable) keys.push(o.key);
  return keys;
}

describe('listSharded', () => {
  it('yields exactly the sequential listing on seeded key sets (split points, unicode, U+10FFFF, exact-prefix keys)', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      // Pages of 7 keys: ranges are estimated, split and cut while listed hundreds of times.
      const bucket = new InMemoryListing(keySet(seed, 3000), 0, 7);
      const expected = bucket.keys.filter((k) => k.startsWith('incoming/'));
      for (const shards of [1, 2, 16]) {
        const counters = { splits: 0 };
        const keys = await collect(
          listSharded(bucket.listPage, 'b', 'incoming/', { shards, bufferedPages: 1, counters }),
        );
        expect(keys, `seed ${seed}, ${shards} shards`).toEqual(expected);
        if (shards > 1) expect(counters.splits, `seed ${seed}, ${shards} shards`).toBeGreaterThan(10);
        else expect(counters.splits).toBe(0);
      }
    }
  });

  it('lists an empty prefix as nothing, and a prefix of one short page with one request', async () => {
    const empty = new InMemoryListing(['other/a', 'incominh'], 0);
    expect(await collect(listSharded(empty.listPage, 'b', 'incoming/', { shards: 16 }))).toEqual([]);
    expect(empty.requests).toBe(1);
    const small = new InMemoryListing(['incoming/a1', 'incoming/a2', 'incoming/b1', 'other/x'], 0);
    expect(await collect(listSharded(small.listPage, 'b', 'incoming/', { shards: 16 }))).toEqual([
      'incoming/a1',
      'incoming/a2',
      'incoming/b1',
    ]);
    expect(small.requests).toBe(1);
  });

  it('costs few requests beyond the pages when keys are dense (the bench layout, 200 pages of 50)', async () => {
    const keys = Array.from(
      { length: 10_000 },
      (_, i) => `incoming/dt=2026-01-${String((i % 28) + 1).padStart(2, '0')}/file-${String(i).padStart(7, '0')}.csv`,
    );
    const bucket = new InMemoryListing(keys, 0, 50);
    const counters = { splits: 0 };
    const listed = await collect(listSharded(bucket.listPage, 'b', 'incoming/', { shards: 16, counters }));
    expect(listed).toEqual(bucket.keys);
    expect(counters.splits).toBeGreaterThan(8);
    // 200 full pages; each range's end costs at most one short page more.
    expect(bucket.requests).toBeLessThan(200 + counters.splits + 2);
  });

  it('keeps at most `shards` requests in flight, and the keys listed ahead of a slow reader within shards x (bufferedPages + 1) pages', async () => {
    const keys = Array.from({ length: 64_000 }, (_, i) => `incoming/${(i % 64).toString(16).padStart(2, '0')}/${i}`);
    const bucket = new InMemoryListing(keys, 1);
    let listed = 0;
    const listPage: typeof bucket.listPage = async (input) => {
      const page = await bucket.listPage(input);
      listed += page.objects.length;
      return page;
    };
    let read = 0;
    let maxAhead = 0;
    const counters: ShardedListingCounters = { splits: 0 };
    for await (const _ of listSharded(listPage, 'b', 'incoming/', { shards: 4, bufferedPages: 2, counters })) {
      read++;
      maxAhead = Math.max(maxAhead, listed - (counters.relisted ?? 0) - read);
      if (read % 1000 === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(read).toBe(64_000);
    expect(counters.splits).toBeGreaterThan(3);
    expect(bucket.maxInFlight).toBeLessThanOrEqual(4);
    // Held: listed and not read, less what was dropped at range ends. The budget is 4 x 2 pages;
    // the range being read may overrun it by the 4 slots.
    expect(maxAhead).toBeLessThanOrEqual((4 * 2 + 4) * 1000);
  });
});

describe('planRangeSplit', () => {
  it('returns a point strictly inside the range, or none, on seeded bounds (unicode, U+10FFFF, shared prefixes)', () => {
    const next = random(7);
    const alphabet = new KeyAlphabet();
    for (const key of keySet(7, 200)) alphabet.observe(key);
    const keys = keySet(8, 400).filter((k) => k.startsWith('incoming/'));
    let found = 0;
    for (let n = 0; n < 2000; n++) {
      const [a, b] = [keys[Math.floor(next() * keys.length)], keys[Math.floor(next() * keys.length)]] as [
        string,
        string,
      ];
      if (compareS3Keys(a, b) >= 0) continue;
      const split = planRangeSplit(
        alphabet,
        { after: a, hi: next() < 0.2 ? undefined : b, fetching: false },
        'incoming/',
        1,
      );
      if (!split) continue;
      found++;
      expect(compareS3Keys(a, split.point)).toBeLessThan(0);
      expect(split.point.startsWith('incoming/')).toBe(true);
      expect(compareS3Keys(split.point, b) < 0 || compareS3Keys(split.point, 'incoming/\u{10FFFF}') < 0).toBe(true);
    }
    expect(found).toBeGreaterThan(500);
  });

  it('estimates the pages left from the last page and its alphabet (decimal keys count in tens)', () => {
    const alphabet = new KeyAlphabet();
    const key = (i: number) => `in/${String(i).padStart(6, '0')}`;
    for (let i = 0; i < 100_000; i += 97) alphabet.observe(key(i));
    // A page of 1,000 keys from 000000 to 000999; 99 pages more up to 099999.
    const split = planRangeSplit(
      alphabet,
      { pageFirst: key(0), after: key(999), hi: key(99_999), fetching: false },
      'in/',
      2,
    );
    expect(split?.pages).toBeGreaterThan(50);
    expect(split?.pages).toBeLessThan(200);
    expect(compareS3Keys(split?.point ?? '', key(40_000))).toBeGreaterThan(0);
    expect(compareS3Keys(split?.point ?? '', key(60_000))).toBeLessThan(0);
    // Too small to split: fewer pages left than asked for.
    expect(
      planRangeSplit(alphabet, { pageFirst: key(0), after: key(999), hi: key(2_500), fetching: false }, 'in/', 4),
    ).toBeUndefined();
  });
});
