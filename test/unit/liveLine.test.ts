import { describe, expect, it } from 'vitest';
import { fitLine, liveLine } from '../../app/cli/liveLine.js';
import { renderProgressBar } from '../../app/common/progressBar.js';

describe('a progress line redrawn in place fits the terminal', () => {
  // The backfill's waiting line as it was drawn at 80 columns: 107 characters, so it wrapped and each
  // redraw left a stale copy on the row above.
  const line =
    `${renderProgressBar(12, 30)} published | queued 14, in flight 4, dead-lettered 1 | 127 s` +
    ' | and some more text';

  it('is cut to one column less than the terminal, its last character an ellipsis', () => {
    const fitted = fitLine(line, 80);
    expect([...fitted]).toHaveLength(79);
    expect(fitted.endsWith('…')).toBe(true);
    expect(line.startsWith(fitted.slice(0, -1))).toBe(true);
  });

  it('is left as it is when it fits, or when the width is unknown (not a terminal)', () => {
    expect(fitLine('enqueued [###] 3/3 (100%)', 80)).toBe('enqueued [###] 3/3 (100%)');
    expect(fitLine(line, undefined)).toBe(line);
  });

  it('counts characters, not UTF-16 units, so a cut never splits a surrogate pair', () => {
    expect(fitLine('ab😀cdef', 5)).toBe('ab😀…');
  });

  it('returns to the start of the line and erases it before drawing', () => {
    expect(liveLine('x', 80)).toBe('\r\x1b[2Kx');
  });
});
