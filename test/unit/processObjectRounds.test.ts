import { describe, expect, it } from 'vitest';
import { MetadataKey } from '../../src/done/outputMetadata.js';
import { InputTooLargeError, PublishConflictError, WorkerConfigurationError } from '../../src/errors.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import type { Logger } from '../../src/logging/logger.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { AdaptiveFirstRun } from '../../src/worker/adaptiveFirstRun.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';
import { CREATE_FIRST_MAX_BYTES, processObject } from '../../src/worker/processObject.js';
import type { ProcessObjectOptions } from '../../src/worker/processObjectOptions.js';
import { SimServiceError } from '../sim/model/serviceError.js';
import { MemoryS3 } from '../support/memoryS3.js';

/*
 * processObject's rounds (src/worker/processObject.ts and its phases: doneCheck, publishRound,
 * transformAndPublish, tidyAfterPublish) against the in-memory S3 of the simulation tier: what each
 * round asks S3, what it writes and what it reports. The same behaviours against moto are in
 * test/integration/processObject.test.ts; these run in process, once per mutant under Stryker.
 */

const IN = 'in';
const OUT = 'out';
const outKey = (key: string) => `out/${IN}/${key}.txt`;
const quarantineKey = (key: string) => `quarantine/${IN}/${key}.txt`;

/** Upper-cases each line; lines starting with "!" go to the quarantine side output. */
function upperWorker(overrides: Partial<WorkerDefinition> = {}): WorkerDefinition {
  return defineWorker({
    name: 'upper',
    codeVersion: 'upper@1',
    outputBucket: OUT,
    outputKey: (s) => deterministicKey({ prefix: 'out/', source: s, suffix: '.txt' }),
    sideOutputs: { quarantine: (s) => deterministicKey({ prefix: 'quarantine/', source: s, suffix: '.txt' }) },
    async transform({ body }, { output, side }) {
      let text = '';
      for await (const chunk of body) text += String(chunk);
      let lines = 0;
      let bad = 0;
      for (const line of text.split('\n').filter(Boolean)) {
        if (line.startsWith('!')) {
          bad++;
          await side('quarantine').write(`${line}\n`);
        } else {
          lines++;
          await output.write(`${line.toUpperCase()}\n`);
        }
      }
      return { lines, bad };
    },
    ...overrides,
  });
}

/** A logger that keeps each entry, for the tests that check what a round says it did. */
function recordingLogger(): Logger & {
  readonly messages: string[];
  readonly entries: { message: string; fields: Record<string, unknown> }[];
} {
  const messages: string[] = [];
  const entries: { message: string; fields: Record<string, unknown> }[] = [];
  const keep = (message: string, ...fields: Record<string, unknown>[]) => {
    messages.push(message);
    entries.push({ message, fields: Object.assign({}, ...fields) });
  };
  return { messages, entries, debug: keep, info: keep, warn: keep, error: keep };
}

function setup(overrides: Partial<WorkerDefinition> = {}, minPartBytes?: number) {
  const s3 = new MemoryS3([IN, OUT], minPartBytes ? { minPartBytes } : {});
  const store = new S3ObjectStore(s3.client, minPartBytes ? { minPartBytes } : {});
  const worker = upperWorker(overrides);
  const event = (key: string, extra: Record<string, unknown> = {}) => ({
    bucket: IN,
    key,
    eventName: 'ObjectCreated:Put',
    ...extra,
  });
  /** S3's own delivery by default (options.freshDelivery): a redelivery passes `freshDelivery: false`. */
  const run = (key: string, extra: Record<string, unknown> = {}, options: Partial<ProcessObjectOptions> = {}) =>
    processObject(worker, event(key, extra), { store, freshDelivery: true, ...options });
  return { s3, store, worker, event, run };
}

