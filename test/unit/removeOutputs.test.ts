import { describe, expect, it } from 'vitest';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import type { Logger } from '../../src/logging/logger.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { WorkerDefinition } from '../../src/worker/defineWorker.js';
import type { ObjectOutcome } from '../../src/worker/ObjectOutcome.js';
import { processObject } from '../../src/worker/processObject.js';
import { removeOutputs } from '../../src/worker/removeOutputs.js';
import { MemoryS3 } from '../support/memoryS3.js';
import { quarantiningWorker } from '../support/quarantiningWorker.js';

/*
 * removeOutputs (src/worker/removeOutputs.ts: the ObjectRemoved path) against the simulation tier's
 * in-memory S3: what it asks S3, what it removes, keeps and rebuilds, and what it reports. The same
 * paths against moto are in test/integration/removeOutputs.test.ts; these run once per mutant under
 * Stryker (vitest.mutation.config.ts).
 */

const IN = 'in';
const OUT = 'out';
const outKey = (key: string) => `out/${IN}/${key}.txt`;
const quarantineKey = (key: string) => `quarantine/${IN}/${key}.txt`;

/** A logger that keeps each entry with its fields. */
function recordingLogger(): Logger & { readonly entries: { message: string; fields: Record<string, unknown> }[] } {
  const entries: { message: string; fields: Record<string, unknown> }[] = [];
  const keep = (message: string, ...fields: Record<string, unknown>[]) => {
    entries.push({ message, fields: Object.assign({}, ...fields) });
  };
  return { entries, debug: keep, info: keep, warn: keep, error: keep };
}

function setup(overrides: Partial<WorkerDefinition> = {}) {
  const s3 = new MemoryS3([IN, OUT]);
  const store = new S3ObjectStore(s3.client);
  const worker = quarantiningWorker(OUT, overrides);
  const logger = recordingLogger();
  const created = (key: string) => ({ bucket: IN, key, eventName: 'ObjectCreated:Put' });
  /** What the batch handler passes: an input that is back gets the done-check (processObject). */
  const rebuilds: string[] = [];
  const rebuild = (object: { bucket: string; key: string; eventName: string }): Promise<ObjectOutcome> => {
    rebuilds.push(`${object.bucket}/${object.key} ${object.eventName}`);
    return processObject(worker, object, { store });
  };
  const build = (key: string) => processObject(worker, created(key), { store });
  const remove = (key: string, withRebuild = true) =>
    removeOutputs(
      worker,
      { bucket: IN, key, eventName: 'ObjectRemoved:Delete' },
      { store, logger, ...(withRebuild ? { rebuild } : {}) },
    );
  const calls = () => s3.requests.map((r) => `${r.name} ${r.input.Bucket}/${r.input.Key}`);
  return { s3, store, worker, logger, rebuilds, build, remove, calls };
}

