import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InputFormat } from '../../src/normalize/normalizeRecords.js';
import { type CsvModel, csvModel, cuts, splitAt, TERMINATORS } from '../support/hostileCsv.js';
import { accountedRecords, everySplit, normalizeChunks } from '../support/normalizeRun.js';

/** How the generated text is stored: the encodings and containers the normalizer must see through. */
const ENCODINGS = ['utf-8', 'utf-8 BOM', 'utf-16le BOM', 'utf-16be BOM', 'gzip', 'gzip utf-16le BOM'] as const;
type Encoding = (typeof ENCODINGS)[number];

function encode(text: string, encoding: Encoding): Uint8Array {
  switch (encoding) {
    case 'utf-8':
      return Buffer.from(text, 'utf8');
    case 'utf-8 BOM':
      return Buffer.from(`\ufeff${text}`, 'utf8');
    case 'utf-16le BOM':
      return Buffer.from(`\ufeff${text}`, 'utf16le');
    case 'utf-16be BOM':
      return Buffer.from(`\ufeff${text}`, 'utf16le').swap16();
    case 'gzip':
      return gzipSync(Buffer.from(text, 'utf8'));
    case 'gzip utf-16le BOM':
      return gzipSync(Buffer.from(`\ufeff${text}`, 'utf16le'));
  }
}

async function checkCsv(model: CsvModel, chunks: Uint8Array[]): Promise<void> {
  const run = await normalizeChunks(chunks, InputFormat.CSV);
  const { expected } = model;
  expect(run.result).toMatchObject({
    records: expected.records,
    quarantined: expected.quarantined,
    header: expected.header,
    blank: expected.blank,
  });
  expect(run.result.rejected).toBeUndefined();
  expect(run.output).toEqual(expected.output);
  expect(run.quarantine.map((q) => [q.line, q.reason])).toEqual(expected.quarantine);
  expect(accountedRecords(run.result)).toBe(expected.records + expected.quarantined + expected.header + expected.blank);
}

/** Number of generated files per property (each also cut at random chunk boundaries). */
const PROPERTY_RUNS = 1000;

describe('accounting invariant: every physical CSV record is counted exactly once (fast-check)', () => {
  it('balances on generated files in every encoding, every terminator mix, cut at random boundaries', async () => {
    const arbitrary = fc
      .record({ model: csvModel(), encoding: fc.constantFrom(...ENCODINGS) })
      .chain(({ model, encoding }) => {
        const bytes = encode(model.text, encoding);
        return fc.record({ model: fc.constant(model), bytes: fc.constant(bytes), points: cuts(bytes.length) });
      });
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ model, bytes, points }) => checkCsv(model, splitAt(bytes, points))),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('balances at every single chunk boundary of generated files', async () => {
    const models = fc.sample(csvModel(), { numRuns: 25, seed: 11 });
    for (const model of models) {
      for (const encoding of ['utf-8 BOM', 'utf-16be BOM'] as const) {
        for (const chunks of everySplit(encode(model.text, encoding))) await checkCsv(model, chunks);
      }
    }
  });

  it('reads a classic Mac OS CSV (lone CR) and a header ending in CR before LF rows as rows, not one header', async () => {
    for (const text of ['id,name\r1,a\r2,b\r', 'id,name\r1,a\n2,b\n', 'id,name\r\n1,a\r2,b']) {
      const run = await normalizeChunks([Buffer.from(text)], InputFormat.CSV);
      expect(run.output, JSON.stringify(text)).toEqual(['{"id":"1","name":"a"}', '{"id":"2","name":"b"}']);
      expect(run.result).toMatchObject({ records: 2, quarantined: 0, header: 1, blank: 0 });
    }
  });
});

/** An NDJSON line with the outcome it must have (a reason, or the output line). */
type NdjsonLine = { readonly text: string; readonly output?: string; readonly reason?: string; readonly blank?: true };

const MAX_DEPTH = 8;
const ndjsonLine: fc.Arbitrary<NdjsonLine> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.object({ maxDepth: 2 }).map((value): NdjsonLine => {
      const text = JSON.stringify(value);
      return { text, output: JSON.stringify(JSON.parse(text)) };
    }),
  },
  { weight: 2, arbitrary: fc.constantFrom('', ' ', '\t ').map((text): NdjsonLine => ({ text, blank: true })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('{"a":', "{'a':1}", '{"a":1}}', 'not json', '{"a":1,}')
      .map((text): NdjsonLine => ({ text, reason: 'invalid JSON' })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(['[1,2]', 'array'], ['42', 'number'], ['"s"', 'string'], ['null', 'null'], ['true', 'boolean'])
      .map(([text, kind]): NdjsonLine => ({ text, reason: `expected a JSON object, got ${kind}` })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: MAX_DEPTH, max: 40 }).map(
      (depth): NdjsonLine => ({
        text: `{"deep":${'['.repeat(depth)}${']'.repeat(depth)}}`,
        reason: `nested deeper than ${MAX_DEPTH} levels`,
      }),
    ),
  },
);

describe('accounting invariant: every NDJSON line is counted exactly once (fast-check)', () => {
  it('balances on generated files in every encoding, every terminator mix, cut at random boundaries', async () => {
    const file = fc
      .record({
        lines: fc.array(ndjsonLine, { maxLength: 12 }),
        terminators: fc.array(fc.constantFrom(...TERMINATORS), { minLength: 12, maxLength: 12 }),
        finalTerminator: fc.boolean(),
        encoding: fc.constantFrom(...ENCODINGS),
      })
      .map(({ lines, terminators, finalTerminator, encoding }) => {
        const terms = lines.map((_, i) => (i === lines.length - 1 && !finalTerminator ? '' : (terminators[i] ?? '\n')));
        // A CR then an empty line ending in LF reads as one CRLF: the generator does not write that.
        for (let i = lines.length - 1; i > 0; i--) {
          if (terms[i - 1] === '\r' && lines[i]?.text === '' && terms[i]?.startsWith('\n')) terms[i - 1] = '\n';
        }
        let text = '';
        const expected = { output: [] as string[], quarantine: [] as [number, string][], blank: 0 };
        for (const [i, line] of lines.entries()) {
          const last = i === lines.length - 1;
          const terminator = terms[i] ?? '';
          if (!(last && terminator === '' && line.text === '')) {
            if (line.blank) expected.blank += 1;
            else if (line.reason) expected.quarantine.push([i + 1, line.reason]);
            else expected.output.push(line.output ?? '');
          }
          text += line.text + terminator;
        }
        return { bytes: encode(text, encoding), expected };
      })
      .chain((f) => fc.record({ file: fc.constant(f), points: cuts(f.bytes.length) }));

    await fc.assert(
      fc.asyncProperty(file, async ({ file: { bytes, expected }, points }) => {
        const run = await normalizeChunks(splitAt(bytes, points), InputFormat.NDJSON, { maxNestingDepth: MAX_DEPTH });
        expect(run.output).toEqual(expected.output);
        expect(run.quarantine.map((q) => [q.line, q.reason])).toEqual(expected.quarantine);
        expect(run.result).toMatchObject({
          records: expected.output.length,
          quarantined: expected.quarantine.length,
          header: 0,
          blank: expected.blank,
        });
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});