describe('processObject: a round against an output that is missing, done or stale', () => {
  it('creates a missing output: HEAD, GET, PUT If-None-Match, then the closing conditional GET (304)', async () => {
    const { s3, run } = setup();
    const etag = s3.write(IN, 'a.txt', 'x\ny\n');
    const logger = recordingLogger();
    const outcome = await run('a.txt', {}, { logger });
    expect(logger.messages).toEqual([]);
    expect(s3.names()).toEqual(['HeadObject', 'GetObject', 'PutObject', 'GetObject']);
    expect(s3.requests[2]?.input.IfNoneMatch).toBe('*');
    expect(s3.requests[3]?.input.IfNoneMatch).toBe(`"${etag}"`);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('X\nY\n');
    const outputEtag = s3.etag(OUT, outKey('a.txt'));
    expect(outcome).toEqual({
      status: 'processed',
      reason: 'output created: lines 2, bad 0',
      outputKey: outKey('a.txt'),
      source: { bucket: IN, key: 'a.txt', etag },
      summary: { lines: 2, bad: 0 },
      outputEtag,
      output: {
        bucket: OUT,
        key: outKey('a.txt'),
        etag: outputEtag,
        sha256: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
        summary: { lines: '2', bad: '0' },
        sourceEtag: etag,
      },
    });
  });

  it('finds a current output done with a HEAD and a conditional GET (304), describing it as the run that built it did', async () => {
    const { s3, run } = setup();
    const etag = s3.write(IN, 'a.txt', 'x\n');
    const built = await run('a.txt');
    s3.clear();
    const again = await run('a.txt');
    expect(s3.names()).toEqual(['HeadObject', 'GetObject']);
    expect(s3.requests[1]?.input.IfNoneMatch).toBe(`"${etag}"`);
    expect(again).toEqual({
      status: 'skipped',
      reason: `already done: output is valid and current (input ETag ${etag})`,
      outputKey: outKey('a.txt'),
      outputEtag: built.outputEtag,
      source: { bucket: IN, key: 'a.txt', etag },
      output: built.output,
    });
  });

  it("a fresh delivery whose eTag is the output's source costs the HEAD alone; a redelivery with it asks S3", async () => {
    const { s3, run } = setup();
    const etag = s3.write(IN, 'a.txt', 'x\n');
    await run('a.txt');
    s3.clear();
    // A versioned input bucket's event: every write of the key sends its own (eventProvesCurrent.ts).
    const fresh = await run('a.txt', { eTag: etag, versionId: 'v1' });
    expect(s3.names()).toEqual(['HeadObject']);
    expect(fresh.reason).toBe(`already done: output is valid and built from the event's content (input ETag ${etag})`);
    s3.clear();
    const redelivered = await run('a.txt', { eTag: etag, versionId: 'v1' }, { freshDelivery: false });
    // The conditional GET, then the redelivery's look for quarantine debris (a HEAD of its key).
    expect(s3.names()).toEqual(['HeadObject', 'GetObject', 'HeadObject']);
    expect(redelivered.reason).toBe(`already done: output is valid and current (input ETag ${etag})`);
  });

  it('rebuilds a stale output with If-Match on the ETag it saw, and says what it replaced', async () => {
    const { s3, run } = setup();
    const old = s3.write(IN, 'a.txt', 'x\n');
    await run('a.txt');
    const before = s3.etag(OUT, outKey('a.txt'));
    const logger = recordingLogger();
    s3.write(IN, 'a.txt', 'z\n');
    s3.clear();
    const outcome = await run('a.txt', {}, { logger });
    expect(s3.names()).toEqual(['HeadObject', 'GetObject', 'PutObject', 'GetObject']);
    expect(s3.requests[1]?.input.IfNoneMatch).toBe(`"${old}"`);
    expect(s3.requests[2]?.input.IfMatch).toBe(`"${before}"`);
    expect(outcome.reason).toBe(`output replaced (stale: built from input ETag ${old}): lines 1, bad 0`);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('Z\n');
    expect(logger.entries).toContainEqual({
      message: 'rebuilding output',
      fields: {
        worker: 'upper',
        bucket: IN,
        key: 'a.txt',
        outputKey: outKey('a.txt'),
        was: `stale: built from input ETag ${old}`,
      },
    });
  });

  it('rebuilds an output of an older code version, saying why', async () => {
    const { s3, store, event } = setup();
    s3.write(IN, 'a.txt', 'x\n!q\n');
    await processObject(upperWorker({ codeVersion: 'upper@0' }), event('a.txt'), { store, freshDelivery: true });
    s3.clear();
    const outcome = await processObject(upperWorker(), event('a.txt'), { store, freshDelivery: true });
    // Not done, so the quarantine it lists is not checked: the GET reads the input at once.
    expect(s3.names().slice(0, 3)).toEqual(['HeadObject', 'GetObject', 'PutObject']);
    expect(outcome.status).toBe('processed');
    expect(outcome.reason).toMatch(/^output replaced \([a-z-]+: .+\): lines 1, bad 1$/);
    expect(outcome.reason).toContain('upper@0');
  });

  it('summarizes nothing when the transform returns an empty summary', async () => {
    const { s3, store, event } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    const worker = upperWorker({
      async transform({ body }, { output }) {
        for await (const chunk of body) await output.write(String(chunk));
        return {};
      },
    });
    const outcome = await processObject(worker, event('a.txt'), { store });
    expect(outcome.reason).toBe('output created');
  });

  it('an event whose input no longer exists is skipped with the reason and writes nothing', async () => {
    const { s3, run } = setup();
    const outcome = await run('gone.txt');
    expect(outcome).toEqual({
      status: 'skipped',
      reason: 'input no longer exists: nothing written',
      outputKey: outKey('gone.txt'),
    });
    expect(s3.keys(OUT)).toEqual([]);
  });

  it('refuses an input above maxInputBytes before reading it (by the event size) or after the GET (by its length)', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'big.txt', 'x'.repeat(100));
    await expect(run('big.txt', { size: 100 }, { maxInputBytes: 99 })).rejects.toThrow(InputTooLargeError);
    expect(s3.names()).toEqual(['HeadObject']);
    s3.clear();
    await expect(run('big.txt', {}, { maxInputBytes: 99 })).rejects.toThrow(
      /\(100 bytes\), above the worker's limit .*\(MAX_INPUT_BYTES 99, .*: nothing was read or written; raise the function memory and timeout .*src\/sizing\/sizeWorker\.ts\) or split the input, then redrive this message$/,
    );
    expect(s3.names()).toEqual(['HeadObject', 'GetObject']);
    expect(s3.keys(OUT)).toEqual([]);
    await expect(run('big.txt', { size: 100 }, { maxInputBytes: 100 })).resolves.toMatchObject({ status: 'processed' });
    // Done already: nothing is read, so a limit lowered since the build refuses nothing.
    await expect(run('big.txt', { size: 100 }, { maxInputBytes: 10 })).resolves.toMatchObject({ status: 'skipped' });
  });

  it('stops a transform whose decoded bytes pass maxInputBytes; the transform reads a byte stream', async () => {
    const { s3, store, event } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    const modes: boolean[] = [];
    const worker = upperWorker({
      async transform({ body, countDecoded }, { output }) {
        modes.push(body.readableObjectMode);
        for await (const chunk of body) {
          countDecoded(50);
          await output.write(String(chunk));
        }
        return {};
      },
    });
    await expect(processObject(worker, event('a.txt'), { store, maxInputBytes: 10 })).rejects.toThrow(
      /decompresses past the limit/,
    );
    expect(modes).toEqual([false]);
    expect(s3.keys(OUT)).toEqual([]);
  });
});

