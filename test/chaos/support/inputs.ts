import type { Prng } from './prng.js';

/** One input file of a chaos scenario. */
export interface ChaosInput {
  /** Key in the input bucket (under `incoming/` unless the scenario tests the prefix filter). */
  readonly key: string;
  readonly body: string;
}

const NAMES = ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Edsger Dijkstra', 'Barbara Liskov', 'Ken "K" Thompson'];
/**
 * The days the inputs are spread over (`incoming/dt=D/...`), which the summary stage summarizes.
 * The window starts a day early: a day without inputs still gets its (empty) summary.
 */
export const CHAOS_DAYS = ['2026-01-05', '2026-01-06', '2026-01-07'] as const;
export const CHAOS_WINDOW = { from: '2026-01-04', to: '2026-01-07' } as const;

/** Partitioned directories (most inputs) and others that belong to no partition. */
const DIRECTORIES = [
  'dt=2026-01-05/',
  'dt=2026-01-05/',
  'dt=2026-01-06/2026 sales+returns/',
  'dt=2026-01-06/',
  'dt=2026-01-07/café münchen/',
  'dt=2026-01-07/a/b/c/',
  '',
  'daily/',
];

/**
 * Seeded input files: clean and bad-row CSVs, NDJSON with bad lines, awkward keys (spaces, `+`,
 * non-ASCII), an empty file and an unsupported `.txt` (skipped by the worker, no output expected).
 * Most are under a day's partition ({@link CHAOS_DAYS}), some under no partition.
 * With `onlyValid`, only clean CSV and NDJSON files (one output each, no quarantine).
 *
 * @example
 * const inputs = generateInputs(createPrng(1).fork('inputs'), 20);
 */
export function generateInputs(
  rng: Prng,
  count: number,
  options: { bytes?: number; onlyValid?: boolean } = {},
): ChaosInput[] {
  const inputs: ChaosInput[] = [];
  for (let i = 0; i < count; i++) {
    const directory = rng.pick(DIRECTORIES);
    const kind = options.onlyValid
      ? rng.pick(['csv', 'ndjson'])
      : i === 0
        ? 'empty'
        : i === 1
          ? 'txt'
          : rng.pick(['csv', 'csv', 'csv-bad', 'ndjson', 'ndjson-bad']);
    const stem = `${directory}file ${String(i).padStart(3, '0')}`;
    switch (kind) {
      case 'empty':
        inputs.push({ key: `incoming/${stem}.csv`, body: '' });
        break;
      case 'txt':
        inputs.push({ key: `incoming/${stem}.txt`, body: 'not a data file\n' });
        break;
      case 'ndjson':
      case 'ndjson-bad':
        inputs.push({ key: `incoming/${stem}.ndjson`, body: ndjsonBody(rng, kind === 'ndjson-bad', options.bytes) });
        break;
      default:
        inputs.push({ key: `incoming/${stem}.csv`, body: csvBody(rng, kind === 'csv-bad', options.bytes) });
    }
  }
  return inputs;
}

/**
 * New content for an input that is overwritten during a run: same format, other rows, and the
 * bad-row status flipped (so a quarantine side output appears or must disappear).
 *
 * @example
 * const next = rewriteInput(rng, input);
 */
export function rewriteInput(rng: Prng, input: ChaosInput): ChaosInput {
  const hadBadRows = /broken|\{"unterminated/.test(input.body);
  if (input.key.endsWith('.ndjson')) return { key: input.key, body: ndjsonBody(rng, !hadBadRows) };
  if (input.key.endsWith('.csv')) return { key: input.key, body: csvBody(rng, !hadBadRows) };
  return { key: input.key, body: `${input.body}rewritten\n` };
}

/**
 * A CSV big enough to take the multipart path of the output writer (`bytes` of input).
 *
 * @example
 * const big = largeCsv(9 * 1024 * 1024); // normalized output is larger than the 8 MiB part size
 */
export function largeCsv(bytes: number): string {
  const rows = ['id,customer,amount'];
  let size = rows[0]?.length ?? 0;
  for (let i = 1; size < bytes; i++) {
    const row = i % 5000 === 0 ? `${i},broken` : `${i},customer ${i},${(i * 7) % 1000}.50`;
    rows.push(row);
    size += row.length + 1;
  }
  return `${rows.join('\n')}\n`;
}

function csvBody(rng: Prng, bad: boolean, bytes?: number): string {
  if (bytes && bytes > 4096) return largeCsv(bytes);
  const rows = ['id,customer,amount'];
  const count = rng.int(3, 40);
  for (let r = 1; r <= count; r++) {
    const name = rng.pick(NAMES).replace(/"/g, '""');
    rows.push(`${r},"${name}",${rng.int(1, 9999)}.${String(rng.int(0, 99)).padStart(2, '0')}`);
    if (bad && rng.chance(0.2)) rows.push(`${r}b,broken`);
  }
  if (bad) rows.push('999,broken,row,with,too,many,fields');
  return `${rows.join('\n')}\n`;
}

function ndjsonBody(rng: Prng, bad: boolean, bytes?: number): string {
  const lines: string[] = [];
  const count = bytes ? Math.ceil(bytes / 60) : rng.int(3, 40);
  for (let r = 1; r <= count; r++) {
    lines.push(JSON.stringify({ id: r, user: rng.pick(NAMES), amount: rng.int(1, 99_999) / 100 }));
    if (bad && rng.chance(0.2)) lines.push('{"unterminated": ');
  }
  if (bad) lines.push('{"unterminated": ');
  return `${lines.join('\n')}\n`;
}
