import { describe, expect, it } from 'vitest';
import { InputFormat, type NormalizeResult, normalizeRecords } from '../../src/normalize/normalizeRecords.js';

interface Outcome {
  result: NormalizeResult;
  /** The bytes a sink would store: every line followed by "\n". */
  output: string;
  quarantine: string;
}

async function normalize(
  input: Iterable<Uint8Array | string> | AsyncIterable<Uint8Array | string>,
  format: InputFormat,
  options?: { maxRecordBytes?: number; maxRawChars?: number },
): Promise<Outcome> {
  let output = '';
  let quarantine = '';
  const result = await normalizeRecords(
    input,
    format,
    {
      output: {
        write: (line) => {
          output += `${line}\n`;
        },
      },
      quarantine: {
        write: (line) => {
          quarantine += `${line}\n`;
        },
      },
    },
    options,
  );
  return { result, output, quarantine };
}

const encode = (text: string) => new TextEncoder().encode(text);

/** Every way to cut `data` in two, plus one byte per chunk. */
function byteSplits(data: Uint8Array): Uint8Array[][] {
  const all: Uint8Array[][] = [Array.from(data, (b) => Uint8Array.of(b))];
  for (let i = 0; i <= data.length; i++) all.push([data.subarray(0, i), data.subarray(i)]);
  return all;
}

// A small CSV exercising every rule: BOM, CRLF, quoted commas/quotes/newlines, multi-byte characters
// (split mid-character by the byte splits), blank lines, bad field counts, text after a closing quote,
// an oversized record (with the limit below) and an unterminated quote at the end.
const CSV_SAMPLE = encode(
  '\ufeffId,Näme,"No\r\nte"\r\n' +
    '1,"Müller, Anna","said ""hi"""\r\n' +
    '\r\n' +
    '2,😀 smile ,"multi\nline"\n' +
    '3,short\n' +
    `4,${'é'.repeat(30)},x\n` +
    '5,"a"b,c\n' +
    '6,ok,fine\n' +
    '7,"unterminated,\n',
);

const NDJSON_SAMPLE = encode(
  '\ufeff{"a":1,"é":"😀"}\r\n' +
    '\n' +
    '[1,2]\n' +
    `{"long":"${'x'.repeat(60)}"}\n` +
    '{"b":"line\\nbreak"}\n' +
    '{broken\n' +
    '{"last":true}',
);

const LIMITS = { maxRecordBytes: 48, maxRawChars: 12 };

describe('normalizeRecords streaming: chunk boundaries', () => {
  it('produces byte-identical CSV output and quarantine for a split at every byte offset', async () => {
    const expected = await normalize([CSV_SAMPLE], InputFormat.CSV, LIMITS);
    expect(expected.result).toMatchObject({ records: 3, quarantined: 4 });
    expect(expected.output).toBe(
      '{"id":"1","näme":"Müller, Anna","no_te":"said \\"hi\\""}\n' +
        '{"id":"2","näme":"😀 smile","no_te":"multi\\nline"}\n' +
        '{"id":"6","näme":"ok","no_te":"fine"}\n',
    );
    // Lines count physical lines: the header's quoted CRLF makes record "1" start on line 3.
    expect(expected.quarantine).toBe(
      '{"line":7,"reason":"expected 3 fields, got 2","raw":"3,short","truncated":false}\n' +
        '{"line":8,"reason":"record exceeds 48 bytes","raw":"4,éééééééééé","truncated":true}\n' +
        '{"line":9,"reason":"unexpected text after the closing quote of field 2","raw":"5,\\"a\\"b,c","truncated":false}\n' +
        '{"line":11,"reason":"unterminated quoted field at end of input","raw":"7,\\"untermina","truncated":true}\n',
    );
    for (const chunks of byteSplits(CSV_SAMPLE)) {
      expect(await normalize(chunks, InputFormat.CSV, LIMITS)).toEqual(expected);
    }
  });

  it('produces byte-identical NDJSON output and quarantine for a split at every byte offset', async () => {
    const expected = await normalize([NDJSON_SAMPLE], InputFormat.NDJSON, LIMITS);
    expect(expected.result).toMatchObject({ records: 3, quarantined: 3 });
    expect(expected.output).toBe('{"a":1,"é":"😀"}\n{"b":"line\\nbreak"}\n{"last":true}\n');
    expect(expected.quarantine).toBe(
      '{"line":3,"reason":"expected a JSON object, got array","raw":"[1,2]","truncated":false}\n' +
        '{"line":4,"reason":"record exceeds 48 bytes","raw":"{\\"long\\":\\"xxx","truncated":true}\n' +
        '{"line":6,"reason":"invalid JSON","raw":"{broken","truncated":false}\n',
    );
    for (const chunks of byteSplits(NDJSON_SAMPLE)) {
      expect(await normalize(chunks, InputFormat.NDJSON, LIMITS)).toEqual(expected);
    }
  });

  it('produces the same output from string chunks split at every character offset', async () => {
    const text = new TextDecoder().decode(CSV_SAMPLE); // the decoder strips the BOM; add it back
    const withBom = `\ufeff${text}`;
    const fromBytes = await normalize([CSV_SAMPLE], InputFormat.CSV, LIMITS);
    expect(fromBytes.result.encoding).toBe('utf-8');
    // String input was never bytes: it reports `text` as its encoding, and everything else is equal.
    const expected = { ...fromBytes, result: { ...fromBytes.result, encoding: 'text' } };
    for (let i = 0; i <= withBom.length; i++) {
      expect(await normalize([withBom.slice(0, i), withBom.slice(i)], InputFormat.CSV, LIMITS)).toEqual(expected);
    }
  });

  it('is deterministic: the same bytes give the same bytes on every run', async () => {
    const first = await normalize([CSV_SAMPLE], InputFormat.CSV);
    const second = await normalize([CSV_SAMPLE.slice()], InputFormat.CSV);
    expect(second).toEqual(first);
    expect(first.output.length).toBeGreaterThan(0);
  });
});