describe('processObject: events it does not build from', () => {
  it('refuses an option it does not know, naming processObject, before any request', async () => {
    const { s3, run } = setup();
    const wrong = { maxRound: 2 } as Partial<ProcessObjectOptions>;
    await expect(run('a.txt', {}, wrong)).rejects.toThrow(WorkerConfigurationError);
    await expect(run('a.txt', {}, wrong)).rejects.toThrow(/processObject/);
    expect(s3.names()).toEqual([]);
  });

  it('skips non-create events, folder markers, keys outside the inputs and what the worker skips, with no request', async () => {
    const { s3, store, event } = setup();
    const worker = upperWorker({
      inputPrefixes: ['in/'],
      skipReason: (o) => (o.key.endsWith('.tmp') ? 'temporary file' : undefined),
    });
    const outcomes = await Promise.all([
      processObject(worker, { ...event('in/a.txt'), eventName: 'ObjectRemoved:Delete' }, { store }),
      processObject(worker, event('in/folder/'), { store }),
      processObject(worker, event('elsewhere/a.txt'), { store }),
      processObject(worker, event('in/a.tmp'), { store }),
    ]);
    expect(outcomes.map((o) => o.reason)).toEqual([
      'event ObjectRemoved:Delete does not create content',
      'folder marker (key ends with "/")',
      `s3://${IN}/elsewhere/a.txt is outside the prefixes this pipeline reads (in/): refused, not read`,
      'temporary file',
    ]);
    expect(outcomes.every((o) => o.status === 'skipped')).toBe(true);
    expect(s3.names()).toEqual([]);
  });
});

