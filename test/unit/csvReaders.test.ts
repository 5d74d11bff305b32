import { describe, expect, it } from 'vitest';
import { BAD_THEN_VALID, validRowsWithCsvParse, validRowsWithRerun } from '../../bench/csvReaders.js';

// The behaviour the README's FAQ cites as a reason for rerun's own CSV reader (its speed is a bench
// figure: `npm run bench -- --only csv`).
describe('CSV readers after a bad record', () => {
  it('rerun keeps both valid rows that follow a record with text after its closing quote', () => {
    expect(validRowsWithRerun(BAD_THEN_VALID)).toBe(2);
  });

  it('csv-parse, even told to skip records with errors, loses the valid rows after it', () => {
    expect(validRowsWithCsvParse(BAD_THEN_VALID)).toBe(0);
  });
});
