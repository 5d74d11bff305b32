import { describe, expect, it } from 'vitest';
import { PublishConflictError } from '../../src/errors.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import type { Logger } from '../../src/logging/logger.js';
import { OutputWriter } from '../../src/publish/OutputWriter.js';
import { S3ObjectStore, type WriteResult, WriteStatus } from '../../src/s3/S3ObjectStore.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';
import {
  checkListedSideOutputs,
  removeStaleSideOutputs,
  SideOutputWriters,
  sweepSideOutputs,
} from '../../src/worker/sideOutputs.js';
import { MemoryS3 } from '../support/memoryS3.js';

/*
 * The side-output protocol's steps (src/worker/sideOutputs.ts), each called on its own against the
 * simulation tier's in-memory S3: what each writes, accepts, removes and keeps, and the requests it
 * sends. processObject's rounds run them together in test/unit/processObjectRounds.test.ts; both run
 * once per mutant under Stryker (vitest.mutation.config.ts).
 */

const IN = 'in';
const OUT = 'out';
const KEY = 'a.txt';
const quarantineKey = `quarantine/${IN}/${KEY}.txt`;
const statsKey = `stats/${IN}/${KEY}.txt`;
const object = { bucket: IN, key: KEY, eventName: 'ObjectCreated:Put' };
const quarantineKeyOf = (s: { bucket: string; key: string }) =>
  deterministicKey({ prefix: 'quarantine/', source: s, suffix: '.txt' });

function sideWorker(overrides: Partial<WorkerDefinition> = {}): WorkerDefinition {
  return defineWorker({
    name: 'upper',
    codeVersion: 'upper@1',
    outputBucket: OUT,
    outputKey: (s) => deterministicKey({ prefix: 'out/', source: s, suffix: '.txt' }),
    sideOutputs: {
      quarantine: quarantineKeyOf,
      stats: (s) => deterministicKey({ prefix: 'stats/', source: s, suffix: '.txt' }),
    },
    async transform() {
      return {};
    },
    ...overrides,
  });
}

/** A logger that keeps each entry with its fields. */
function recordingLogger(): Logger & { readonly entries: { message: string; fields: Record<string, unknown> }[] } {
  const entries: { message: string; fields: Record<string, unknown> }[] = [];
  const keep = (message: string, ...fields: Record<string, unknown>[]) => {
    entries.push({ message, fields: Object.assign({}, ...fields) });
  };
  return { entries, debug: keep, info: keep, warn: keep, error: keep };
}

/** One side output: the sweep's tests look at one key. */
const quarantineOnly: Partial<WorkerDefinition> = { sideOutputs: { quarantine: quarantineKeyOf } };

function setup(overrides: Partial<WorkerDefinition> = {}, store?: (s3: MemoryS3) => S3ObjectStore) {
  const s3 = new MemoryS3([IN, OUT], { minPartBytes: 16 });
  const objectStore = store ? store(s3) : new S3ObjectStore(s3.client, { minPartBytes: 16 });
  const worker = sideWorker(overrides);
  const source = (etag: string) => ({ bucket: IN, key: KEY, etag });
  const writerFor = (etag: string, partBytes?: number) => (key: string) =>
    new OutputWriter({
      store: objectStore,
      bucket: OUT,
      key,
      source: source(etag),
      codeVersion: worker.codeVersion,
      ...(partBytes ? { partBytes } : {}),
    });
  /** Writes, as a worker of this code would, a side object built from the input content `etag`; returns its ETag. */
  const built = async (key: string, etag: string, body: string): Promise<string> => {
    s3.remove(OUT, key);
    const writer = writerFor(etag)(key);
    await writer.write(body);
    const result = await writer.publish({ ifNoneMatch: '*' });
    return result.status === WriteStatus.WRITTEN ? result.etag : '';
  };
  const puts = () => s3.requests.filter((r) => r.name === 'PutObject').map((r) => r.input);
  return { s3, store: objectStore, worker, source, writerFor, built, puts };
}