describe('processObject: side outputs', () => {
  it('publishes the quarantine before the main output, checks it once more, and removes it when newer content has none', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n!bad\n');
    const first = await run('a.txt');
    expect(first.reason).toBe('output created: lines 1, bad 1');
    expect(s3.text(OUT, quarantineKey('a.txt'))).toBe('!bad\n');
    const puts = s3.requests.filter((r) => r.name === 'PutObject').map((r) => r.input.Key);
    expect(puts).toEqual([quarantineKey('a.txt'), outKey('a.txt')]);
    // The output lists a side object: the done-check runs once more before the call returns.
    expect(s3.names().slice(4)).toEqual(['HeadObject', 'GetObject', 'HeadObject']);

    s3.write(IN, 'a.txt', 'x\n');
    s3.clear();
    const logger = recordingLogger();
    const second = await run('a.txt', {}, { logger });
    expect(second.status).toBe('processed');
    expect(s3.keys(OUT)).toEqual([outKey('a.txt')]);
    // The HEAD of the quarantine it lists beside the conditional GET; the PUT; the stale quarantine's
    // removal (a DELETE on the ETag it listed); then, a side object having changed, the done-check once more.
    expect(s3.names()).toEqual([
      'HeadObject',
      'GetObject',
      'HeadObject',
      'PutObject',
      'DeleteObject',
      'HeadObject',
      'GetObject',
    ]);
    expect(logger.entries).toContainEqual(
      expect.objectContaining({
        message: 'side objects changed: checking the output once more',
        fields: expect.objectContaining({ round: 1 }),
      }),
    );
  });

  it('replacing an output that listed no side object deletes nothing and checks nothing more', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await run('a.txt');
    s3.write(IN, 'a.txt', 'y\n');
    s3.clear();
    await run('a.txt');
    expect(s3.names()).toEqual(['HeadObject', 'GetObject', 'PutObject', 'GetObject']);
  });

  it('a done output whose listed quarantine was changed is rebuilt, saying so', async () => {
    const { s3, run } = setup();
    const etag = s3.write(IN, 'a.txt', 'x\n!bad\n');
    await run('a.txt');
    s3.write(OUT, quarantineKey('a.txt'), 'tampered\n');
    const logger = recordingLogger();
    const outcome = await run('a.txt', { eTag: etag, versionId: 'v1' }, { logger });
    expect(outcome.status).toBe('processed');
    expect(outcome.reason).toMatch(/^output replaced \(a side object it lists was changed: .+\): lines 1, bad 1$/);
    expect(s3.text(OUT, quarantineKey('a.txt'))).toBe('!bad\n');
    expect(logger.entries).toContainEqual(
      expect.objectContaining({
        message: 'rebuilding output: a side object it lists was changed',
        fields: expect.objectContaining({
          outputKey: outKey('a.txt'),
          sideOutput: expect.stringContaining('quarantine'),
        }),
      }),
    );
  });

  it('a redelivery removes quarantine debris that the output does not list; a fresh delivery leaves it', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    s3.write(OUT, quarantineKey('a.txt'), 'debris\n');
    await run('a.txt');
    expect(s3.keys(OUT)).toContain(quarantineKey('a.txt'));
    await run('a.txt', {}, { freshDelivery: false });
    expect(s3.keys(OUT)).toEqual([outKey('a.txt')]);
  });

  it('a redelivery looks for debris in its first round only', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n!q\n');
    await run('a.txt');
    s3.write(IN, 'a.txt', 'y\n');
    s3.clear();
    await run('a.txt', {}, { freshDelivery: false });
    // Round 1: the done-check (with the HEAD of the quarantine the output lists), the replace, the
    // stale quarantine's removal, the debris look (a HEAD: gone). Round 2, after that change: the
    // done-check alone, and no second debris look.
    expect(s3.requests.map((r) => `${r.name} ${r.input.Key}`)).toEqual([
      `HeadObject ${outKey('a.txt')}`,
      'GetObject a.txt',
      `HeadObject ${quarantineKey('a.txt')}`,
      `PutObject ${outKey('a.txt')}`,
      `DeleteObject ${quarantineKey('a.txt')}`,
      `HeadObject ${quarantineKey('a.txt')}`,
      `HeadObject ${outKey('a.txt')}`,
      'GetObject a.txt',
    ]);
  });

  it('a redelivery that finds the input deleted and no output removes the quarantine a killed attempt left', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n!q\n');
    await run('a.txt');
    s3.remove(OUT, outKey('a.txt'));
    s3.remove(IN, 'a.txt');
    await run('a.txt', {}, { freshDelivery: false });
    expect(s3.keys(OUT)).toEqual([]);
  });

  it('a redelivery that finds the input deleted and an invalid output keeps the quarantine beside it', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n!q\n');
    await run('a.txt');
    s3.write(OUT, outKey('a.txt'), 'not an output of ours\n');
    s3.remove(IN, 'a.txt');
    await run('a.txt', {}, { freshDelivery: false });
    expect(s3.keys(OUT)).toContain(quarantineKey('a.txt'));
  });

  it('an output whose input changed and whose quarantine was changed too is described as stale', async () => {
    const { s3, run } = setup();
    const old = s3.write(IN, 'a.txt', 'x\n!q\n');
    await run('a.txt');
    s3.write(OUT, quarantineKey('a.txt'), 'tampered\n');
    s3.write(IN, 'a.txt', 'y\n!q\n');
    s3.clear();
    const outcome = await run('a.txt');
    expect(outcome.reason).toBe(`output replaced (stale: built from input ETag ${old}): lines 1, bad 1`);
    // The conditional GET returned the new content: no second GET.
    expect(s3.names().filter((n) => n === 'GetObject')).toHaveLength(2);
  });

  it('a multipart quarantine removed between its completion and its seal: the main output waits for the next round', async () => {
    const { s3, store, event } = setup({}, 16);
    const worker = upperWorker({ partBytes: 16 });
    s3.write(IN, 'a.txt', `x\n${'!bad row\n'.repeat(8)}`);
    let removed = false;
    s3.before = () => {
      const last = s3.requests.at(-1);
      if (!removed && last?.name === 'CompleteMultipartUpload' && last.input.Key === quarantineKey('a.txt')) {
        removed = true;
        s3.remove(OUT, quarantineKey('a.txt'));
      }
    };
    const outcome = await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    expect(removed).toBe(true);
    expect(outcome).toMatchObject({ status: 'processed', publishRacesLost: 1 });
    expect(s3.model.openUploads()).toEqual([]);
    expect(s3.text(OUT, quarantineKey('a.txt'))).toBe('!bad row\n'.repeat(8));
  });

  it('a redelivery that finds the input deleted removes an output whose listed quarantine is gone', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n!bad\n');
    await run('a.txt');
    s3.remove(IN, 'a.txt');
    s3.remove(OUT, quarantineKey('a.txt'));
    const logger = recordingLogger();
    const outcome = await run('a.txt', {}, { logger, freshDelivery: false });
    expect(outcome.reason).toMatch(/^input deleted and its output lists a side object that is gone: /);
    expect(s3.keys(OUT)).toEqual([]);
    expect(logger.entries).toContainEqual(
      expect.objectContaining({
        message: 'the input was deleted and its output lists a side object that is gone: removing the outputs',
        fields: expect.objectContaining({ sideOutput: expect.stringContaining('quarantine') }),
      }),
    );
  });

  it('a redelivery that finds the input deleted keeps an output whose quarantine is intact', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n!bad\n');
    await run('a.txt');
    s3.remove(IN, 'a.txt');
    const outcome = await run('a.txt', {}, { freshDelivery: false });
    expect(outcome.reason).toBe('input no longer exists: nothing written');
    expect(s3.keys(OUT)).toEqual([outKey('a.txt'), quarantineKey('a.txt')].sort());
  });
});

