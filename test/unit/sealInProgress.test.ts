import { describe, expect, it } from 'vitest';
import { formatIntegrity, UNSEALED_INTEGRITY } from '../../src/done/integrity.js';
import type { OutputHead } from '../../src/done/judgeOutput.js';
import { encodeSource, MetadataKey } from '../../src/done/outputMetadata.js';
import { unsealedWriter } from '../../src/done/sealInProgress.js';

const source = { bucket: 'in', key: 'incoming/big.csv' };
const completedAt = Date.UTC(2026, 11, 6, 12);
const timeoutMs = 900_000;

/** The HEAD of a multipart output completed at `completedAt` and not sealed yet, built by code 1 from ETag e1. */
function unsealed(overrides: Partial<OutputHead> = {}, metadata: Record<string, string> = {}): OutputHead {
  return {
    etag: 'out-1',
    contentLength: 12,
    lastModified: completedAt,
    metadata: {
      [MetadataKey.SOURCE]: encodeSource(source),
      [MetadataKey.SOURCE_ETAG]: 'e1',
      [MetadataKey.CODE_VERSION]: '1',
      [MetadataKey.INTEGRITY]: UNSEALED_INTEGRITY,
      ...metadata,
    },
    ...overrides,
  };
}

const expected = { source, codeVersion: '1', eventEtag: 'e1' };

describe('unsealedWriter: may a live writer still be sealing this output?', () => {
  it('yes, while less than one function timeout has passed since its LastModified', () => {
    expect(unsealedWriter(unsealed(), expected, completedAt + 1_000, timeoutMs)).toEqual({
      mayBeSealing: true,
      writerDeadAt: completedAt + timeoutMs,
      sameMessage: false,
    });
    expect(unsealedWriter(unsealed(), expected, completedAt + timeoutMs - 1, timeoutMs)?.mayBeSealing).toBe(true);
  });

  it('no, its writer must be dead, from one function timeout after its LastModified on', () => {
    expect(unsealedWriter(unsealed(), expected, completedAt + timeoutMs, timeoutMs)).toEqual({
      mayBeSealing: false,
      writerDeadAt: completedAt + timeoutMs,
      sameMessage: false,
    });
  });

  it("no, at once, when its writer was an earlier receive of this delivery's own SQS message (that receive has ended)", () => {
    const written = unsealed({}, { [MetadataKey.WRITER]: 'message-1' });
    expect(unsealedWriter(written, { ...expected, messageId: 'message-1' }, completedAt + 1_000, timeoutMs)).toEqual({
      mayBeSealing: false,
      writerDeadAt: completedAt + timeoutMs,
      sameMessage: true,
    });
  });

  it('yes, while young, for a delivery of another message, or one with no message id, or an output that names no writer', () => {
    const now = completedAt + 1_000;
    const written = unsealed({}, { [MetadataKey.WRITER]: 'message-1' });
    expect(unsealedWriter(written, { ...expected, messageId: 'message-2' }, now, timeoutMs)?.mayBeSealing).toBe(true);
    expect(unsealedWriter(written, expected, now, timeoutMs)?.mayBeSealing).toBe(true);
    expect(unsealedWriter(unsealed(), { ...expected, messageId: 'message-1' }, now, timeoutMs)?.mayBeSealing).toBe(
      true,
    );
  });

  it('an event without an eTag accepts the source ETag the output names', () => {
    expect(unsealedWriter(unsealed(), { source, codeVersion: '1' }, completedAt + 1_000, timeoutMs)?.mayBeSealing).toBe(
      true,
    );
  });

  it('nothing to wait for when the output is not an unsealed one this delivery would build the same way', () => {
    const now = completedAt + 1_000;
    const cases: [string, OutputHead | undefined, typeof expected][] = [
      ['no output', undefined, expected],
      ['no LastModified', unsealed({ lastModified: undefined }), expected],
      [
        'sealed',
        unsealed({}, { [MetadataKey.INTEGRITY]: formatIntegrity({ kind: 'sha256', sha256Base64: 'x', bytes: 12 }) }),
        expected,
      ],
      ['built by another code version', unsealed(), { ...expected, codeVersion: '2' }],
      ['built from other content than the event names', unsealed(), { ...expected, eventEtag: 'e2' }],
      [
        'of another input',
        unsealed({}, { [MetadataKey.SOURCE]: encodeSource({ bucket: 'in', key: 'other' }) }),
        expected,
      ],
      ['without a source ETag', unsealed({}, { [MetadataKey.SOURCE_ETAG]: '' }), expected],
    ];
    for (const [name, head, expectation] of cases) {
      expect(unsealedWriter(head, expectation, now, timeoutMs), name).toBeUndefined();
    }
  });
});
