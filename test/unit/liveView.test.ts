import { describe, expect, it } from 'vitest';
import { lookAtOutputs, whileRunningHints } from '../../app/dev/devView.js';
import { cutMiddle, formatOutcomeLine, formatOutcomeTable } from '../../app/dev/formatOutcomeTable.js';
import type { ObjectOutcomeRow } from '../../app/dev/OutcomeTracker.js';
import { parseS3Uri } from '../../src/s3/s3Uri.js';

const longKey = `s3://rerun-input/incoming/dt=2026-01-05/${'very-long-folder-name/'.repeat(40)}orders.csv`;
const rows: ObjectOutcomeRow[] = [
  {
    subject: 's3://rerun-input/incoming/orders.csv',
    status: 'processed',
    attempts: 1,
    reason: 'output created (3 records, 1 quarantined)',
    outputKey: 'normalized/rerun-input/orders.csv.ndjson',
  } as ObjectOutcomeRow,
  {
    subject: longKey,
    status: 'processed',
    attempts: 2,
    reason: 'output created (1 records, 0 quarantined)',
    outputKey: `normalized/rerun-input/dt=2026-01-05/_long/${'a'.repeat(64)}.ndjson`,
  } as ObjectOutcomeRow,
];

describe('the live view fits the terminal', () => {
  it('at 80 columns every line fits, TRIES and OUTPUT are dropped, a long key is cut in the middle', () => {
    const table = formatOutcomeTable(rows, { width: 80 });
    const lines = table.trimEnd().split('\n');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^STATUS\s+OBJECT\s+REASON$/);
    expect(lines[2]).toMatch(/^processed {2}s3:\/\/rerun-input\/inco.*….*orders\.csv {2}output created/);
  });

  it('at 200 columns every column stays, and every line still fits', () => {
    const lines = formatOutcomeTable(rows, { width: 200 }).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^STATUS\s+TRIES\s+OBJECT\s+OUTPUT\s+REASON$/);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(200);
    expect(lines[1]).toContain('normalized/rerun-input/orders.csv.ndjson');
  });

  it('without a width (a log) nothing is cut', () => {
    expect(formatOutcomeTable(rows)).toContain(longKey);
  });

  it('cuts in the middle, keeping both ends', () => {
    expect(cutMiddle('abcdefghij', 5)).toBe('ab…ij');
    expect(cutMiddle('short', 10)).toBe('short');
    expect(cutMiddle('abc', 1)).toBe('…');
  });

  it('prints one line per outcome as it happens, named by its object, within the width', () => {
    const line = formatOutcomeLine({ status: 'processed', subject: longKey, reason: 'output created' }, 80);
    expect([...line].length).toBeLessThanOrEqual(80);
    expect(line).toMatch(/^processed {2}s3:\/\/rerun-input\/.*….*orders\.csv {2}output created$/);
  });

  it('when ready, names the commands that find the running session by themselves, with --app-name for another app', () => {
    const topology = { appName: 'rerun', outputPrefix: 'normalized/', quarantinePrefix: 'quarantine/' };
    const text = whileRunningHints({ outputBucket: 'rerun-output', topology });
    expect(text.split('\n').filter(Boolean)).toEqual([
      'While this runs, in another terminal (no variable needed):',
      'Outputs:    npx rerun ls s3://rerun-output/normalized/',
      'Quarantine: npx rerun ls s3://rerun-output/quarantine/',
      'One object: npx rerun cat s3://rerun-output/<key from ls>',
      'Days:       npx rerun status --from YYYY-MM-DD --to YYYY-MM-DD',
      'Console:    npx rerun ui',
    ]);
    // A worker of the user's writes under its own prefixes: the whole bucket, no quarantine or days.
    const own = whileRunningHints({
      outputBucket: 'out',
      topology: { ...topology, appName: 'shop' },
      ownHandler: true,
    });
    expect(own.split('\n').filter(Boolean).slice(1)).toEqual([
      'Outputs:    npx rerun ls s3://out/ --app-name shop',
      'One object: npx rerun cat s3://out/<key from ls> --app-name shop',
      'Console:    npx rerun ui --app-name shop',
    ]);
  });

  it('closes with rerun ls and rerun cat at an emulator of the user, and says the embedded one stopped', () => {
    const topology = { appName: 'rerun', outputPrefix: 'normalized/', quarantinePrefix: 'quarantine/' };
    const external = lookAtOutputs({ outputBucket: 'rerun-output', topology }, 'http://127.0.0.1:4000', false);
    expect(external).toContain('AWS_ENDPOINT_URL=http://127.0.0.1:4000 npx rerun ls s3://rerun-output/normalized/');
    expect(external).toContain('AWS_ENDPOINT_URL=http://127.0.0.1:4000 npx rerun ls s3://rerun-output/quarantine/');
    expect(external).toContain('npx rerun cat s3://rerun-output/');
    const embedded = lookAtOutputs({ outputBucket: 'rerun-output', topology }, 'http://127.0.0.1:4000', true);
    expect(embedded).not.toMatch(/npx rerun/);
    expect(embedded).toMatch(/embedded emulator stopped with rerun dev/);
    for (const line of embedded.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    const own = lookAtOutputs({ outputBucket: 'out', topology, ownHandler: true }, 'http://h', false);
    expect(own.split('\n').filter(Boolean)).toEqual([
      'Outputs:    AWS_ENDPOINT_URL=http://h npx rerun ls s3://out/',
      'One object: AWS_ENDPOINT_URL=http://h npx rerun cat s3://out/<key from ls>',
    ]);
  });

  it('reads s3:// URIs', () => {
    expect(parseS3Uri('s3://b/k/x')).toEqual({ bucket: 'b', key: 'k/x' });
    expect(parseS3Uri('s3://b')).toEqual({ bucket: 'b', key: '' });
    expect(parseS3Uri('b/k')).toBeUndefined();
  });
});