describe('processObject: races and the closing checks', () => {
  it('a create that loses to another writer (412) re-runs the done-check and finds its output done', async () => {
    const { s3, run, store, worker, event } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    let raced = false;
    s3.before = async (request) => {
      if (raced || request.name !== 'PutObject' || request.input.Key !== outKey('a.txt')) return;
      raced = true;
      await processObject(worker, event('a.txt'), { store });
    };
    const logger = recordingLogger();
    const outcome = await run('a.txt', {}, { logger });
    expect(outcome).toMatchObject({ status: 'skipped', publishRacesLost: 1 });
    expect(outcome.reason).toMatch(/^already done/);
    expect(logger.messages).toContain('publish lost a race to another writer; re-running the done-check');
  });

  it('a writer that lost the race removes the quarantine it created, which the winner does not list', async () => {
    const { s3, run, store, worker, event } = setup();
    s3.write(IN, 'a.txt', 'x\n!bad\n');
    let raced = false;
    s3.before = async (request) => {
      if (raced || request.name !== 'PutObject' || request.input.Key !== outKey('a.txt')) return;
      raced = true;
      s3.write(IN, 'a.txt', 'y\n');
      // S3's own delivery of the newer write: it sweeps no debris, so only the loser removes its orphan.
      await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    };
    const logger = recordingLogger();
    const outcome = await run('a.txt', {}, { logger });
    expect(outcome.publishRacesLost).toBe(1);
    expect(logger.entries).toContainEqual(
      expect.objectContaining({
        message: 'publish lost a race to another writer; re-running the done-check',
        fields: expect.objectContaining({ round: 1 }),
      }),
    );
    // Removing the orphan changed a side object: the output is checked once more before the call returns.
    const names = s3.names();
    expect(names.slice(names.lastIndexOf('DeleteObject') + 1)).toEqual(['HeadObject', 'GetObject']);
    expect(s3.keys(OUT)).toEqual([outKey('a.txt')]);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('Y\n');
  });

  it('an output that keeps changing under other writers fails after maxRounds, to be retried', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    let n = 0;
    s3.before = (request) => {
      if (request.name === 'PutObject' && request.input.Key === outKey('a.txt')) {
        s3.write(OUT, outKey('a.txt'), `other ${n++}\n`);
      }
    };
    await expect(run('a.txt', {}, { maxRounds: 2 })).rejects.toThrow(PublishConflictError);
    expect(n).toBe(2);
    await expect(run('a.txt')).rejects.toThrow(
      `Output for s3://${IN}/a.txt kept changing under concurrent writers (4 rounds); the message will be retried.`,
    );
    expect(n).toBe(6);
  });

  it('an input changed while its output was built is built again from the new content', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    let changed = false;
    s3.before = (request) => {
      if (!changed && request.name === 'PutObject' && request.input.Key === outKey('a.txt')) {
        changed = true;
        s3.write(IN, 'a.txt', 'w\n');
      }
    };
    const logger = recordingLogger();
    const outcome = await run('a.txt', {}, { logger });
    expect(outcome.status).toBe('processed');
    expect(s3.text(OUT, outKey('a.txt'))).toBe('W\n');
    expect(outcome.source?.etag).toBe(s3.etag(IN, 'a.txt'));
    expect(logger.entries).toContainEqual(
      expect.objectContaining({
        message: 'the input changed while its output was built: building it again',
        fields: expect.objectContaining({ round: 1 }),
      }),
    );
  });

  it('an input deleted while its output was built: the outputs it published are removed', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n!bad\n');
    s3.before = (request) => {
      if (request.name === 'PutObject' && request.input.Key === outKey('a.txt')) s3.remove(IN, 'a.txt');
    };
    const logger = recordingLogger();
    const outcome = await run('a.txt', {}, { logger });
    expect(outcome.reason).toMatch(/^input deleted while its output was built: /);
    expect(s3.keys(OUT)).toEqual([]);
    expect(logger.messages).toContain('the input was deleted while its output was built: removing the outputs');
  });

  it('an input deleted while its output was built, found by the done-check of the round after a side-output change', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n!bad\n');
    s3.before = (request) => {
      // After the main output's publish, before the closing done-check reads the input.
      if (request.name === 'HeadObject' && s3.etag(OUT, outKey('a.txt')) !== undefined) s3.remove(IN, 'a.txt');
    };
    const outcome = await run('a.txt');
    expect(outcome.reason).toMatch(/^input deleted while its output was built: /);
    expect(s3.keys(OUT)).toEqual([]);
  });

  it('the closing check of a replace finds the input deleted: the outputs are removed', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await run('a.txt');
    s3.write(IN, 'a.txt', 'y\n');
    s3.before = (request) => {
      if (request.name === 'PutObject' && request.input.Key === outKey('a.txt')) s3.remove(IN, 'a.txt');
    };
    const logger = recordingLogger();
    const outcome = await run('a.txt', {}, { logger });
    expect(outcome.reason).toMatch(/^input deleted while its output was built: /);
    expect(s3.keys(OUT)).toEqual([]);
    expect(logger.messages).toContain('the input was deleted while its output was built: removing the outputs');
  });

  it('an input deleted while its output was built and then uploaded again: the removal rebuilds it', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    let phase = 'building';
    s3.before = (request) => {
      if (phase === 'building' && request.name === 'PutObject' && request.input.Key === outKey('a.txt')) {
        phase = 'deleted';
        s3.remove(IN, 'a.txt');
      } else if (phase === 'deleted' && request.name === 'HeadObject' && request.input.Bucket === IN) {
        // The removal asks whether the input exists: it was uploaded again meanwhile.
        phase = 'again';
        s3.write(IN, 'a.txt', 'n\n');
      }
    };
    const outcome = await run('a.txt');
    expect(phase).toBe('again');
    expect(outcome.reason).toMatch(/^input deleted while its output was built: /);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('N\n');
  });

  it('with removalsLookAgain, a create skips the closing conditional GET; a replace still sends it', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await run('a.txt', {}, { removalsLookAgain: true });
    expect(s3.names()).toEqual(['HeadObject', 'GetObject', 'PutObject']);
    s3.write(IN, 'a.txt', 'y\n');
    s3.clear();
    await run('a.txt', {}, { removalsLookAgain: true });
    expect(s3.names()).toEqual(['HeadObject', 'GetObject', 'PutObject', 'GetObject']);
  });
});

