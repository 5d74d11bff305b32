import { describe, expect, it } from 'vitest';
import {
  MAX_SUMMARY_FIELDS,
  parseSummary,
  SummaryAccumulator,
  serializeSummary,
} from '../../app/partition/dailySummary.js';
import type { LineageEntry } from '../../app/partition/lineage.js';

const N1: LineageEntry = { kind: 'normalized', path: 'dt=2026-01-05/a.csv.ndjson', etag: 'n1' };
const Q1: LineageEntry = { kind: 'quarantine', path: 'dt=2026-01-05/a.csv.ndjson', etag: 'q1' };
const manifest = { day: '2026-01-05', codeVersion: 'summarize@1', lineageHash: 'h', lineage: [N1, Q1] };

function summarize(normalized: string[], quarantine: string[] = []) {
  const acc = new SummaryAccumulator();
  acc.startFile(N1, normalized.join('\n').length);
  for (const line of normalized) acc.addLine(line);
  acc.startFile(Q1, 0);
  for (const line of quarantine) acc.addLine(line);
  return acc.finish(manifest);
}

describe('the daily summary', () => {
  it('counts files, records, quarantined rows by reason, and aggregates numeric fields (decimal strings too)', () => {
    const s = summarize(
      [
        '{"id":"1","amount":"10.50","note":null}',
        '',
        '{"id":"2","amount":7.25,"note":"x"}',
        '{"id":"3","amount":"n/a"}',
      ],
      [
        '{"line":3,"reason":"expected 3 fields, got 2","raw":"x","truncated":false}',
        '{"line":4,"reason":"expected 3 fields, got 2","raw":"y","truncated":false}',
        'not json',
      ],
    );
    expect(s).toMatchObject({
      partition: 'dt=2026-01-05',
      files: 1,
      records: 3,
      quarantined: 3,
      quarantineReasons: { 'expected 3 fields, got 2': 2, '(unreadable quarantine line)': 1 },
      fields: {
        id: { present: 3, numeric: 3, sum: 6, min: 1, max: 3 },
        amount: { present: 3, numeric: 2, sum: 17.75, min: 7.25, max: 10.5 },
        note: { present: 1, numeric: 0 },
      },
      fieldsOmitted: 0,
    });
  });

  it('serializes to canonical bytes: equal summaries give equal bytes whatever the key order of the records', () => {
    const a = serializeSummary(summarize(['{"a":"1","b":"2"}']));
    const b = serializeSummary(summarize(['{"b":"2","a":"1"}']));
    expect(a.equals(b)).toBe(true);
    const text = a.toString('utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.indexOf('"bytes"')).toBeLessThan(text.indexOf('"files"'));
    expect(text).not.toMatch(/"sum":undefined|"min":null/);
  });

  it('bounds the fields it tracks', () => {
    const wide = JSON.stringify(
      Object.fromEntries(Array.from({ length: MAX_SUMMARY_FIELDS + 5 }, (_, i) => [`f${i}`, i])),
    );
    const s = summarize([wide]);
    expect(Object.keys(s.fields)).toHaveLength(MAX_SUMMARY_FIELDS);
    expect(s.fieldsOmitted).toBe(5);
  });

  it('refuses a normalized line that is not a JSON object, naming the object and line', () => {
    expect(() => summarize(['{"ok":1}', '[1]'])).toThrow(
      /normalized\/dt=2026-01-05\/a\.csv\.ndjson line 2 is not a JSON object/,
    );
    expect(() => summarize(['{"ok":1', ''])).toThrow(/line 1/);
  });

  it('validates parsed bytes against the expected partition, lineage hash, code version and manifest', () => {
    const bytes = serializeSummary(summarize(['{"a":1}']));
    expect(parseSummary(bytes, { day: '2026-01-05', lineageHash: 'h', codeVersion: 'summarize@1' }).ok).toBe(true);
    const reason = (b: Uint8Array, e = {}) => {
      const r = parseSummary(b, { day: '2026-01-05', ...e });
      return r.ok ? 'ok' : r.reason;
    };
    expect(reason(bytes, { lineageHash: 'other' })).toMatch(/lineage hash h differs from other/);
    expect(reason(bytes, { codeVersion: 'summarize@2' })).toMatch(/code version/);
    expect(parseSummary(bytes, { day: '2026-01-06' }).ok).toBe(false);
    expect(reason(Buffer.from('{"schema":"x"}'))).toMatch(/schema/);
    expect(reason(Buffer.from('partial'))).toBe('not JSON');
    const doc = JSON.parse(bytes.toString());
    expect(reason(Buffer.from(JSON.stringify({ ...doc, files: 2 })))).toMatch(/files is 2 but the manifest lists 1/);
  });
});
