import { describe, expect, it } from 'vitest';
import {
  InputFormat,
  type NormalizeOptions,
  type NormalizeResult,
  normalizeRecords,
  type QuarantineEntry,
} from '../../src/normalize/normalizeRecords.js';

interface Run {
  result: NormalizeResult;
  output: string[];
  quarantine: QuarantineEntry[];
}

async function run(
  input: string | Array<string | Uint8Array>,
  format: InputFormat,
  options?: NormalizeOptions,
): Promise<Run> {
  const output: string[] = [];
  const quarantine: QuarantineEntry[] = [];
  const result = await normalizeRecords(
    typeof input === 'string' ? [input] : input,
    format,
    {
      output: { write: (line) => void output.push(line) },
      quarantine: { write: (line) => void quarantine.push(JSON.parse(line) as QuarantineEntry) },
    },
    options,
  );
  return { result, output, quarantine };
}

const csv = (input: string | Array<string | Uint8Array>, options?: NormalizeOptions) =>
  run(input, InputFormat.CSV, options);
const ndjson = (input: string | Array<string | Uint8Array>, options?: NormalizeOptions) =>
  run(input, InputFormat.NDJSON, options);
const bytes = (...values: number[]) => Uint8Array.from(values);

describe('normalizeRecords CSV', () => {
  it('turns each data record into one JSON object with normalized keys in header order', async () => {
    const { result, output, quarantine } = await csv(' Order ID ,Customer Name,Total (EUR)\n1,Ada,10\n2,Grace,20\n');
    expect(result).toMatchObject({ records: 2, quarantined: 0 });
    expect(output).toEqual([
      '{"order_id":"1","customer_name":"Ada","total_eur":"10"}',
      '{"order_id":"2","customer_name":"Grace","total_eur":"20"}',
    ]);
    expect(quarantine).toEqual([]);
  });

  it('trims values and writes empty ones as null, quoted or not', async () => {
    const { output } = await csv('a,b,c,d\n  x , ,"",""  \n');
    expect(output).toEqual(['{"a":"x","b":null,"c":null,"d":null}']);
  });

  it('handles quoted commas, doubled quotes, embedded newlines and CRLF', async () => {
    const { output } = await csv('name,note\r\n"Smith, J","said ""hi""\r\nthen left"\r\n');
    expect(output.map((line) => JSON.parse(line))).toEqual([{ name: 'Smith, J', note: 'said "hi"\r\nthen left' }]);
  });

  it('ignores blank lines anywhere, including before the header', async () => {
    const { result, output } = await csv('\n\r\n  \na,b\n\n1,2\n\n\n3,4\n\n');
    expect(result).toMatchObject({ records: 2, quarantined: 0 });
    expect(output).toEqual(['{"a":"1","b":"2"}', '{"a":"3","b":"4"}']);
  });

  it('quarantines a record with the wrong field count, with its starting line and raw text', async () => {
    const { result, output, quarantine } = await csv('a,b,c\n1,2\n1,2,3\n"x\ny",2,3,4\n');
    expect(result).toMatchObject({ records: 1, quarantined: 2 });
    expect(output).toEqual(['{"a":"1","b":"2","c":"3"}']);
    expect(quarantine).toEqual([
      { line: 2, reason: 'expected 3 fields, got 2', raw: '1,2', truncated: false },
      { line: 4, reason: 'expected 3 fields, got 4', raw: '"x\ny",2,3,4', truncated: false },
    ]);
  });

  it('quarantines an unterminated quoted field at end of input', async () => {
    const { result, quarantine } = await csv('a,b\n1,2\n3,"never closed\n4,5\n');
    expect(result).toMatchObject({ records: 1, quarantined: 1 });
    expect(quarantine).toEqual([
      { line: 3, reason: 'unterminated quoted field at end of input', raw: '3,"never closed\n4,5\n', truncated: false },
    ]);
  });

  it('quarantines text after a closing quote', async () => {
    const { quarantine } = await csv('a,b\n"x"y,1\n');
    expect(quarantine).toEqual([
      { line: 2, reason: 'unexpected text after the closing quote of field 1', raw: '"x"y,1', truncated: false },
    ]);
  });

  it('writes nothing for a header-only file', async () => {
    expect(await csv('a,b,c\n')).toMatchObject({ result: { records: 0, quarantined: 0 }, output: [], quarantine: [] });
  });

  describe('an unusable header (empty or duplicate name) quarantines every data row instead of throwing', () => {
    it('duplicate names after normalization', async () => {
      const { result, output, quarantine } = await csv('id,Name,NAME\n1,a,b\n2,c\n');
      const reason = 'unusable header: columns 2 and 3 both normalize to "name"';
      expect(result).toMatchObject({ records: 0, quarantined: 2, unusableHeader: reason });
      expect(output).toEqual([]);
      expect(quarantine).toEqual([
        { line: 2, reason, raw: '1,a,b', truncated: false },
        { line: 3, reason, raw: '2,c', truncated: false },
      ]);
    });

    it('an empty name', async () => {
      const { result, quarantine } = await csv('id,,x\n1,2,3\n');
      expect(result).toMatchObject({
        records: 0,
        quarantined: 1,
        unusableHeader: 'unusable header: column 2 is empty',
      });
      expect(quarantine[0]?.reason).toBe('unusable header: column 2 is empty');
    });

    it('reports the problem even when there are no data rows', async () => {
      const { result } = await csv('a,a\n');
      expect(result).toEqual({
        records: 0,
        quarantined: 0,
        header: 1,
        blank: 0,
        encoding: 'text',
        unusableHeader: 'unusable header: columns 1 and 2 both normalize to "a"',
      });
    });

    it('a header record that cannot be parsed is quarantined too', async () => {
      const { result, quarantine } = await csv(`${'h'.repeat(40)}\n1\n`, { maxRecordBytes: 16 });
      const reason = 'unusable header: record exceeds 16 bytes';
      expect(result).toMatchObject({ records: 0, quarantined: 2, unusableHeader: reason });
      expect(quarantine.map((q) => [q.line, q.reason])).toEqual([
        [1, reason],
        [2, reason],
      ]);
    });
  });

  it('quarantines an oversized record with a truncated raw excerpt and carries on', async () => {
    const big = 'x'.repeat(3000);
    const { result, output, quarantine } = await csv(`a,b\n1,${big}\n2,3\n`, { maxRecordBytes: 2048 });
    expect(result).toMatchObject({ records: 1, quarantined: 1 });
    expect(output).toEqual(['{"a":"2","b":"3"}']);
    expect(quarantine).toEqual([
      { line: 2, reason: 'record exceeds 2 KiB', raw: `1,${big}`.slice(0, 1024), truncated: true },
    ]);
  });

  it('defaults to a 1 MiB record limit and a 1024-character raw excerpt', async () => {
    const justFits = 'y'.repeat(1024 * 1024 - 2);
    const tooBig = 'z'.repeat(1024 * 1024);
    const { result, output, quarantine } = await csv(`a,b\n1,${justFits}\n2,${tooBig}\n3,ok\n`);
    expect(result).toMatchObject({ records: 2, quarantined: 1 });
    expect(output[1]).toBe('{"a":"3","b":"ok"}');
    expect(quarantine).toEqual([
      { line: 3, reason: 'record exceeds 1 MiB', raw: `2,${'z'.repeat(1022)}`, truncated: true },
    ]);
  });
});