describe('processObject: the first delivery of a new object', () => {
  it('creates first up to 8 MiB, as docs/guides/02-concepts.md says', () => {
    expect(CREATE_FIRST_MAX_BYTES).toBe(8 * 1024 * 1024);
  });

  it('creates first (no HEAD) when the delivery is fresh, createFirst is set and the input is small enough', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await run('a.txt', { size: 2 }, { freshDelivery: true, createFirst: true });
    expect(s3.names()).toEqual(['GetObject', 'PutObject', 'GetObject']);
  });

  it('checks first above CREATE_FIRST_MAX_BYTES, for an unknown size, on a redelivery and with firstRun: check', async () => {
    const { s3, run, store, event } = setup();
    const cases: [Record<string, unknown>, Partial<ProcessObjectOptions>][] = [
      [{ size: CREATE_FIRST_MAX_BYTES + 1 }, { freshDelivery: true, createFirst: true }],
      [{}, { freshDelivery: true, createFirst: true }],
      [{ size: 2 }, { createFirst: true, freshDelivery: false }],
      [{ size: 2 }, { freshDelivery: true }],
    ];
    for (const [i, [extra, options]] of cases.entries()) {
      s3.write(IN, `c${i}.txt`, 'x\n');
      s3.clear();
      await run(`c${i}.txt`, extra, options);
      expect(s3.names()[0]).toBe('HeadObject');
    }
    s3.write(IN, 'check.txt', 'x\n');
    s3.clear();
    await processObject(upperWorker({ firstRun: 'check' }), event('check.txt', { size: 2 }), {
      store,
      freshDelivery: true,
      createFirst: true,
    });
    expect(s3.names()[0]).toBe('HeadObject');
    s3.write(IN, 'limit.txt', 'x\n');
    s3.clear();
    await run('limit.txt', { size: CREATE_FIRST_MAX_BYTES }, { freshDelivery: true, createFirst: true });
    expect(s3.names()[0]).toBe('GetObject');
  });

  it('a create that finds an output in place loses (412) and the next round replaces it', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await run('a.txt');
    s3.write(IN, 'a.txt', 'y\n');
    s3.clear();
    const outcome = await run('a.txt', { size: 2 }, { freshDelivery: true, createFirst: true });
    expect(outcome).toMatchObject({ status: 'processed', publishRacesLost: 1 });
    // The output the create built replaces the one in place, then the closing check (src/worker/keptOutput.ts).
    expect(s3.names()).toEqual(['GetObject', 'PutObject', 'HeadObject', 'PutObject', 'GetObject']);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('Y\n');
  });

  it('the adaptive policy chooses the path, learns what the key held, and settles on what the delivery left', async () => {
    const { s3, run } = setup();
    const policy = new AdaptiveFirstRun();
    const calls: string[] = [];
    const observed: boolean[] = [];
    const settled: (string | undefined)[] = [];
    const spy = {
      choose: (o: { key: string }) => {
        calls.push(o.key);
        return policy.choose(o as never);
      },
      observe: (_o: unknown, found: { outputInPlace: boolean }) => {
        observed.push(found.outputInPlace);
      },
      settle: (_o: unknown, etag: string | undefined) => {
        settled.push(etag);
      },
    };
    const etag = s3.write(IN, 'p/a.txt', 'x\n');
    const options = { freshDelivery: true, createFirst: true, firstRunPolicy: spy as never };
    const logger = recordingLogger();
    await run('p/a.txt', { size: 2 }, { ...options, logger });
    expect(calls).toEqual(['p/a.txt']);
    expect(s3.names()[0]).toBe('GetObject');
    expect(logger.entries).toContainEqual(
      expect.objectContaining({ message: 'first run', fields: expect.objectContaining({ path: 'create' }) }),
    );
    expect(observed).toEqual([false]);
    expect(settled).toEqual([etag]);
    // Redelivered and already there: the create loses; the observation says so.
    await run('p/a.txt', { size: 2 }, options);
    expect(observed).toEqual([false, true]);
    // Not a fresh first delivery: the policy is neither asked nor told.
    await run('p/a.txt', { size: 2 }, { firstRunPolicy: spy as never, createFirst: true, freshDelivery: false });
    expect(calls).toHaveLength(2);
    expect(observed).toHaveLength(2);
    expect(settled).toHaveLength(3);
    // A worker that says firstRun: 'create' ignores the policy.
    s3.write(IN, 'p/b.txt', 'x\n');
    s3.clear();
    await processObject(
      upperWorker({ firstRun: 'create' }),
      { bucket: IN, key: 'p/b.txt', eventName: 'ObjectCreated:Put', size: 2 },
      {
        store: new S3ObjectStore(s3.client),
        ...options,
      },
    );
    expect(calls).toHaveLength(2);
    expect(s3.names()[0]).toBe('GetObject');
  });
});