describe('SideOutputWriters: side(name)', () => {
  it('gives one stream per declared name, and refuses a name the worker does not declare', () => {
    const { worker, writerFor } = setup();
    const made: string[] = [];
    const sides = new SideOutputWriters(worker, object, (key) => {
      made.push(key);
      return writerFor('e1')(key);
    });
    expect(sides.side('quarantine')).toBe(sides.side('quarantine'));
    expect(made).toEqual([quarantineKey]);
    expect(() => sides.side('nope')).toThrow('worker upper has no side output "nope" (declare it in sideOutputs)');
  });

  it('a worker that declares no side output refuses every name with the same error', () => {
    const { writerFor } = setup();
    const sides = new SideOutputWriters(sideWorker({ sideOutputs: undefined }), object, writerFor('e1'));
    expect(() => sides.side('quarantine')).toThrow(
      'worker upper has no side output "quarantine" (declare it in sideOutputs)',
    );
  });

  it('abortAll aborts the multipart upload of each side output', async () => {
    const { s3, worker, writerFor } = setup();
    const sides = new SideOutputWriters(worker, object, writerFor('e1', 16));
    await sides.side('quarantine').write('x'.repeat(40));
    await sides.side('stats').write('y'.repeat(40));
    expect(
      s3.model
        .openUploads()
        .map((u) => u.key)
        .sort(),
    ).toEqual([quarantineKey, statsKey]);
    await sides.abortAll();
    expect(s3.model.openUploads()).toEqual([]);
  });
});

describe('SideOutputWriters: publishAll', () => {
  it('publishes each side output with content (If-None-Match), skips one asked for but left empty', async () => {
    const { s3, worker, writerFor, store, puts } = setup();
    const sides = new SideOutputWriters(worker, object, writerFor('e1'));
    await sides.side('quarantine').write('!bad\n');
    sides.side('stats');
    const published = await sides.publishAll(store, { bucket: IN, key: KEY, etag: 'e1' });
    const etag = s3.etag(OUT, quarantineKey);
    expect(published).toEqual({ listed: { quarantine: etag }, created: { quarantine: etag }, lost: false });
    expect(puts().map((p) => [p.Key, p.IfNoneMatch])).toEqual([[quarantineKey, '*']]);
    expect(s3.keys(OUT)).toEqual([quarantineKey]);
  });

  it('accepts a side object built from the same input content by the same code, without writing it', async () => {
    const { s3, worker, writerFor, store, built, puts } = setup();
    const theirs = await built(quarantineKey, 'e1', '!bad\n');
    s3.clear();
    const sides = new SideOutputWriters(worker, object, writerFor('e1'));
    await sides.side('quarantine').write('!bad\n');
    const published = await sides.publishAll(store, { bucket: IN, key: KEY, etag: 'e1' });
    expect(published).toEqual({ listed: { quarantine: theirs }, created: {}, lost: false });
    expect(puts()).toHaveLength(1);
    expect(s3.names()).toEqual(['PutObject', 'HeadObject']);
  });

  it('replaces, with If-Match on the ETag it saw, a side object of other content or none of ours', async () => {
    for (const existing of ['other content', 'foreign'] as const) {
      const { s3, worker, writerFor, store, built, puts } = setup();
      const theirs =
        existing === 'foreign' ? s3.write(OUT, quarantineKey, 'foreign') : await built(quarantineKey, 'e0', '!old\n');
      s3.clear();
      const sides = new SideOutputWriters(worker, object, writerFor('e1'));
      await sides.side('quarantine').write('!new\n');
      const published = await sides.publishAll(store, { bucket: IN, key: KEY, etag: 'e1' });
      const etag = s3.etag(OUT, quarantineKey);
      expect(published).toEqual({ listed: { quarantine: etag }, created: { quarantine: etag }, lost: false });
      expect(puts().map((p) => [p.IfNoneMatch, p.IfMatch])).toEqual([
        ['*', undefined],
        [undefined, `"${theirs}"`],
      ]);
      expect(s3.text(OUT, quarantineKey)).toBe('!new\n');
    }
  });

  it('a side object removed between the 412 and the HEAD is created again with If-None-Match', async () => {
    const { s3, worker, writerFor, store, built, puts } = setup();
    await built(quarantineKey, 'e0', '!old\n');
    s3.clear();
    s3.before = (request) => {
      if (request.name === 'HeadObject') s3.remove(OUT, quarantineKey);
    };
    const sides = new SideOutputWriters(worker, object, writerFor('e1'));
    await sides.side('quarantine').write('!new\n');
    const published = await sides.publishAll(store, { bucket: IN, key: KEY, etag: 'e1' });
    expect(published.created).toEqual({ quarantine: s3.etag(OUT, quarantineKey) });
    expect(puts().map((p) => [p.IfNoneMatch, p.IfMatch])).toEqual([
      ['*', undefined],
      ['*', undefined],
    ]);
  });

  it('a side object that keeps changing under other writers fails after three writes, to be retried', async () => {
    const { s3, worker, writerFor, store, puts } = setup();
    let other = 0;
    s3.before = (request) => {
      if (request.name === 'PutObject') s3.write(OUT, quarantineKey, `other writer ${++other}`);
    };
    const sides = new SideOutputWriters(worker, object, writerFor('e1'));
    await sides.side('quarantine').write('!new\n');
    await expect(sides.publishAll(store, { bucket: IN, key: KEY, etag: 'e1' })).rejects.toThrow(
      new PublishConflictError(
        `Side output s3://${OUT}/${quarantineKey} kept changing under concurrent writers; the message will be retried.`,
      ),
    );
    expect(puts()).toHaveLength(3);
  });

  it('a write that ends in a 409 conflict (its retries spent) fails at once, to be retried', async () => {
    class ConflictingStore extends S3ObjectStore {
      override async put(): Promise<WriteResult> {
        return { status: WriteStatus.CONFLICT };
      }
    }
    const { s3, worker, writerFor, store } = setup({}, (s) => new ConflictingStore(s.client, { minPartBytes: 16 }));
    const sides = new SideOutputWriters(worker, object, writerFor('e1'));
    await sides.side('quarantine').write('!new\n');
    await expect(sides.publishAll(store, { bucket: IN, key: KEY, etag: 'e1' })).rejects.toThrow(PublishConflictError);
    // No HEAD to look at the object: a 409 is no 412.
    expect(s3.requests).toEqual([]);
  });
});