describe('removeOutputs: an input deleted', () => {
  it('removes its main and side outputs, each with If-Match on the ETag its HEAD saw, then HEADs the input again', async () => {
    const { s3, build, remove, calls, logger } = setup();
    s3.write(IN, 'a.txt', 'x\n!bad\n');
    await build('a.txt');
    const mainEtag = s3.etag(OUT, outKey('a.txt'));
    const sideEtag = s3.etag(OUT, quarantineKey('a.txt'));
    s3.remove(IN, 'a.txt');
    s3.clear();
    const outcome = await remove('a.txt');
    expect(outcome).toEqual({
      status: 'processed',
      reason: 'input deleted: removed main, quarantine',
      outputKey: outKey('a.txt'),
    });
    expect(calls()).toEqual([
      `HeadObject ${OUT}/${outKey('a.txt')}`,
      `HeadObject ${OUT}/${quarantineKey('a.txt')}`,
      `HeadObject ${IN}/a.txt`,
      `DeleteObject ${OUT}/${outKey('a.txt')}`,
      `DeleteObject ${OUT}/${quarantineKey('a.txt')}`,
      `HeadObject ${IN}/a.txt`,
    ]);
    const deletes = s3.requests.filter((r) => r.name === 'DeleteObject').map((r) => r.input.IfMatch);
    expect(deletes).toEqual([`"${mainEtag}"`, `"${sideEtag}"`]);
    expect(s3.keys(OUT)).toEqual([]);
    expect(logger.entries).toEqual([]);
  });

  it('with no output in place, removes nothing and says so, sending no delete', async () => {
    const { s3, remove, rebuilds } = setup();
    const outcome = await remove('a.txt');
    expect(outcome).toEqual({
      status: 'skipped',
      reason: 'input deleted: no output to remove',
      outputKey: outKey('a.txt'),
    });
    expect(s3.names()).toEqual(['HeadObject', 'HeadObject', 'HeadObject']);
    expect(rebuilds).toEqual([]);
  });

  it('keeps an object at an output key that does not name this input, and says why', async () => {
    const { s3, remove, logger } = setup();
    s3.write(OUT, outKey('a.txt'), 'foreign');
    const outcome = await remove('a.txt');
    expect(outcome).toEqual({
      status: 'skipped',
      reason: 'input deleted: nothing removed; kept main: object does not name this input (no rerun metadata)',
      outputKey: outKey('a.txt'),
      kept: 1,
    });
    expect(s3.names()).not.toContain('DeleteObject');
    expect(s3.text(OUT, outKey('a.txt'))).toBe('foreign');
    expect(logger.entries).toEqual([
      {
        message: 'object at an output key was kept',
        fields: expect.objectContaining({
          worker: 'upper',
          bucket: IN,
          key: 'a.txt',
          outputKey: outKey('a.txt'),
          reason: 'object does not name this input (no rerun metadata)',
        }),
      },
    ]);
  });

  it('removes what names this input and keeps the rest, counting what it kept', async () => {
    const { s3, build, remove } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await build('a.txt');
    s3.write(OUT, quarantineKey('a.txt'), 'foreign');
    s3.remove(IN, 'a.txt');
    const outcome = await remove('a.txt');
    expect(outcome).toEqual({
      status: 'processed',
      reason: 'input deleted: removed main; kept quarantine: object does not name this input (no rerun metadata)',
      outputKey: outKey('a.txt'),
      kept: 1,
    });
    expect(s3.keys(OUT)).toEqual([quarantineKey('a.txt')]);
  });

  it('an output replaced by a rebuild between the HEADs and the delete is kept (412), and logged', async () => {
    const { s3, build, remove, logger } = setup();
    s3.write(IN, 'a.txt', 'old\n!old-bad\n');
    await build('a.txt');
    s3.remove(IN, 'a.txt');
    s3.clear();
    // Right after the remover's input HEAD (404), other writers replace both outputs.
    let replaced = false;
    s3.before = (request) => {
      if (!replaced && request.name === 'DeleteObject') {
        replaced = true;
        s3.write(OUT, outKey('a.txt'), 'NEW\n');
        s3.write(OUT, quarantineKey('a.txt'), '!new-bad\n');
      }
    };
    const outcome = await remove('a.txt');
    expect(outcome).toEqual({
      status: 'skipped',
      reason: 'input deleted: nothing removed; kept main, quarantine (replaced meanwhile by a rebuild)',
      outputKey: outKey('a.txt'),
      kept: 2,
    });
    expect(s3.text(OUT, outKey('a.txt'))).toBe('NEW\n');
    expect(s3.text(OUT, quarantineKey('a.txt'))).toBe('!new-bad\n');
    // Nothing removed: no second HEAD of the input.
    expect(s3.names().filter((n) => n === 'HeadObject')).toHaveLength(3);
    expect(logger.entries.map((e) => [e.message, e.fields.outputKey])).toEqual([
      ['output changed since it was seen (a re-upload is being built): kept', outKey('a.txt')],
      ['output changed since it was seen (a re-upload is being built): kept', quarantineKey('a.txt')],
    ]);
  });

  it('outputs removed meanwhile by another removal are already gone, not kept', async () => {
    const { s3, build, remove } = setup();
    s3.write(IN, 'a.txt', 'old\n!old-bad\n');
    await build('a.txt');
    s3.remove(IN, 'a.txt');
    s3.before = (request) => {
      if (request.name === 'DeleteObject') s3.remove(OUT, String(request.input.Key));
    };
    const outcome = await remove('a.txt');
    expect(outcome).toEqual({
      status: 'skipped',
      reason: 'input deleted: nothing removed; already gone: main, quarantine (removed meanwhile by another removal)',
      outputKey: outKey('a.txt'),
    });
  });

  it('one output removed, another gone and a third replaced: each is reported in its place', async () => {
    const { s3, build, remove } = setup({
      sideOutputs: {
        quarantine: (s) => deterministicKey({ prefix: 'quarantine/', source: s, suffix: '.txt' }),
        stats: (s) => deterministicKey({ prefix: 'stats/', source: s, suffix: '.txt' }),
      },
      async transform({ body }, { output, side }) {
        for await (const chunk of body) {
          await output.write(String(chunk));
          await side('quarantine').write('q\n');
          await side('stats').write('s\n');
        }
        return {};
      },
    });
    s3.write(IN, 'a.txt', 'x\n');
    await build('a.txt');
    s3.remove(IN, 'a.txt');
    s3.before = (request) => {
      if (request.name !== 'DeleteObject') return;
      if (request.input.Key === quarantineKey('a.txt')) s3.remove(OUT, quarantineKey('a.txt'));
      if (request.input.Key === `stats/${IN}/a.txt.txt`) s3.write(OUT, `stats/${IN}/a.txt.txt`, 'rebuilt\n');
    };
    const outcome = await remove('a.txt');
    expect(outcome).toEqual({
      status: 'processed',
      reason:
        'input deleted: removed main; already gone: quarantine (removed meanwhile by another removal); ' +
        'kept stats (replaced meanwhile by a rebuild)',
      outputKey: outKey('a.txt'),
      kept: 1,
    });
    expect(s3.keys(OUT)).toEqual([`stats/${IN}/a.txt.txt`]);
  });
});