describe('processObject: what the adaptive first run learns from the first round', () => {
  /** A policy that answers `path` and records what it is told. */
  function fixedPolicy(path: 'create' | 'check') {
    const observed: boolean[] = [];
    const settled: (string | undefined)[] = [];
    return {
      observed,
      settled,
      choose: () => path,
      observe: (_o: unknown, found: { outputInPlace: boolean }) => {
        observed.push(found.outputInPlace);
      },
      settle: (_o: unknown, etag: string | undefined) => {
        settled.push(etag);
      },
    };
  }
  const firstDelivery = (policy: ReturnType<typeof fixedPolicy>) => ({
    createFirst: true,
    firstRunPolicy: policy as never,
  });

  it('checking first: a done output, a stale one replaced and a deleted input with its output were all in place', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await run('a.txt');
    const policy = fixedPolicy('check');
    await run('a.txt', { size: 2 }, firstDelivery(policy));
    s3.write(IN, 'a.txt', 'y\n');
    await run('a.txt', { size: 2 }, firstDelivery(policy));
    s3.remove(IN, 'a.txt');
    await run('a.txt', { size: 2 }, firstDelivery(policy));
    expect(policy.observed).toEqual([true, true, true]);
  });

  it('creating first for an input already deleted: nothing was in place, and the delivery settles on no output', async () => {
    const { run } = setup();
    const policy = fixedPolicy('create');
    const outcome = await run('gone.txt', { size: 2 }, firstDelivery(policy));
    expect(outcome.status).toBe('skipped');
    expect(policy.observed).toEqual([false]);
    expect(policy.settled).toEqual([undefined]);
  });
});

describe('processObject: outputs of earlier releases', () => {
  it('removes an output at a legacy key once the current one is published, keeping a legacy key that is current', async () => {
    const { s3, store, event } = setup();
    s3.write(IN, 'a.txt', 'x\n!q\n');
    s3.write(OUT, 'v0/a.txt', 'old\n');
    const worker = upperWorker({
      legacyOutputKeys: () => ['v0/a.txt', 'v0/never-written.txt', outKey('a.txt'), quarantineKey('a.txt')],
    });
    const logger = recordingLogger();
    await processObject(worker, event('a.txt'), { store, logger });
    expect(s3.keys(OUT)).toEqual([outKey('a.txt'), quarantineKey('a.txt')]);
    expect(logger.entries.filter((e) => e.message === 'removed an output at its earlier key')).toEqual([
      expect.objectContaining({ fields: expect.objectContaining({ key: 'v0/a.txt' }) }),
    ]);
  });
});

