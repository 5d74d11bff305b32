import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { GetExactResult, S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { DEFAULT_WINDOW_READ_AHEAD, readWindowInputs } from '../../src/window/readWindowInputs.js';
import { dailyReadTask } from '../support/dailyReadTask.js';

/**
 * A window's reads run ahead of its build: up to `readAhead` GETs in flight, the build still handed
 * the inputs one at a time in the lineage's order, and reads started ahead of a stop destroyed unread.
 */

const task = dailyReadTask('out');

const lineage = Array.from({ length: 10 }, (_, i) => ({
  source: 'in',
  path: `dt=2026-12-05/${i}.json`,
  etag: `e${i}`,
}));

/** A reader whose GETs answer in reverse order of their start (a later input's answer comes first). */
function slowReader(changedKey?: string) {
  let inFlight = 0;
  let maxInFlight = 0;
  const bodies: Readable[] = [];
  const reader = {
    async getExact(_bucket: string, key: string): Promise<GetExactResult> {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const n = Number(/(\d+)\.json$/.exec(key)?.[1]);
      await new Promise((resolve) => setTimeout(resolve, (10 - n) * 2));
      inFlight--;
      if (key === changedKey) return { status: 'changed' };
      const body = Readable.from([Buffer.from(key)]);
      bodies.push(body);
      return { status: 'ok', body, contentLength: key.length };
    },
  } as unknown as S3PartitionStore;
  return { reader, bodies, maxInFlight: () => maxInFlight };
}

describe('readWindowInputs: reads ahead of the build', () => {
  it(`keeps up to readAhead GETs in flight (${DEFAULT_WINDOW_READ_AHEAD} by default) and yields in lineage order`, async () => {
    for (const [readAhead, expected] of [
      [undefined, DEFAULT_WINDOW_READ_AHEAD],
      [8, 8],
      [3, 3],
    ] as const) {
      const { reader, maxInFlight } = slowReader();
      const reads = readWindowInputs(task as never, '2026-12-05', lineage, reader, undefined, readAhead);
      const seen: string[] = [];
      for await (const input of reads.inputs) {
        seen.push(input.key);
        input.body.resume();
      }
      expect(seen).toEqual(lineage.map((e) => `in/${e.path}`));
      expect(maxInFlight()).toBe(expected);
    }
  });

  it('refuses a readAhead that is not a whole number of GETs, at least 1', () => {
    const { reader } = slowReader();
    for (const bad of [0, 1.5, Number.NaN]) {
      expect(() => readWindowInputs(task as never, '2026-12-05', lineage, reader, undefined, bad)).toThrow(
        /readAhead must be a whole number of GETs, at least 1/,
      );
    }
  });

  it('a build that stops early leaves no read open: the ones started ahead are destroyed', async () => {
    const { reader, bodies } = slowReader();
    const reads = readWindowInputs(task as never, '2026-12-05', lineage, reader, undefined, 4);
    for await (const input of reads.inputs) {
      input.body.resume();
      break;
    }
    // The reads started ahead answer after the stop; each is destroyed once it does.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(bodies.length).toBe(4);
    expect(bodies.every((b) => b.destroyed)).toBe(true);
  });

  /** A reader whose first GET of `cutKey` answers a body that the connection cuts off after `cutAfterMs`. */
  function cuttingReader(cutKey: string, cutAfterMs: number) {
    const gets: string[] = [];
    const reader = {
      async getExact(_bucket: string, key: string): Promise<GetExactResult> {
        gets.push(key);
        const body = new Readable({ read() {} });
        body.push(`${key} line 1\n${key} line 2\n`);
        if (key === cutKey && gets.filter((k) => k === key).length === 1) {
          setTimeout(() => body.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })), cutAfterMs);
        } else {
          body.push(null);
        }
        return { status: 'ok', body, contentLength: key.length };
      },
    } as unknown as S3PartitionStore;
    return { reader, gets };
  }

  /** Reads every input line by line as the reference summary does (node:readline), `pauseMs` a line. */
  async function readLines(inputs: AsyncIterable<{ readonly body: Readable }>, pauseMs: number) {
    const lines: string[] = [];
    for await (const input of inputs) {
      const reader = createInterface({ input: input.body, crlfDelay: Number.POSITIVE_INFINITY });
      for await (const line of reader) {
        lines.push(line);
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    }
    return lines;
  }

  it('a body cut off while it waits its turn is read again at its turn: a line reader would wait forever on it', async () => {
    const cutKey = 'in/dt=2026-12-05/2.json';
    const { reader, gets } = cuttingReader(cutKey, 1);
    const reads = readWindowInputs(task as never, '2026-12-05', lineage, reader, undefined, 4);
    // The build takes its time over the first inputs; the cut happens meanwhile, before it reaches 2.json.
    const lines = await readLines(reads.inputs, 10);
    expect(lines).toEqual(lineage.flatMap((e) => [`in/${e.path} line 1`, `in/${e.path} line 2`]));
    expect(gets.filter((k) => k === cutKey)).toHaveLength(2);
    expect(gets).toHaveLength(lineage.length + 1);
    expect(reads.bodyError()).toBeUndefined();
  });

  it("a body cut off while the build reads it is the round's body error, and the build fails", async () => {
    // One read at a time: 2.json is cut 5 ms after its answer, while the build (10 ms a line) reads it.
    const cutKey = 'in/dt=2026-12-05/2.json';
    const { reader, gets } = cuttingReader(cutKey, 5);
    const reads = readWindowInputs(task as never, '2026-12-05', lineage, reader, undefined, 1);
    await expect(readLines(reads.inputs, 10)).rejects.toThrow('aborted');
    expect(gets.at(-1)).toBe(cutKey);
    expect(reads.bodyError()).toMatchObject({ message: 'aborted' });
  });

  it('a body cut after the hand-over, while the build awaits something before reading it, fails that read', async () => {
    // One read at a time: 2.json is cut 5 ms after its answer; the build waits 20 ms before it reads each input.
    const cutKey = 'in/dt=2026-12-05/2.json';
    const { reader } = cuttingReader(cutKey, 5);
    const reads = readWindowInputs(task as never, '2026-12-05', lineage, reader, undefined, 1);
    const lines: string[] = [];
    await expect(
      (async () => {
        for await (const input of reads.inputs) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          for await (const line of createInterface({ input: input.body, crlfDelay: Number.POSITIVE_INFINITY })) {
            lines.push(line);
          }
        }
      })(),
    ).rejects.toThrow('aborted');
    expect(lines).toHaveLength(4);
    expect(reads.bodyError()).toMatchObject({ message: 'aborted' });
  });

  it('an input changed since the listing ends the round at its turn, and the reads ahead of it are destroyed', async () => {
    const { reader, bodies } = slowReader('in/dt=2026-12-05/2.json');
    const reads = readWindowInputs(task as never, '2026-12-05', lineage, reader, undefined, 5);
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const input of reads.inputs) {
          seen.push(input.path);
          input.body.resume();
        }
      })(),
    ).rejects.toThrow('the input in/dt=2026-12-05/2.json changed since it was listed');
    expect(seen).toEqual(['dt=2026-12-05/0.json', 'dt=2026-12-05/1.json']);
    expect(reads.changed()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(bodies.every((b) => b.destroyed)).toBe(true);
  });
});
