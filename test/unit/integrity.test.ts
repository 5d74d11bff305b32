import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { judgeSummaryHead } from '../../app/partition/judgeSummaryHead.js';
import { buildSummaryMetadata } from '../../app/partition/summaryMetadata.js';
import { formatIntegrity, integrityProblem, recordedSha256 } from '../../src/done/integrity.js';
import { judgeOutput } from '../../src/done/judgeOutput.js';
import { buildOutputMetadata, encodeSource } from '../../src/done/outputMetadata.js';
import { retryableOf, WorkerConfigurationError } from '../../src/errors.js';

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

  it('reads only a whole integrity value: anything before or after its fields makes it unreadable', () => {
    const single = `sha256:${sha}:1`;
    const parts = `sha256-parts:${sha}:x=-2:9`;
    const head = { contentLength: 1, checksumSHA256: sha };
    for (const value of [`x${single}`, `${single}x`]) {
      expect(integrityProblem(value, head), value).toMatch(/unreadable integrity/);
    }
    for (const value of [`x${parts}`, `${parts}x`]) {
      expect(integrityProblem(value, { contentLength: 9, checksumSHA256: 'x=-2' }), value).toMatch(
        /unreadable integrity/,
      );
    }
  });

  it('accepts a sealed upload of ten or more parts, its composite checksum stored with or without the count', () => {
    const parts = formatIntegrity({
      kind: 'sha256-parts',
      sha256Base64: sha,
      compositeBase64: 'x=',
      parts: 12,
      bytes: 9,
    });
    expect(integrityProblem(parts, { contentLength: 9, checksumSHA256: 'x=-12' })).toBeUndefined();
    expect(integrityProblem(parts, { contentLength: 9, checksumSHA256: 'x=' })).toBeUndefined();
    expect(integrityProblem(parts, { contentLength: 9, checksumSHA256: 'y=-12' })).toMatch(/content was replaced/);
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

describe('what an integrity value records, and the source an output names', () => {
  it('reads the whole-content SHA-256 of a single-part or sealed value, and none from an unsealed or unreadable one', () => {
    expect(recordedSha256(formatIntegrity({ kind: 'sha256', sha256Base64: sha, bytes: 3 }))).toBe(sha);
    expect(
      recordedSha256(
        formatIntegrity({ kind: 'sha256-parts', sha256Base64: sha, compositeBase64: 'x=', parts: 2, bytes: 9 }),
      ),
    ).toBe(sha);
    expect(recordedSha256(formatIntegrity({ kind: 'unsealed' }))).toBeUndefined();
    expect(recordedSha256(`sha256:${sha}`)).toBeUndefined();
    expect(recordedSha256(undefined)).toBeUndefined();
  });

  it('names a source too long for S3 metadata by the SHA-256 of its bucket and raw key, distinct per key', () => {
    const short = { bucket: 'in', key: 'incoming/café.csv' };
    expect(encodeSource(short)).toBe('in/incoming%2Fcaf%C3%A9.csv');
    // 600 characters of key: past the 512 the readable form may take.
    const long = { bucket: 'in', key: `incoming/${'a'.repeat(591)}` };
    const other = { bucket: 'in', key: `incoming/${'a'.repeat(590)}b` };
    const hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
    expect(encodeSource(long)).toBe(`sha256:${hex(`in/${long.key}`)}`);
    expect(encodeSource(other)).toBe(`sha256:${hex(`in/${other.key}`)}`);
    expect(encodeSource(long)).not.toBe(encodeSource(other));
    // Exactly 512 readable characters stay readable.
    const edge = { bucket: 'in', key: 'k'.repeat(509) };
    expect(encodeSource(edge)).toBe(`in/${edge.key}`);
  });

  it('refuses a summary field whose name S3 metadata would not keep as written', () => {
    const source = { bucket: 'in', key: 'a.csv', etag: 'e' };
    const integrity = { kind: 'unsealed' } as const;
    const built = buildOutputMetadata({ source, codeVersion: 'v1', integrity, summary: { 'bad-rows-2': 3 } });
    expect(built['rerun-x-bad-rows-2']).toBe('3');
    for (const name of ['records!', 'records.total']) {
      expect(
        () => buildOutputMetadata({ source, codeVersion: 'v1', integrity, summary: { [name]: 1 } }),
        name,
      ).toThrow();
    }
    expect(() => buildOutputMetadata({ source, codeVersion: 'v1', integrity, summary: { Records: 1 } })).toThrow(
      `summary field "Records" must be lower-case letters, digits, '-'`,
    );
    // The worker's own code returns it, so every input would fail alike: not retried.
    let thrown: unknown;
    try {
      buildOutputMetadata({ source, codeVersion: 'v1', integrity, summary: { Records: 1 } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(WorkerConfigurationError);
    expect(retryableOf(thrown)).toBe(false);
  });
});