describe('processObject: multipart outputs and failures while publishing', () => {
  it("streams an output above the worker's partBytes as a multipart upload, with the worker's content type", async () => {
    const { s3, store, event } = setup({}, 16);
    s3.write(IN, 'a.txt', 'a line of text\n'.repeat(4));
    const worker = upperWorker({ partBytes: 16, contentType: 'text/plain' });
    await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    expect(s3.requests.some((r) => r.name === 'CreateMultipartUpload' && r.input.Key === outKey('a.txt'))).toBe(true);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('A LINE OF TEXT\n'.repeat(4));
    expect(s3.model.peek(OUT, outKey('a.txt'))?.contentType).toBe('text/plain');
  });

  it("names the delivery's SQS message as the writer of a multipart upload until its seal", async () => {
    const { s3, store, event } = setup({}, 16);
    s3.write(IN, 'a.txt', 'a line of text\n'.repeat(4));
    await processObject(upperWorker({ partBytes: 16 }), event('a.txt'), { store, messageId: 'message-7' });
    const created = s3.requests.find((r) => r.name === 'CreateMultipartUpload' && r.input.Key === outKey('a.txt'));
    expect(created?.input.Metadata).toMatchObject({ [MetadataKey.WRITER]: 'message-7' });
  });

  it('a transform that fails with a multipart upload open aborts it', async () => {
    const { s3, store, event } = setup({}, 16);
    s3.write(IN, 'a.txt', 'x\n');
    const worker = upperWorker({
      partBytes: 16,
      async transform(_input, { output }) {
        await output.write('x'.repeat(40));
        throw new Error('transform failed');
      },
    });
    await expect(processObject(worker, event('a.txt'), { store })).rejects.toThrow('transform failed');
    expect(s3.requests.some((r) => r.name === 'CreateMultipartUpload')).toBe(true);
    expect(s3.model.openUploads()).toEqual([]);
  });

  it('a publish that fails leaves no multipart upload open, and the error reaches the caller', async () => {
    const { s3, store, event } = setup({}, 16);
    s3.write(IN, 'a.txt', 'a line of text\n'.repeat(4));
    s3.before = (request) => {
      if (request.name === 'CompleteMultipartUpload' && request.input.Key === outKey('a.txt')) {
        throw new SimServiceError(500, 'InternalError', 'We encountered an internal error. Please try again.');
      }
    };
    await expect(processObject(upperWorker({ partBytes: 16 }), event('a.txt'), { store })).rejects.toThrow(
      /internal error/,
    );
    expect(s3.model.openUploads()).toEqual([]);
  });
});

describe('processObject: a transform that fails', () => {
  it('leaves nothing visible and no multipart upload open, and the error reaches the caller', async () => {
    const { s3, store, event } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    const worker = upperWorker({
      partBytes: 5 * 1024 * 1024,
      async transform(_input, { output, side }) {
        await side('quarantine').write('!q\n');
        await output.write('partial\n');
        throw new Error('transform failed');
      },
    });
    await expect(processObject(worker, event('a.txt'), { store })).rejects.toThrow('transform failed');
    expect(s3.keys(OUT)).toEqual([]);
    expect(s3.model.openUploads()).toEqual([]);
  });
});

/** A memory budget that records what it was asked; `room` says whether tryAcquire admits at once. */
function recordingAdmission(room: boolean) {
  const calls: string[] = [];
  let held = 0;
  const release = () => {
    held--;
    calls.push('release');
  };
  return {
    calls,
    held: () => held,
    tryAcquire(size: number | undefined) {
      calls.push(`try ${size}`);
      if (!room) return undefined;
      held++;
      return release;
    },
    async acquire(size: number | undefined) {
      calls.push(`acquire ${size}`);
      held++;
      return release;
    },
  };
}

describe('processObject: memory for the transform (options.admission)', () => {
  it('reserves by the event size before the GET of a missing output, and gives it back when the round ends', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    const admission = recordingAdmission(true);
    await run('a.txt', { size: 2 }, { admission });
    expect(admission.calls).toEqual(['acquire 2', 'release']);
    expect(admission.held()).toBe(0);
  });

  it('a body that arrives unreserved (no size in the event) takes its length at once when there is room', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'xyz\n');
    const admission = recordingAdmission(true);
    await run('a.txt', {}, { admission });
    expect(admission.calls).toEqual(['try 4', 'release']);
  });

  it('without room, closes the body, waits for a reservation and reads again', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'xyz\n');
    const admission = recordingAdmission(false);
    await run('a.txt', {}, { admission });
    expect(admission.calls).toEqual(['try 4', 'acquire 4', 'release']);
    expect(s3.names()).toEqual(['HeadObject', 'GetObject', 'GetObject', 'PutObject', 'GetObject']);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('XYZ\n');
  });

  it('a done output reserves nothing: the 304 carries no body', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await run('a.txt');
    const admission = recordingAdmission(true);
    await run('a.txt', { size: 2 }, { admission });
    expect(admission.calls).toEqual([]);
  });
});

describe('processObject: the read guard (options.deadline)', () => {
  it('a read that runs into the deadline stops with the guard error and writes nothing', async () => {
    const { s3, run } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    const deadline = { remainingTimeMs: () => 10, marginMs: 1000, timeLimitMs: 60_000, now: () => 0 };
    await expect(run('a.txt', {}, { deadline })).rejects.toThrow(/deadline came near/);
    expect(s3.keys(OUT)).toEqual([]);
    const reads = { active: 0, started: 0 };
    const plenty = { ...deadline, remainingTimeMs: () => 50_000, reads };
    await expect(run('a.txt', {}, { deadline: plenty })).resolves.toMatchObject({ status: 'processed' });
    // The read counted itself in, and out when it ended.
    expect(reads).toEqual({ active: 0, started: 1 });
  });
});