describe('removeOutputs: an input that exists again', () => {
  it('re-uploaded after its delete event was sent: nothing deleted, and the output brought up to date', async () => {
    const { s3, build, remove, rebuilds } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await build('a.txt');
    s3.write(IN, 'a.txt', 'y\n');
    s3.clear();
    const outcome = await remove('a.txt');
    expect(outcome.status).toBe('processed');
    expect(outcome.reason).toMatch(
      /^input exists again \(re-uploaded after the delete\): outputs kept: output replaced \(stale/,
    );
    expect(rebuilds).toEqual([`${IN}/a.txt ObjectCreated:Put`]);
    expect(s3.names()).not.toContain('DeleteObject');
    expect(s3.text(OUT, outKey('a.txt'))).toBe('Y\n');
  });

  it('with no output and the input back, the output is rebuilt (a removal that died before step 4)', async () => {
    const { s3, remove } = setup();
    s3.write(IN, 'a.txt', 'x\n!bad\n');
    const outcome = await remove('a.txt');
    expect(outcome).toMatchObject({
      status: 'processed',
      reason: 'input exists again (re-uploaded after the delete): outputs kept: output created',
    });
    expect(s3.text(OUT, outKey('a.txt'))).toBe('X\n');
    expect(s3.text(OUT, quarantineKey('a.txt'))).toBe('!bad\n');
  });

  it('without a rebuild option, an input that exists again keeps its outputs and is left to its own event', async () => {
    const { s3, build, remove } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await build('a.txt');
    s3.write(IN, 'a.txt', 'y\n');
    s3.clear();
    const outcome = await remove('a.txt', false);
    expect(outcome).toEqual({
      status: 'skipped',
      reason: 'input exists again (re-uploaded after the delete): outputs kept: outputs kept',
    });
    expect(s3.names()).toEqual(['HeadObject', 'HeadObject', 'HeadObject']);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('X\n');
  });

  it('seen back after its outputs were removed, the input is rebuilt at once, and the removal says so', async () => {
    const { s3, build, remove, rebuilds, logger } = setup();
    s3.write(IN, 'a.txt', 'same\n!bad\n');
    await build('a.txt');
    s3.remove(IN, 'a.txt');
    let uploaded = false;
    s3.before = (request) => {
      // Just after the last delete, the same bytes are uploaded again.
      if (!uploaded && request.name === 'HeadObject' && s3.names().includes('DeleteObject')) {
        uploaded = true;
        s3.write(IN, 'a.txt', 'same\n!bad\n');
      }
    };
    const outcome = await remove('a.txt');
    expect(outcome).toMatchObject({
      status: 'processed',
      reason: 'input re-uploaded while its outputs were removed (main, quarantine): output created',
    });
    expect(rebuilds).toHaveLength(1);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('SAME\n');
    expect(s3.text(OUT, quarantineKey('a.txt'))).toBe('!bad\n');
    expect(logger.entries).toContainEqual({
      message: 'input re-uploaded while its outputs were removed: rebuilding them',
      fields: expect.objectContaining({ outputKey: outKey('a.txt'), key: 'a.txt' }),
    });
  });
});

describe('removeOutputs: deletes it does not act on', () => {
  it('skips a key outside the inputs, a folder marker and what the worker skips, with no request', async () => {
    const { s3, remove } = setup({
      inputPrefixes: ['in/', 'skip/'],
      skipReason: (o) =>
        o.key.startsWith('skip/') && o.eventName === 'ObjectRemoved:Delete' ? 'skipped by worker' : undefined,
    });
    expect(await remove('other/a.txt')).toEqual({
      status: 'skipped',
      reason: `s3://${IN}/other/a.txt is outside the prefixes this pipeline reads (in/, skip/): refused, not read`,
    });
    expect(await remove('in/folder/')).toEqual({ status: 'skipped', reason: 'folder marker (key ends with "/")' });
    expect(await remove('skip/a.txt')).toEqual({ status: 'skipped', reason: 'skipped by worker' });
    expect(s3.requests).toEqual([]);
  });

  it('with no side outputs declared, HEADs and removes the main output alone', async () => {
    const { s3, build, remove } = setup({ sideOutputs: undefined });
    s3.write(IN, 'a.txt', 'x\n');
    await build('a.txt');
    s3.remove(IN, 'a.txt');
    s3.clear();
    expect(await remove('a.txt')).toEqual({
      status: 'processed',
      reason: 'input deleted: removed main',
      outputKey: outKey('a.txt'),
    });
    expect(s3.names()).toEqual(['HeadObject', 'HeadObject', 'DeleteObject', 'HeadObject']);
  });
});