describe('normalizeRecords streaming: backpressure', () => {
  it('awaits each sink write (never more than one pending) and pulls input only after the writes it caused', async () => {
    const events: string[] = [];
    let pending = 0;
    let maxPending = 0;
    const slow = (name: string) => ({
      write: async (line: string) => {
        pending += 1;
        maxPending = Math.max(maxPending, pending);
        events.push(`${name}:${line}`);
        await new Promise((resolve) => setImmediate(resolve));
        await new Promise((resolve) => setTimeout(resolve, 1));
        pending -= 1;
      },
    });
    async function* input() {
      for (const chunk of ['a\n1\n2\n', '3\nx,y\n', '4\n']) {
        events.push(`pull:${JSON.stringify(chunk)}`);
        yield chunk;
      }
    }
    const result = await normalizeRecords(input(), InputFormat.CSV, { output: slow('out'), quarantine: slow('q') });
    expect(result).toMatchObject({ records: 4, quarantined: 1 });
    expect(maxPending).toBe(1);
    expect(pending).toBe(0);
    expect(events).toEqual([
      'pull:"a\\n1\\n2\\n"',
      'out:{"a":"1"}',
      'out:{"a":"2"}',
      'pull:"3\\nx,y\\n"',
      'out:{"a":"3"}',
      'q:{"line":5,"reason":"expected 1 fields, got 2","raw":"x,y","truncated":false}',
      'pull:"4\\n"',
      'out:{"a":"4"}',
    ]);
  });
});

describe('normalizeRecords streaming: bounded memory', () => {
  const CHUNK = 256 * 1024;
  const CHUNKS = 384; // 96 MiB in one record: buffering it would show up in the heap

  async function peakHeapGrowth(format: InputFormat, head: string, filler: number, tail: string) {
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    async function* input() {
      yield encode(head);
      for (let i = 0; i < CHUNKS; i++) {
        yield new Uint8Array(CHUNK).fill(filler); // fresh bytes, so every decoded string is new
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }
      yield encode(tail);
    }
    const outcome = await normalize(input(), format);
    return { growthMiB: (peak - before) / 2 ** 20, outcome };
  }

  it('streams a 96 MiB CSV quoted field without buffering it and resumes at the next record', async () => {
    const { growthMiB, outcome } = await peakHeapGrowth(InputFormat.CSV, 'id,v\n1,"', 0x61, '"\n2,after\n');
    expect(outcome.result).toMatchObject({ records: 1, quarantined: 1 });
    expect(outcome.output).toBe('{"id":"2","v":"after"}\n');
    expect(JSON.parse(outcome.quarantine)).toMatchObject({ line: 2, reason: 'record exceeds 1 MiB', truncated: true });
    expect(growthMiB).toBeLessThan(48);
  });

  it('streams a 96 MiB NDJSON line without buffering it and resumes at the next line', async () => {
    const { growthMiB, outcome } = await peakHeapGrowth(InputFormat.NDJSON, '{"v":"', 0x62, '"}\n{"next":1}\n');
    expect(outcome.result).toMatchObject({ records: 1, quarantined: 1 });
    expect(outcome.output).toBe('{"next":1}\n');
    expect(JSON.parse(outcome.quarantine).raw).toBe(`{"v":"${'b'.repeat(1018)}`);
    expect(growthMiB).toBeLessThan(48);
  });
});