describe('normalizeRecords NDJSON', () => {
  it('re-serializes each object line with JSON.stringify, keeping key order', async () => {
    const { result, output } = await ndjson('{ "b": 1, "a": [1, 2.50, {"z": null}] }\n{"s":"\\u00e9"}\n');
    expect(result).toMatchObject({ records: 2, quarantined: 0 });
    expect(output).toEqual(['{"b":1,"a":[1,2.5,{"z":null}]}', '{"s":"é"}']);
  });

  it('ignores blank and whitespace-only lines and accepts CRLF', async () => {
    const { result, output } = await ndjson('\r\n{"a":1}\r\n   \r\n\t\n{"b":2}');
    expect(result).toMatchObject({ records: 2, quarantined: 0 });
    expect(output).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('quarantines invalid JSON with a stable reason that does not depend on the engine message', async () => {
    const { result, quarantine } = await ndjson('{"a":1\n{\'a\':1}\n{"a":1} x\n');
    expect(result).toMatchObject({ records: 0, quarantined: 3 });
    expect(quarantine).toEqual([
      { line: 1, reason: 'invalid JSON', raw: '{"a":1', truncated: false },
      { line: 2, reason: 'invalid JSON', raw: "{'a':1}", truncated: false },
      { line: 3, reason: 'invalid JSON', raw: '{"a":1} x', truncated: false },
    ]);
  });

  it('quarantines valid JSON that is not an object, naming what it is', async () => {
    const { quarantine } = await ndjson('[1]\n42\n"s"\ntrue\nnull\n{"ok":true}\n');
    expect(quarantine.map((q) => [q.line, q.reason])).toEqual([
      [1, 'expected a JSON object, got array'],
      [2, 'expected a JSON object, got number'],
      [3, 'expected a JSON object, got string'],
      [4, 'expected a JSON object, got boolean'],
      [5, 'expected a JSON object, got null'],
    ]);
  });

  it('quarantines an oversized line and resumes at the next one', async () => {
    const { result, output, quarantine } = await ndjson(`{"a":"${'x'.repeat(100)}"}\n{"b":1}\n`, {
      maxRecordBytes: 64,
      maxRawChars: 10,
    });
    expect(result).toMatchObject({ records: 1, quarantined: 1 });
    expect(output).toEqual(['{"b":1}']);
    expect(quarantine).toEqual([{ line: 1, reason: 'record exceeds 64 bytes', raw: '{"a":"xxxx', truncated: true }]);
  });

  it('documents JavaScript number and key semantics: integer-like keys first, last duplicate wins', async () => {
    const { output } = await ndjson('{"b":1,"2":2,"a":3,"b":4,"big":1e400}\n');
    expect(output).toEqual(['{"2":2,"b":4,"a":3,"big":null}']);
  });
});

describe('normalizeRecords decoding', () => {
  it('strips a UTF-8 BOM from bytes and from string input, for both formats', async () => {
    const bom = bytes(0xef, 0xbb, 0xbf);
    const body = new TextEncoder().encode('id\n1\n');
    expect((await csv([bom, body])).output).toEqual(['{"id":"1"}']);
    expect((await csv('\ufeffid\n1\n')).output).toEqual(['{"id":"1"}']);
    expect((await ndjson('\ufeff{"a":1}\n')).output).toEqual(['{"a":1}']);
  });

  it('strips a BOM whose bytes arrive in separate chunks, and only at the very start', async () => {
    const { output } = await csv([bytes(0xef), bytes(0xbb), bytes(0xbf), new TextEncoder().encode('h\nx\ufeffy\n')]);
    expect(output).toEqual(['{"h":"x\ufeffy"}']);
  });

  it('decodes invalid UTF-8 to U+FFFD instead of failing', async () => {
    // 'J', 0xFC (Latin-1 ü: invalid in UTF-8), 'rgen'; then a truncated 3-byte sequence at end of input.
    const { result, output } = await csv([
      new TextEncoder().encode('name\n'),
      bytes(0x4a, 0xfc, 0x72),
      bytes(0x0a, 0xe2, 0x82),
    ]);
    expect(result).toMatchObject({ records: 2, quarantined: 0 });
    expect(output).toEqual(['{"name":"J\ufffdr"}', '{"name":"\ufffd"}']);
  });

  it('decodes a multi-byte character split across chunks as one character', async () => {
    const euro = new TextEncoder().encode('v\n€\n'); // € is E2 82 AC
    const { output } = await csv([euro.slice(0, 3), euro.slice(3, 4), euro.slice(4)]);
    expect(output).toEqual(['{"v":"€"}']);
  });

  it('accepts a mix of byte and string chunks', async () => {
    const { output } = await ndjson([new TextEncoder().encode('{"a":'), '1}\n{"b":', bytes(0x32, 0x7d)]);
    expect(output).toEqual(['{"a":1}', '{"b":2}']);
  });
});

describe('normalizeRecords edge cases', () => {
  it('returns zero counts and writes nothing for empty input', async () => {
    for (const format of [InputFormat.CSV, InputFormat.NDJSON]) {
      expect(await run([], format)).toMatchObject({
        result: { records: 0, quarantined: 0 },
        output: [],
        quarantine: [],
      });
      expect(await run(['', new Uint8Array(0)], format)).toEqual({
        result: { records: 0, quarantined: 0, header: 0, blank: 0, encoding: 'utf-8' },
        output: [],
        quarantine: [],
      });
      expect((await run('\ufeff', format)).result).toMatchObject({ records: 0, quarantined: 0 });
    }
  });

  it('rejects an unknown format and invalid limits loudly', async () => {
    const sinks = { output: { write: () => {} }, quarantine: { write: () => {} } };
    await expect(normalizeRecords([], 'xml' as InputFormat, sinks)).rejects.toThrow(/Unknown input format "xml"/);
    await expect(normalizeRecords([], InputFormat.CSV, sinks, { maxRecordBytes: -1 })).rejects.toThrow(RangeError);
  });

  it('propagates a sink failure instead of swallowing it', async () => {
    const failing = { write: () => Promise.reject(new Error('disk full')) };
    await expect(
      normalizeRecords(['a\n1\n'], InputFormat.CSV, { output: failing, quarantine: { write: () => {} } }),
    ).rejects.toThrow('disk full');
  });
});
