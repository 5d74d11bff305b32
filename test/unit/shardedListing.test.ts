import { describe, expect, it } from 'vitest';
import { findKeyRanges, listSharded } from '../../app/reprocess/shardedListing.js';
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
      const bucket = new InMemoryListing(keySet(seed, 3000), 0);
      const expected = bucket.keys.filter((k) => k.startsWith('incoming/'));
      for (const shards of [1, 2, 16]) {
        const keys = await collect(listSharded(bucket.listPage, 'b', 'incoming/', { shards, bufferedPages: 2 }));
        expect(keys, `seed ${seed}, ${shards} shards`).toEqual(expected);
      }
    }
  });

  it('lists an empty prefix, and a range emptied between probing and listing, as nothing', async () => {
    const empty = new InMemoryListing(['other/a'], 0);
    expect(await collect(listSharded(empty.listPage, 'b', 'incoming/', { shards: 16 }))).toEqual([]);
    const bucket = new InMemoryListing(['incoming/a1', 'incoming/a2', 'incoming/b1', 'incoming/b2', 'incoming/c1'], 0);
    bucket.hidden = (key) => key.startsWith('incoming/b');
    // One round of splits: the ranges a, b, c; b's keys are gone by the time it is listed.
    expect(await collect(listSharded(bucket.listPage, 'b', 'incoming/', { shards: 4, maxSplits: 0 }))).toEqual([
      'incoming/a1',
      'incoming/a2',
      'incoming/c1',
    ]);
  });

  it('splits below the prefix all keys share, and keeps a key equal to a range prefix first', async () => {
    const bucket = new InMemoryListing(['in/dt=01/x', 'in/dt=02/x', 'in/dt=02', 'in/dt=03/y'], 0);
    expect(await findKeyRanges(bucket.listPage, 'b', 'in/', 3, 0)).toEqual([
      { kind: 'prefix', prefix: 'in/dt=01' },
      { kind: 'prefix', prefix: 'in/dt=02' },
      { kind: 'prefix', prefix: 'in/dt=03' },
    ]);
    const deeper = await findKeyRanges(bucket.listPage, 'b', 'in/dt=02', 2, 0);
    // A range of one key becomes that key, found by the probe: it is not listed again.
    expect(deeper).toMatchObject([
      { kind: 'object', object: { key: 'in/dt=02' } },
      { kind: 'object', object: { key: 'in/dt=02/x' } },
    ]);
  });

  it('keeps at most `shards` requests in flight and at most shards x bufferedPages pages held for a slow reader', async () => {
    const keys = Array.from({ length: 64_000 }, (_, i) => `incoming/${(i % 64).toString(16).padStart(2, '0')}/${i}`);
    const bucket = new InMemoryListing(keys, 1);
    let read = 0;
    let maxAhead = 0;
    for await (const _ of listSharded(bucket.listPage, 'b', 'incoming/', { shards: 4, bufferedPages: 2 })) {
      read++;
      if (read % 1000 === 0) {
        // Pages requested beyond what was read (probes return one key each and are not held).
        const pagesRequested = bucket.requests - bucket.probes;
        maxAhead = Math.max(maxAhead, pagesRequested - Math.floor(read / 1000));
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
    expect(read).toBe(64_000);
    expect(bucket.maxInFlight).toBeLessThanOrEqual(4);
    // 64 ranges of 1,000 keys: one page each plus the final empty-continuation check never happens
    // (a page under 1,000 keys ends its range), so what is held stays within the budget of 8 pages.
    expect(maxAhead).toBeLessThanOrEqual(4 * 2 + 1);
  });
});
