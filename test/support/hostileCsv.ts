import fc from 'fast-check';

/**
 * A generated CSV file together with the ground truth of what the normalizer must make of it: the
 * test knows where every physical record starts and where it must end up, independently of the
 * parser. Used by the accounting property tests and the hostile corpus.
 */
export interface CsvModel {
  /** The file's text (no BOM: encodings are applied by the caller). */
  readonly text: string;
  readonly expected: {
    readonly records: number;
    readonly quarantined: number;
    readonly header: number;
    readonly blank: number;
    /** The output lines, in order. */
    readonly output: readonly string[];
    /** `[line, reason]` of each quarantine entry, in order. */
    readonly quarantine: readonly (readonly [number, string])[];
  };
}

/** The record terminators a real uploader writes: Unix, Windows, classic Mac OS. */
export const TERMINATORS = ['\n', '\r\n', '\r'] as const;

type Field = { readonly text: string; readonly value: string };
type Item =
  | { readonly kind: 'row'; readonly fields: readonly Field[] }
  | { readonly kind: 'blank'; readonly text: string }
  | { readonly kind: 'afterQuote'; readonly fields: readonly Field[] };

const plainChar = fc.constantFrom('a', 'b', 'Z', '7', ' ', 'é', '😀', '温', '\t', ';', "'");
const quotedChar = fc.constantFrom('a', ',', '""', '\n', '\r', '\r\n', ' ', 'ü', '😀', ';', '\t');

/** An unquoted field: never starts with `"`, holds no `,` CR or LF. */
const unquotedField = fc
  .array(plainChar, { maxLength: 6 })
  .map((chars): Field => ({ text: chars.join(''), value: chars.join('') }));
/** A quoted field: may hold commas, doubled quotes and line breaks of every kind. */
const quotedField = fc.array(quotedChar, { maxLength: 6 }).map((parts): Field => {
  const inner = parts.join('');
  return { text: `"${inner}"`, value: inner.replace(/""/g, '"') };
});
const field = fc.oneof({ weight: 3, arbitrary: unquotedField }, { weight: 2, arbitrary: quotedField });

const HEADER_NAMES = ['id', 'name', 'city', 'note'] as const;

/**
 * Arbitrary CSV files with their ground truth: blank lines (before the header too), good rows, rows
 * with the wrong field count, text after a closing quote, an unterminated quote at the very end, every
 * terminator and mixtures of them, a final record with or without a terminator.
 *
 * @example
 * fc.assert(fc.property(csvModel(), (model) => { ... }));
 */
export function csvModel(): fc.Arbitrary<CsvModel> {
  return fc.integer({ min: 1, max: 4 }).chain((columns) => {
    const names = HEADER_NAMES.slice(0, columns);
    const row = fc.array(field, { minLength: columns, maxLength: columns });
    const wrongCount = fc.array(field, { minLength: columns + 1, maxLength: columns + 2 });
    const shortRow = columns > 1 ? fc.array(field, { minLength: 1, maxLength: columns - 1 }) : wrongCount;
    const item: fc.Arbitrary<Item> = fc.oneof(
      { weight: 6, arbitrary: row.map((fields): Item => ({ kind: 'row', fields })) },
      { weight: 1, arbitrary: fc.oneof(wrongCount, shortRow).map((fields): Item => ({ kind: 'row', fields })) },
      { weight: 2, arbitrary: fc.constantFrom('', ' ', '\t', '  ').map((text): Item => ({ kind: 'blank', text })) },
      { weight: 1, arbitrary: row.map((fields): Item => ({ kind: 'afterQuote', fields })) },
    );
    return fc
      .record({
        leadingBlanks: fc.array(fc.constantFrom('', ' '), { maxLength: 2 }),
        quotedHeader: fc.boolean(),
        items: fc.array(item, { maxLength: 12 }),
        terminators: fc.array(fc.constantFrom(...TERMINATORS), { minLength: 16, maxLength: 16 }),
        finalTerminator: fc.boolean(),
        unterminatedTail: fc.boolean(),
      })
      .map((spec) => buildCsv(names, spec));
  });
}