describe('checkListedSideOutputs', () => {
  it('names the first listed side object that is missing or has another ETag', async () => {
    const { s3, worker, store } = setup();
    const q = s3.write(OUT, quarantineKey, 'q');
    const s = s3.write(OUT, statsKey, 's');
    const check = (listed: [string, string][]) => checkListedSideOutputs(worker, store, object, new Map(listed));
    expect(
      await check([
        ['quarantine', q],
        ['stats', s],
      ]),
    ).toBeUndefined();
    expect(
      await check([
        ['quarantine', q],
        ['stats', 'other'],
      ]),
    ).toBe(`stats has ETag ${s}, the output lists other`);
    s3.remove(OUT, quarantineKey);
    expect(
      await check([
        ['quarantine', q],
        ['stats', s],
      ]),
    ).toBe('quarantine is missing');
  });

  it('skips a side output listed by name only (no ETag) and one the worker does not declare', async () => {
    const { worker, store, s3 } = setup();
    expect(await checkListedSideOutputs(worker, store, object, new Map([['quarantine', '']]))).toBeUndefined();
    expect(await checkListedSideOutputs(worker, store, object, new Map([['gone', 'e']]))).toBeUndefined();
    const bare = sideWorker({ sideOutputs: undefined });
    expect(await checkListedSideOutputs(bare, store, object, new Map([['quarantine', 'e']]))).toBeUndefined();
    expect(s3.requests).toEqual([]);
  });
});

