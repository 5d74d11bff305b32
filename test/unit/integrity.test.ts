import { describe, expect, it } from 'vitest';
import { judgeSummaryHead } from '../../app/partition/judgeSummaryHead.js';
import { buildSummaryMetadata } from '../../app/partition/summaryMetadata.js';
import { formatIntegrity, integrityProblem } from '../../src/done/integrity.js';
import { judgeOutput } from '../../src/done/judgeOutput.js';
import { buildOutputMetadata } from '../../src/done/outputMetadata.js';

const sha = 'LUsRiTIcdURfpnmx+yahvyjPzcyGGdGSzfNiBm1NQm0=';

describe('one integrity check for outputs and summaries', () => {
  it('checks the length and S3 stored SHA-256 of a single-part object and of a sealed multipart one', () => {
    const single = formatIntegrity({ kind: 'sha256', sha256Base64: sha, bytes: 1 });
    expect(single).toBe(`sha256:${sha}:1`);
    expect(integrityProblem(single, { contentLength: 1, checksumSHA256: sha })).toBeUndefined();
    expect(integrityProblem(single, { contentLength: 0, checksumSHA256: sha })).toMatch(/partial or overwritten/);
    expect(integrityProblem(single, { contentLength: 1 })).toMatch(/no stored SHA-256/);
    expect(integrityProblem(single, { contentLength: 1, checksumSHA256: 'other=' })).toMatch(/content was replaced/);
    const parts = formatIntegrity({
      kind: 'sha256-parts',
      sha256Base64: sha,
      compositeBase64: 'x=',
      parts: 2,
      bytes: 9,
    });
    expect(parts).toBe(`sha256-parts:${sha}:x=-2:9`);
    expect(integrityProblem(parts, { contentLength: 9, checksumSHA256: 'x=-2' })).toBeUndefined();
    expect(integrityProblem(parts, { contentLength: 9, checksumSHA256: sha })).toBeUndefined();
    expect(integrityProblem(parts, { contentLength: 9 })).toMatch(/no stored SHA-256/);
    expect(integrityProblem(parts, { contentLength: 8, checksumSHA256: 'x=-2' })).toMatch(/partial or overwritten/);
    const unsealed = formatIntegrity({ kind: 'unsealed' });
    expect(integrityProblem(unsealed, { contentLength: 9, checksumSHA256: 'x=-2' })).toMatch(/never sealed/);
    expect(integrityProblem('sha256:nope', { contentLength: 9, checksumSHA256: 'x=-2' })).toMatch(
      /unreadable integrity/,
    );
  });

  it('the output and the summary done-checks give the same reason for the same truncated object', () => {
    const source = { bucket: 'in', key: 'incoming/dt=2026-01-05/a.csv', etag: 'e1' };
    const truncated = { etag: 'o1', contentLength: 0, checksumSHA256: sha };
    const output = judgeOutput(
      {
        ...truncated,
        metadata: buildOutputMetadata({
          source,
          codeVersion: 'n@1',
          integrity: { kind: 'sha256', sha256Base64: sha, bytes: 1 },
        }),
      },
      { source, codeVersion: 'n@1' },
    );
    const summary = judgeSummaryHead(
      {
        ...truncated,
        metadata: buildSummaryMetadata({
          day: '2026-01-05',
          lineageHash: 'h',
          codeVersion: 's@1',
          sha256Base64: sha,
          bytes: 1,
        }),
      },
      { day: '2026-01-05', lineageHash: 'h', codeVersion: 's@1' },
    );
    const reason = integrityProblem(`sha256:${sha}:1`, truncated);
    expect(output).toMatchObject({ state: 'invalid', reason });
    expect(summary).toMatchObject({ state: 'invalid', reason });
  });
});