function buildCsv(
  names: readonly string[],
  spec: {
    leadingBlanks: string[];
    quotedHeader: boolean;
    items: Item[];
    terminators: string[];
    finalTerminator: boolean;
    unterminatedTail: boolean;
  },
): CsvModel {
  const header = spec.quotedHeader ? names.map((n) => `"${n.toUpperCase()}"`).join(',') : names.join(',');
  type Planned = { text: string; outcome: 'header' | 'blank' | 'output' | string; output?: string };
  const planned: Planned[] = [];
  for (const text of spec.leadingBlanks) planned.push({ text, outcome: 'blank' });
  planned.push({ text: header, outcome: 'header' });
  for (const item of spec.items) {
    if (item.kind === 'blank') {
      // A single-column row whose only field is blank is a blank record too: the generator avoids the ambiguity.
      planned.push({ text: item.text, outcome: 'blank' });
    } else if (item.kind === 'afterQuote') {
      const fields = item.fields.map((f) => f.text);
      fields[0] = `"x"y${fields[0]?.startsWith('"') ? '' : fields[0]}`;
      planned.push({ text: fields.join(','), outcome: 'unexpected text after the closing quote of field 1' });
    } else {
      const text = item.fields.map((f) => f.text).join(',');
      if (
        item.fields.length === 1 &&
        !item.fields[0]?.text.startsWith('"') &&
        (item.fields[0]?.value.trim() ?? '') === ''
      ) {
        planned.push({ text, outcome: 'blank' });
      } else if (item.fields.length !== names.length) {
        planned.push({ text, outcome: `expected ${names.length} fields, got ${item.fields.length}` });
      } else {
        const values = item.fields.map((f) => f.value.trim());
        const json = `{${names.map((n, i) => `${JSON.stringify(n)}:${values[i] === '' ? 'null' : JSON.stringify(values[i])}`).join(',')}}`;
        planned.push({ text, outcome: 'output', output: json });
      }
    }
  }
  if (spec.unterminatedTail)
    planned.push({ text: '"never closed,\nstill open', outcome: 'unterminated quoted field at end of input' });

  const lastIndex = planned.length - 1;
  // The unterminated tail swallows everything after it; a final record may have no terminator.
  const terms = planned.map((_, i) =>
    i === lastIndex && (spec.unterminatedTail || !spec.finalTerminator)
      ? ''
      : (spec.terminators[i % spec.terminators.length] ?? '\n'),
  );
  // A CR followed by an empty record ending in LF reads as one CRLF: never write that. Backwards, so a
  // change cannot create the same pattern one record earlier unnoticed.
  for (let i = planned.length - 1; i > 0; i--) {
    if (terms[i - 1] === '\r' && planned[i]?.text === '' && terms[i]?.startsWith('\n')) terms[i - 1] = '\n';
  }
  let text = '';
  let line = 1;
  const expected = {
    records: 0,
    quarantined: 0,
    header: 0,
    blank: 0,
    output: [] as string[],
    quarantine: [] as [number, string][],
  };
  for (const [i, record] of planned.entries()) {
    const isLast = i === lastIndex;
    const terminator = terms[i] ?? '';
    // A trailing blank record with no terminator and no text is no record at all.
    const exists = !(isLast && terminator === '' && record.text === '');
    if (exists) {
      if (record.outcome === 'header') expected.header += 1;
      else if (record.outcome === 'blank') expected.blank += 1;
      else if (record.outcome === 'output') {
        expected.records += 1;
        expected.output.push(record.output ?? '');
      } else {
        expected.quarantined += 1;
        expected.quarantine.push([line, record.outcome]);
      }
    }
    text += record.text + terminator;
    line += lineBreaks(record.text) + (terminator === '' ? 0 : 1);
  }
  return { text, expected };
}

/** Line breaks inside a record's text (quoted data): CRLF, CR and LF each count one. */
function lineBreaks(text: string): number {
  return (text.match(/\r\n|\r|\n/g) ?? []).length;
}

/** Cut positions for a text of `length` bytes: every chunk boundary the property explores. */
export function cuts(length: number): fc.Arbitrary<number[]> {
  return fc
    .array(fc.integer({ min: 0, max: Math.max(0, length) }), { maxLength: 4 })
    .map((points) => [...new Set(points)].sort((a, b) => a - b));
}

/** `data` cut at the given positions. */
export function splitAt(data: Uint8Array, points: readonly number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(data.subarray(from, point));
    from = point;
  }
  chunks.push(data.subarray(from));
  return chunks;
}
