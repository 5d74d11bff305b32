import { describe, expect, it } from 'vitest';
import { type CsvRecord, CsvRecordReader, UNTERMINATED_QUOTE_REASON } from '../../src/normalize/csvParser.js';

/** Feeds `chunks` one by one, draining between them, and returns every record. */
function read(chunks: string[], limits: { maxRecordBytes?: number; maxRawChars?: number } = {}): CsvRecord[] {
  const reader = new CsvRecordReader(limits);
  const records: CsvRecord[] = [];
  const drain = () => {
    for (let r = reader.nextRecord(); r !== undefined; r = reader.nextRecord()) records.push(r);
  };
  for (const chunk of chunks) {
    reader.push(chunk);
    drain();
  }
  reader.end();
  drain();
  return records;
}

const fieldsOf = (text: string) => read([text]).map((r) => r.fields);

/** Every split of `text` into two chunks, plus one character per chunk. */
function splits(text: string): string[][] {
  const all = [[text], [...text]];
  for (let i = 1; i < text.length; i++) all.push([text.slice(0, i), text.slice(i)]);
  return all;
}

describe('CsvRecordReader fields (RFC 4180)', () => {
  it('splits plain records on commas and LF', () => {
    expect(fieldsOf('a,b,c\n1,2,3\n')).toEqual([
      ['a', 'b', 'c'],
      ['1', '2', '3'],
    ]);
  });

  it('keeps commas, doubled quotes and newlines inside quoted fields (RFC 4180 2.6, 2.7)', () => {
    expect(fieldsOf('"a,b","say ""hi""","line1\nline2"\n')).toEqual([['a,b', 'say "hi"', 'line1\nline2']]);
  });

  it('accepts CRLF and drops the CR of the terminator but keeps a CRLF inside quotes', () => {
    expect(fieldsOf('a,b\r\n"x\r\ny",z\r\n')).toEqual([
      ['a', 'b'],
      ['x\r\ny', 'z'],
    ]);
  });

  it('ends a record at a lone CR (classic Mac OS line endings), and keeps a CR inside quotes as data', () => {
    expect(fieldsOf('a\rb,c\n')).toEqual([['a'], ['b', 'c']]);
    expect(fieldsOf('id,name\r1,a\n2,b\r\n')).toEqual([
      ['id', 'name'],
      ['1', 'a'],
      ['2', 'b'],
    ]);
    expect(fieldsOf('"a\rb",c\r')).toEqual([['a\rb', 'c']]);
  });

  it('reads the last record without a final newline, including a trailing CR', () => {
    expect(fieldsOf('a,b\n1,2')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
    expect(fieldsOf('a,b\r')).toEqual([['a', 'b']]);
  });

  it('treats empty fields, a trailing comma and an empty quoted field as empty strings', () => {
    expect(fieldsOf(',x,\n"",\n')).toEqual([
      ['', 'x', ''],
      ['', ''],
    ]);
    expect(fieldsOf('a,')).toEqual([['a', '']]);
  });

  it('opens a quoted field only at its first character; a quote inside an unquoted field is literal', () => {
    expect(fieldsOf('5" disk,a"b\n x "y",z\n')).toEqual([
      ['5" disk', 'a"b'],
      [' x "y"', 'z'],
    ]);
  });

  it('tolerates spaces, tabs and CR after a closing quote', () => {
    const [record] = read(['"a" \t,"b"  \r\n']);
    expect(record?.fields).toEqual(['a', 'b']);
    expect(record?.problem).toBeUndefined();
  });

  it('flags text after a closing quote and still resynchronises at the next record', () => {
    const records = read(['"Liskov" B.,x\n"a"b"c,d\nok,1\n']);
    expect(records.map((r) => r.problem)).toEqual([
      'unexpected text after the closing quote of field 1',
      'unexpected text after the closing quote of field 1',
      undefined,
    ]);
    expect(records[2]?.fields).toEqual(['ok', '1']);
  });

  it('flags a quoted field that is still open at end of input', () => {
    const records = read(['a,b\n1,"open\nstill open']);
    expect(records).toHaveLength(2);
    expect(records[1]).toMatchObject({ line: 2, problem: UNTERMINATED_QUOTE_REASON, raw: '1,"open\nstill open' });
  });

  it('accepts a closing quote as the very last character of the input', () => {
    expect(fieldsOf('a,"b"')).toEqual([['a', 'b']]);
  });
});

describe('CsvRecordReader blank lines and line numbers', () => {
  it('skips empty and whitespace-only lines but not a record holding an empty quoted field', () => {
    const records = read(['\n\na,b\n\r\n   \n\t\n""\n1,2\n\n']);
    expect(records.map((r) => [r.line, r.fields])).toEqual([
      [3, ['a', 'b']],
      [7, ['']],
      [8, ['1', '2']],
    ]);
  });

  it('numbers records by the physical line they start on, counting newlines inside quotes', () => {
    const records = read(['h1,h2\n"a\nb\nc",x\nnext,y\r\n"\r\n",z\nlast,w']);
    expect(records.map((r) => r.line)).toEqual([1, 2, 5, 6, 8]);
  });

  it('gives the raw text of each record without its terminator', () => {
    const records = read(['a,"b\r\nc"\r\nd,e\r\n']);
    expect(records.map((r) => r.raw)).toEqual(['a,"b\r\nc"', 'd,e']);
    expect(records.every((r) => !r.rawTruncated)).toBe(true);
  });
});

describe('CsvRecordReader bounds', () => {
  it('cuts raw to maxRawChars without splitting a surrogate pair', () => {
    const [record] = read(['abc😀def,x\n'], { maxRawChars: 4 });
    expect(record?.raw).toBe('abc');
    expect(record?.rawTruncated).toBe(true);
    expect(record?.fields).toEqual(['abc😀def', 'x']);
  });

  it('drops an oversized record (counted in UTF-8 bytes) and resumes at the next record', () => {
    // 'é' is 2 UTF-8 bytes: 6 characters, 12 bytes, over a 10-byte limit although under 10 characters.
    const input = 'a\néééééé\nb\n';
    for (const chunks of splits(input)) {
      const records = read(chunks, { maxRecordBytes: 10 });
      expect(records.map((r) => [r.line, r.fields, r.problem])).toEqual([
        [1, ['a'], undefined],
        [2, [], 'record exceeds 10 bytes'],
        [3, ['b'], undefined],
      ]);
    }
  });

  it('keeps tracking quotes inside an oversized record so a quoted newline does not end it early', () => {
    const input = 'h\n"0123456789\nABCDEFGHIJ\n"\nnext\n';
    for (const chunks of splits(input)) {
      const records = read(chunks, { maxRecordBytes: 16, maxRawChars: 5 });
      expect(records.map((r) => [r.line, r.problem, r.raw, r.rawTruncated])).toEqual([
        [1, undefined, 'h', false],
        [2, 'record exceeds 16 bytes', '"0123', true],
        [5, undefined, 'next', false],
      ]);
    }
  });

  it('reports a record exactly at the limit as fine and one byte over as oversized', () => {
    expect(read(['abcd\n'], { maxRecordBytes: 4 })[0]?.problem).toBeUndefined();
    expect(read(['abcd\r\n'], { maxRecordBytes: 4 })[0]?.problem).toBeUndefined(); // the terminator is not counted
    expect(read(['abcde\r\n'], { maxRecordBytes: 4 })[0]?.problem).toBe('record exceeds 4 bytes');
    expect(read(['abcde'], { maxRecordBytes: 4 })[0]?.problem).toBe('record exceeds 4 bytes');
  });

  it('prefers the oversize reason over an unterminated quote', () => {
    const [record] = read(['"', 'x'.repeat(50)], { maxRecordBytes: 8 });
    expect(record?.problem).toBe('record exceeds 8 bytes');
  });
});

describe('CsvRecordReader streaming', () => {
  const sample = 'id,"na\nme",v\r\n1,"a,""b""",\r\n\r\n2,plain,"x\r\ny"\n3,"z" ,é😀\n4,"bad"x,1\n5,"open';

  it('returns identical records whatever the chunk boundaries', () => {
    const expected = read([sample]);
    expect(expected).toHaveLength(6);
    for (const chunks of splits(sample)) expect(read(chunks)).toEqual(expected);
  });

  it('returns identical records for three-way splits', () => {
    const expected = read([sample]);
    for (let i = 1; i < sample.length; i += 3) {
      for (let j = i + 1; j < sample.length; j += 2) {
        expect(read([sample.slice(0, i), sample.slice(i, j), sample.slice(j)])).toEqual(expected);
      }
    }
  });

  it('refuses a push before the previous text was drained, and after end()', () => {
    const reader = new CsvRecordReader();
    reader.push('a\nb\n');
    expect(() => reader.push('c\n')).toThrow(/drained/);
    expect(reader.nextRecord()?.fields).toEqual(['a']);
    expect(reader.nextRecord()?.fields).toEqual(['b']);
    expect(reader.nextRecord()).toBeUndefined();
    reader.end();
    expect(() => reader.push('c\n')).toThrow(/after end/);
  });

  it('keeps a lone high surrogate that ends the input, even when end() follows push() without a drain', () => {
    const reader = new CsvRecordReader();
    reader.push('h\nx,\ud83d');
    reader.end();
    expect(reader.nextRecord()?.fields).toEqual(['h']);
    expect(reader.nextRecord()?.fields).toEqual(['x', '\ud83d']);
    expect(reader.nextRecord()).toBeUndefined();
    expect(read(['a\ud83d', '\ude00b'])[0]?.fields).toEqual(['a😀b']);
  });

  it('rejects nonsensical limits loudly', () => {
    expect(() => new CsvRecordReader({ maxRecordBytes: 0 })).toThrow(RangeError);
    expect(() => new CsvRecordReader({ maxRawChars: 1.5 })).toThrow(RangeError);
  });
});

/**
 * Reference implementation of the same dialect, one character at a time over the whole text: slow and
 * obviously correct, so the chunked, indexOf-driven reader can be checked against it.
 */
function referenceRead(text: string, maxRecordBytes: number, maxRawChars: number) {
  const records: Array<Omit<CsvRecord, 'escapeFree'>> = [];
  let i = 0;
  let line = 1;
  while (i < text.length) {
    const start = i;
    const startLine = line;
    const fields: string[] = [];
    let field = '';
    let state: 'start' | 'unquoted' | 'quoted' | 'quoteSeen' | 'after' = 'start';
    let problem: string | undefined;
    let sawQuote = false;
    let end: number;
    for (;;) {
      if (i >= text.length) {
        if (state === 'quoted') problem = UNTERMINATED_QUOTE_REASON;
        fields.push(field);
        end = i;
        break;
      }
      const c = text[i];
      if (state === 'start') {
        if (c === '"') {
          state = 'quoted';
          sawQuote = true;
          i++;
        } else state = 'unquoted';
        continue;
      }
      if (state === 'quoted') {
        if (c === '"') state = 'quoteSeen';
        else {
          if (c === '\r' || (c === '\n' && text[i - 1] !== '\r')) line++;
          field += c;
        }
        i++;
        continue;
      }
      if (state === 'quoteSeen' && c === '"') {
        field += '"';
        state = 'quoted';
        i++;
        continue;
      }
      if (c === ',' || c === '\n' || c === '\r') {
        fields.push(field);
        field = '';
        i++;
        if (c === ',') {
          state = 'start';
          continue;
        }
        line++;
        end = i - 1;
        if (c === '\r' && text[i] === '\n') i++; // CRLF is one terminator
        break;
      }
      if (state === 'quoteSeen') state = 'after';
      if (state === 'after') {
        if (c !== ' ' && c !== '\t') {
          problem ??= `unexpected text after the closing quote of field ${fields.length + 1}`;
        }
      } else field += c;
      i++;
    }
    const text0 = text.slice(start, end);
    const oversized = Buffer.byteLength(text0) > maxRecordBytes;
    const content = text0;
    if (!oversized && problem === undefined && !sawQuote && fields.length === 1 && (fields[0] ?? '').trim() === '') {
      continue;
    }
    records.push({
      line: startLine,
      fields: oversized ? [] : fields,
      problem: oversized ? `record exceeds ${maxRecordBytes} bytes` : problem,
      raw: content.length <= maxRawChars ? content : cutWithoutSplittingPair(content, maxRawChars),
      rawTruncated: content.length > maxRawChars,
    });
  }
  return records;
}

function cutWithoutSplittingPair(text: string, max: number): string {
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

describe('CsvRecordReader against a character-by-character reference', () => {
  it('agrees on 3000 random inputs under random chunking (which may split surrogate pairs)', () => {
    let seed = 20260301;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31; // fixed-seed LCG: the same cases on every run
      return seed / 2 ** 31;
    };
    const alphabet = ['a', 'b', ',', ',', '"', '"', '\n', '\n', '\r', ' ', '\t', 'é', '😀'];
    for (let n = 0; n < 3000; n++) {
      let text = '';
      const length = Math.floor(random() * 40);
      for (let k = 0; k < length; k++) text += alphabet[Math.floor(random() * alphabet.length)];
      const chunks: string[] = [];
      for (let pos = 0; pos < text.length; ) {
        const size = 1 + Math.floor(random() * 8);
        chunks.push(text.slice(pos, pos + size));
        pos += size;
      }
      const limits = { maxRecordBytes: 14, maxRawChars: 6 };
      const expected = referenceRead(text, limits.maxRecordBytes, limits.maxRawChars);
      const strip = (records: CsvRecord[]) => records.map(({ escapeFree: _, ...rest }) => rest);
      expect(strip(read([text], limits)), JSON.stringify(text)).toEqual(expected);
      expect(strip(read(chunks, limits)), JSON.stringify(chunks)).toEqual(expected);
    }
  });
});
