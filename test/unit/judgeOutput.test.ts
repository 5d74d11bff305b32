import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { judgeOutput, type OutputHead, OutputState } from '../../src/done/judgeOutput.js';
import { buildOutputMetadata, MetadataKey, publishedSideOutputs, readSummary } from '../../src/done/outputMetadata.js';
import { WorkerConfigurationError } from '../../src/errors.js';

const body = Buffer.from('{"a":1}\n');
const sha = createHash('sha256').update(body).digest('base64');
const source = { bucket: 'in', key: 'incoming/café.csv', etag: 'e1' };
const expected = { source, codeVersion: 'v1' };
const goodHead = (over: Partial<OutputHead> = {}): OutputHead => ({
  etag: 'out1',
  contentLength: body.byteLength,
  checksumSHA256: sha,
  metadata: buildOutputMetadata({
    source,
    codeVersion: 'v1',
    integrity: { kind: 'sha256', sha256Base64: sha, bytes: body.byteLength },
    summary: { records: 1 },
  }),
  ...over,
});

describe('judgeOutput: the done-check decision', () => {
  it('a missing output is missing', () => {
    expect(judgeOutput(undefined, expected)).toEqual({ state: OutputState.MISSING });
  });

  it('a complete output of this code version is built, from the input ETag in its metadata', () => {
    expect(judgeOutput(goodHead(), expected)).toEqual({ state: OutputState.BUILT, etag: 'out1', sourceEtag: 'e1' });
    expect(readSummary(goodHead().metadata)).toEqual({ records: '1' });
  });

  it('an object without rerun metadata (foreign or crashed writer) is invalid', () => {
    const verdict = judgeOutput(goodHead({ metadata: {} }), expected);
    expect(verdict).toMatchObject({ state: OutputState.INVALID, reason: expect.stringMatching(/no rerun metadata/) });
  });

  it('an object missing any one of its source, source ETag, code version or integrity is invalid', () => {
    for (const key of [MetadataKey.SOURCE, MetadataKey.SOURCE_ETAG, MetadataKey.CODE_VERSION, MetadataKey.INTEGRITY]) {
      const metadata = { ...goodHead().metadata };
      delete metadata[key];
      expect(judgeOutput(goodHead({ metadata }), expected), key).toMatchObject({
        state: OutputState.INVALID,
        reason: expect.stringMatching(/no rerun metadata/),
      });
    }
  });

  it('a partial object (length differs from what was written) is invalid', () => {
    expect(judgeOutput(goodHead({ contentLength: 3 }), expected)).toMatchObject({
      state: OutputState.INVALID,
      reason: expect.stringMatching(/partial/),
    });
  });

  it('content replaced behind our back (stored checksum differs) is invalid', () => {
    const other = createHash('sha256').update('garbage').digest('base64');
    expect(judgeOutput(goodHead({ checksumSHA256: other }), expected)).toMatchObject({ state: OutputState.INVALID });
    expect(judgeOutput(goodHead({ checksumSHA256: undefined }), expected)).toMatchObject({
      state: OutputState.INVALID,
    });
  });

  it('an output built from another input is invalid', () => {
    const verdict = judgeOutput(goodHead(), { ...expected, source: { bucket: 'in', key: 'incoming/other.csv' } });
    expect(verdict).toMatchObject({ state: OutputState.INVALID, reason: expect.stringMatching(/another input/) });
  });

  it('an output of a versioned input records the version it was built from, and the verdict carries it', () => {
    const versioned = { ...source, versionId: 'v9' };
    const metadata = buildOutputMetadata({
      source: versioned,
      codeVersion: 'v1',
      integrity: { kind: 'sha256', sha256Base64: sha, bytes: body.byteLength },
    });
    expect(metadata[MetadataKey.SOURCE_VERSION]).toBe('v9');
    expect(judgeOutput(goodHead({ metadata }), expected)).toEqual({
      state: OutputState.BUILT,
      etag: 'out1',
      sourceEtag: 'e1',
      sourceVersionId: 'v9',
    });
    // An unversioned input's output has no version field at all.
    expect(Object.keys(goodHead().metadata)).not.toContain(MetadataKey.SOURCE_VERSION);
  });

  it('refuses a misspelt expectation (a validate that would never run) with a configuration error', () => {
    const misspelt = { ...expected, validation: () => 'never run' } as unknown as typeof expected;
    expect(() => judgeOutput(goodHead(), misspelt)).toThrow(WorkerConfigurationError);
  });

  it('an output of another code version is old-code', () => {
    expect(judgeOutput(goodHead(), { ...expected, codeVersion: 'v2' })).toMatchObject({ state: OutputState.OLD_CODE });
  });

  it('a multipart output is done only once sealed, and its stored checksum must be one of the digests it records', () => {
    const sealed = buildOutputMetadata({
      source,
      codeVersion: 'v1',
      integrity: { kind: 'sha256-parts', sha256Base64: 'whole=', compositeBase64: 'parts=', parts: 3, bytes: 99 },
    });
    // The copy that seals it keeps the composite value (with its part count, or without it as moto
    // returns it), or stores a new full-object SHA-256: all three describe exactly these bytes.
    for (const checksumSHA256 of ['parts=-3', 'parts=', 'whole=']) {
      expect(judgeOutput(goodHead({ metadata: sealed, contentLength: 99, checksumSHA256 }), expected).state).toBe(
        OutputState.BUILT,
      );
    }
    expect(
      judgeOutput(goodHead({ metadata: sealed, contentLength: 99, checksumSHA256: 'other=-3' }), expected),
    ).toMatchObject({ state: OutputState.INVALID, reason: expect.stringMatching(/content was replaced/) });
    expect(
      judgeOutput(goodHead({ metadata: sealed, contentLength: 98, checksumSHA256: 'parts=-3' }), expected).state,
    ).toBe(OutputState.INVALID);
    const unsealed = buildOutputMetadata({ source, codeVersion: 'v1', integrity: { kind: 'unsealed' } });
    expect(
      judgeOutput(goodHead({ metadata: unsealed, contentLength: 99, checksumSHA256: 'parts=-3' }), expected),
    ).toMatchObject({
      state: OutputState.INVALID,
      reason: expect.stringMatching(/never sealed/),
    });
  });

  it("runs the worker's own validation last", () => {
    const verdict = judgeOutput(goodHead(), { ...expected, validate: () => 'schema v1 lacks field x' });
    expect(verdict).toMatchObject({ state: OutputState.INVALID, reason: 'schema v1 lacks field x' });
  });

  it('keeps non-ASCII keys out of metadata values (S3 metadata is ASCII)', () => {
    expect(goodHead().metadata[MetadataKey.SOURCE]).toBe('in/incoming%2Fcaf%C3%A9.csv');
  });

  it('lists the side outputs published with an output by name and ETag (none, or unknown for multipart)', () => {
    const source = { bucket: 'in', key: 'incoming/a.csv', etag: 'e1' };
    const integrity = { kind: 'sha256', sha256Base64: 'x', bytes: 1 } as const;
    const withSide = buildOutputMetadata({ source, codeVersion: 'v1', integrity, sideOutputs: { quarantine: '9b2c' } });
    expect(withSide[MetadataKey.SIDE_OUTPUTS]).toBe('quarantine=9b2c');
    expect(publishedSideOutputs(withSide)).toEqual(new Map([['quarantine', '9b2c']]));
    const none = buildOutputMetadata({ source, codeVersion: 'v1', integrity, sideOutputs: {} });
    expect(publishedSideOutputs(none)).toEqual(new Map());
    expect(publishedSideOutputs(buildOutputMetadata({ source, codeVersion: 'v1', integrity }))).toBeUndefined();
    // No side output is written as `none` (a metadata value is never left empty), and read back as none.
    expect(none[MetadataKey.SIDE_OUTPUTS]).toBe('none');
    expect(publishedSideOutputs({ [MetadataKey.SIDE_OUTPUTS]: '' })).toEqual(new Map());
    const two = buildOutputMetadata({
      source,
      codeVersion: 'v1',
      integrity,
      sideOutputs: { quarantine: '9b2c', rejects: '77aa' },
    });
    expect(publishedSideOutputs(two)).toEqual(
      new Map([
        ['quarantine', '9b2c'],
        ['rejects', '77aa'],
      ]),
    );
    // Names without ETags (as earlier builds wrote them): known to exist, not checkable.
    expect(publishedSideOutputs({ [MetadataKey.SIDE_OUTPUTS]: 'quarantine' })).toEqual(new Map([['quarantine', '']]));
  });
});
