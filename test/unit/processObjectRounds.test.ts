import { describe, expect, it } from 'vitest';
import { InputTooLargeError, PublishConflictError } from '../../src/errors.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import type { Logger } from '../../src/logging/logger.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { AdaptiveFirstRun } from '../../src/worker/adaptiveFirstRun.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';
import { CREATE_FIRST_MAX_BYTES, processObject } from '../../src/worker/processObject.js';
import type { ProcessObjectOptions } from '../../src/worker/processObjectOptions.js';
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

/** A logger that keeps each message, for the tests that check what a round says it did. */
function recordingLogger(): Logger & { readonly messages: string[] } {
  const messages: string[] = [];
  const keep = (message: string) => {
    messages.push(message);
  };
  return { messages, debug: keep, info: keep, warn: keep, error: keep };
}

function setup(overrides: Partial<WorkerDefinition> = {}) {
  const s3 = new MemoryS3([IN, OUT]);
  const store = new S3ObjectStore(s3.client);
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
    const outcome = await run('a.txt');
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
    expect(logger.messages).toContain('rebuilding output');
  });

  it('rebuilds an output of an older code version, and an invalid one, saying why', async () => {
    const { s3, store, event } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await processObject(upperWorker({ codeVersion: 'upper@0' }), event('a.txt'), { store });
    const outcome = await processObject(upperWorker(), event('a.txt'), { store });
    expect(outcome.status).toBe('processed');
    expect(outcome.reason).toMatch(/^output replaced \([a-z-]+: .+\): lines 1, bad 0$/);
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
    await expect(run('big.txt', {}, { maxInputBytes: 99 })).rejects.toThrow(/is .* \(100 bytes\), above .* 99/);
    expect(s3.names()).toEqual(['HeadObject', 'GetObject']);
    expect(s3.keys(OUT)).toEqual([]);
    await expect(run('big.txt', { size: 100 }, { maxInputBytes: 100 })).resolves.toMatchObject({ status: 'processed' });
  });
});

describe('processObject: events it does not build from', () => {
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
    const second = await run('a.txt');
    expect(second.status).toBe('processed');
    expect(s3.keys(OUT)).toEqual([outKey('a.txt')]);
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
    expect(logger.messages).toContain('rebuilding output: a side object it lists was changed');
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
    expect(logger.messages).toContain(
      'the input was deleted and its output lists a side object that is gone: removing the outputs',
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
      await processObject(worker, event('a.txt'), { store });
    };
    const outcome = await run('a.txt');
    expect(outcome.publishRacesLost).toBe(1);
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
    expect(logger.messages).toContain('the input changed while its output was built: building it again');
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
    expect(s3.names()).toEqual(['GetObject', 'PutObject', 'HeadObject', 'GetObject', 'PutObject', 'GetObject']);
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
    await run('p/a.txt', { size: 2 }, options);
    expect(calls).toEqual(['p/a.txt']);
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

describe('processObject: outputs of earlier releases', () => {
  it('removes an output at a legacy key once the current one is published, keeping a legacy key that is current', async () => {
    const { s3, store, event } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    s3.write(OUT, 'v0/a.txt', 'old\n');
    const worker = upperWorker({
      legacyOutputKeys: () => ['v0/a.txt', 'v0/never-written.txt', outKey('a.txt'), quarantineKey('a.txt')],
    });
    const logger = recordingLogger();
    await processObject(worker, event('a.txt'), { store, logger });
    expect(s3.keys(OUT)).toEqual([outKey('a.txt')]);
    expect(logger.messages.filter((m) => m === 'removed an output at its earlier key')).toHaveLength(1);
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
    const plenty = { ...deadline, remainingTimeMs: () => 50_000 };
    await expect(run('a.txt', {}, { deadline: plenty })).resolves.toMatchObject({ status: 'processed' });
  });
});