describe('removeStaleSideOutputs', () => {
  it('removes, on the ETag the replaced output listed, each listed side object this round did not write', async () => {
    const { s3, worker, store } = setup();
    const q = s3.write(OUT, quarantineKey, 'q');
    const s = s3.write(OUT, statsKey, 's');
    const logger = recordingLogger();
    const removed = await removeStaleSideOutputs(
      worker,
      store,
      object,
      ['stats'],
      new Map([
        ['quarantine', q],
        ['stats', s],
      ]),
      logger,
    );
    expect(removed).toBe(1);
    expect(s3.keys(OUT)).toEqual([statsKey]);
    expect(s3.requests.map((r) => [r.name, r.input.Key, r.input.IfMatch])).toEqual([
      ['DeleteObject', quarantineKey, `"${q}"`],
    ]);
    expect(logger.entries).toEqual([
      { message: 'removed side output of older content', fields: { sideOutput: 'quarantine', key: quarantineKey } },
    ]);
  });

  it('keeps what the replaced output did not list, and one changed since it was listed (412)', async () => {
    const { s3, worker, store } = setup();
    s3.write(OUT, quarantineKey, 'q');
    s3.write(OUT, statsKey, 's');
    const removed = await removeStaleSideOutputs(
      worker,
      store,
      object,
      [],
      new Map([['stats', 'old']]),
      recordingLogger(),
    );
    expect(removed).toBe(0);
    expect(s3.keys(OUT)).toEqual([quarantineKey, statsKey]);
    expect(s3.names()).toEqual(['DeleteObject']);
  });

  it('when the replaced output listed none, removes what a HEAD sees, on its ETag', async () => {
    const { s3, worker, store } = setup();
    const q = s3.write(OUT, quarantineKey, 'q');
    const removed = await removeStaleSideOutputs(worker, store, object, [], undefined, recordingLogger());
    expect(removed).toBe(1);
    expect(s3.keys(OUT)).toEqual([]);
    // stats: nothing there, nothing deleted.
    expect(s3.requests.map((r) => [r.name, r.input.Key, r.input.IfMatch])).toEqual([
      ['HeadObject', quarantineKey, undefined],
      ['DeleteObject', quarantineKey, `"${q}"`],
      ['HeadObject', statsKey, undefined],
    ]);
  });
});

