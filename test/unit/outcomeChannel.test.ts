import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';

const OUTCOMES = fileURLToPath(new URL('../../src/worker/outcomes.ts', import.meta.url));

describe('record outcomes reach the listeners of every copy of the library in the process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rerun-outcomes-copy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a handler built with a second copy (a dist/ import, a bundle) reports to rerun dev', async () => {
    // A second module instance, as a worker importing the package's dist/ or a bundle holds one.
    const copy = join(dir, 'outcomes.ts');
    copyFileSync(OUTCOMES, copy);
    const other = (await import(pathToFileURL(copy).href)) as typeof import('../../src/worker/outcomes.js');
    expect(other.emitRecordOutcome).not.toBe((await import('../../src/worker/outcomes.js')).emitRecordOutcome);

    const seen: RecordOutcome[] = [];
    const stop = onRecordOutcome((o) => seen.push(o));
    const heardByTheCopy: RecordOutcome[] = [];
    const unsubscribe = other.onRecordOutcome((o) => heardByTheCopy.push(o));
    other.emitRecordOutcome({ messageId: 'm-1', status: 'processed', reason: 'output created' });
    stop();
    unsubscribe();
    other.emitRecordOutcome({ messageId: 'm-2', status: 'skipped', reason: 'after unsubscribing' });
    expect(seen.map((o) => o.messageId)).toEqual(['m-1']);
    expect(heardByTheCopy.map((o) => o.messageId)).toEqual(['m-1']);
  });
});
