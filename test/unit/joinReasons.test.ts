import { describe, expect, it } from 'vitest';
import { joinReasons } from '../../src/batch/joinReasons.js';

describe('joinReasons: the reason of a message with several S3 records', () => {
  it('names each distinct reason once, in the order first seen, with how many records gave it', () => {
    expect(joinReasons(['already done', 'output created: chars 3', 'already done'])).toBe(
      'already done (x2); output created: chars 3',
    );
  });

  it('keeps a single reason as it is', () => {
    expect(joinReasons(['output created: chars 15'])).toBe('output created: chars 15');
  });

  it('bounds a message of hundreds of records with distinct reasons, counting what it leaves out', () => {
    const reasons = Array.from(
      { length: 292 },
      (_, i) => `output created: rows ${i} of s3://in/incoming/file-${i}.csv`,
    );
    const joined = joinReasons(reasons);
    expect(joined.split('; ')).toHaveLength(11);
    expect(joined).toMatch(/; 282 other reason\(s\) of 282 record\(s\) not shown$/);
    expect(joined.length).toBeLessThan(1_000);
  });
});