describe('sweepSideOutputs', () => {
  const sweep = (
    ctx: ReturnType<typeof setup>,
    final: { sourceEtag?: string; sideOutputs?: Map<string, string> },
    options: { orphans?: [string, string][]; debris?: boolean; inputGone?: boolean } = {},
    logger: Logger = recordingLogger(),
  ) =>
    sweepSideOutputs(
      ctx.worker,
      ctx.store,
      object,
      { final, ...(options.inputGone !== undefined ? { inputGone: options.inputGone } : {}) },
      { orphans: new Map(options.orphans ?? []), debris: options.debris ?? false, logger },
    );

  it('removes an orphan this call created that the final output does not list, and logs it', async () => {
    const ctx = setup(quarantineOnly);
    const mine = await ctx.built(quarantineKey, 'e1', '!bad\n');
    ctx.s3.clear();
    const logger = recordingLogger();
    expect(
      await sweep(ctx, { sourceEtag: 'e2', sideOutputs: new Map() }, { orphans: [['quarantine', mine]] }, logger),
    ).toBe(1);
    expect(ctx.s3.keys(OUT)).toEqual([]);
    expect(ctx.s3.requests.map((r) => [r.name, r.input.IfMatch])).toEqual([
      ['HeadObject', undefined],
      ['DeleteObject', `"${mine}"`],
    ]);
    expect(logger.entries).toEqual([
      {
        message: 'removed a side object the output does not list',
        fields: { sideOutput: 'quarantine', key: quarantineKey, mine: true },
      },
    ]);
  });

  it('keeps an orphan the final output lists, and sends no request for it', async () => {
    const ctx = setup(quarantineOnly);
    const mine = await ctx.built(quarantineKey, 'e1', '!bad\n');
    ctx.s3.clear();
    const final = { sourceEtag: 'e1', sideOutputs: new Map([['quarantine', mine]]) };
    expect(await sweep(ctx, final, { orphans: [['quarantine', mine]], debris: true })).toBe(0);
    expect(ctx.s3.requests).toEqual([]);
  });

  it('removes nothing when the final output does not say what it lists (an earlier release wrote it)', async () => {
    const ctx = setup(quarantineOnly);
    const mine = await ctx.built(quarantineKey, 'e0', '!bad\n');
    ctx.s3.clear();
    expect(await sweep(ctx, { sourceEtag: 'e1' }, { orphans: [['quarantine', mine]], debris: true })).toBe(0);
    expect(ctx.s3.keys(OUT)).toEqual([quarantineKey]);
    expect(ctx.s3.requests).toEqual([]);
  });

  it('with no orphan and no debris look, sends no request', async () => {
    const ctx = setup(quarantineOnly);
    await ctx.built(quarantineKey, 'e0', '!bad\n');
    ctx.s3.clear();
    expect(await sweep(ctx, { sourceEtag: 'e1', sideOutputs: new Map() })).toBe(0);
    expect(ctx.s3.requests).toEqual([]);
  });

  it("keeps an orphan's key that another writer has replaced since, even when built from other content", async () => {
    const ctx = setup(quarantineOnly);
    const mine = await ctx.built(quarantineKey, 'e1', '!bad\n');
    await ctx.built(quarantineKey, 'e0', '!other\n');
    ctx.s3.clear();
    expect(await sweep(ctx, { sourceEtag: 'e1', sideOutputs: new Map() }, { orphans: [['quarantine', mine]] })).toBe(0);
    expect(ctx.s3.text(OUT, quarantineKey)).toBe('!other\n');
    expect(ctx.s3.names()).toEqual(['HeadObject']);
  });

  it('an orphan already gone: nothing to remove', async () => {
    const ctx = setup(quarantineOnly);
    const mine = await ctx.built(quarantineKey, 'e1', '!bad\n');
    ctx.s3.remove(OUT, quarantineKey);
    ctx.s3.clear();
    expect(await sweep(ctx, { sourceEtag: 'e1', sideOutputs: new Map() }, { orphans: [['quarantine', mine]] })).toBe(0);
    expect(ctx.s3.names()).toEqual(['HeadObject']);
  });

  it('debris: removes a side object built from other content than the final output, or none of ours', async () => {
    for (const kind of ['other content', 'foreign'] as const) {
      const ctx = setup(quarantineOnly);
      if (kind === 'foreign') ctx.s3.write(OUT, quarantineKey, 'foreign');
      else await ctx.built(quarantineKey, 'e0', '!old\n');
      expect(await sweep(ctx, { sourceEtag: 'e1', sideOutputs: new Map() }, { debris: true })).toBe(1);
      expect(ctx.s3.keys(OUT)).toEqual([]);
    }
  });

  it('debris look: keeps a side object built from the final output content, unlisted (a writer between its side and main output)', async () => {
    const ctx = setup(quarantineOnly);
    await ctx.built(quarantineKey, 'e1', '!bad\n');
    expect(await sweep(ctx, { sourceEtag: 'e1', sideOutputs: new Map() }, { debris: true })).toBe(0);
    expect(ctx.s3.keys(OUT)).toEqual([quarantineKey]);
  });

  it('debris look: keeps a side object the final output lists, even with another ETag (the done-check answers for that)', async () => {
    const ctx = setup(quarantineOnly);
    const listed = await ctx.built(quarantineKey, 'e1', '!bad\n');
    await ctx.built(quarantineKey, 'e0', '!old\n');
    const final = { sourceEtag: 'e1', sideOutputs: new Map([['quarantine', listed]]) };
    expect(await sweep(ctx, final, { debris: true })).toBe(0);
    expect(ctx.s3.text(OUT, quarantineKey)).toBe('!old\n');
  });

  it('debris look with no final output: removes one of none of ours, keeps one built from this input while it exists', async () => {
    const ctx = setup(quarantineOnly);
    await ctx.built(quarantineKey, 'e0', '!old\n');
    expect(await sweep(ctx, { sideOutputs: new Map() }, { debris: true, inputGone: false })).toBe(0);
    expect(ctx.s3.keys(OUT)).toEqual([quarantineKey]);
    ctx.s3.write(OUT, quarantineKey, 'foreign');
    expect(await sweep(ctx, { sideOutputs: new Map() }, { debris: true })).toBe(1);
    expect(ctx.s3.keys(OUT)).toEqual([]);
  });

  it('the input gone: removes a side object built from this input, whatever its content', async () => {
    const ctx = setup(quarantineOnly);
    await ctx.built(quarantineKey, 'e0', '!old\n');
    expect(await sweep(ctx, { sideOutputs: new Map() }, { debris: true, inputGone: true })).toBe(1);
    expect(ctx.s3.keys(OUT)).toEqual([]);
  });

  it('the input gone but no debris look (a fresh delivery): an orphan replaced by another writer is kept', async () => {
    const ctx = setup(quarantineOnly);
    const mine = await ctx.built(quarantineKey, 'e1', '!bad\n');
    await ctx.built(quarantineKey, 'e0', '!other\n');
    expect(await sweep(ctx, { sideOutputs: new Map() }, { orphans: [['quarantine', mine]], inputGone: true })).toBe(0);
    expect(ctx.s3.text(OUT, quarantineKey)).toBe('!other\n');
  });
});
