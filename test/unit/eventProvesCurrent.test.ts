import { describe, expect, it } from 'vitest';
import { eventProvesCurrent } from '../../src/done/eventProvesCurrent.js';
import { OutputState } from '../../src/done/judgeOutput.js';

const built = { state: OutputState.BUILT, etag: 'out1', sourceEtag: 'e1' } as const;

describe('eventProvesCurrent: when the HEAD alone decides "done" (docs/AWS-BEHAVIOUR.md, "The event\'s eTag")', () => {
  it('a built output whose source ETag is the event eTag is done without reading the input', () => {
    expect(eventProvesCurrent(built, { eTag: 'e1', versionId: 'v1' })).toBe(true);
  });

  it('a quoted event eTag compares by value', () => {
    expect(eventProvesCurrent(built, { eTag: '"e1"', versionId: 'v1' })).toBe(true);
  });

  it('an event of other content (older or newer than the output) needs the conditional GET', () => {
    expect(eventProvesCurrent(built, { eTag: 'e0', versionId: 'v0' })).toBe(false);
  });

  it('an event of a non-versioned bucket (no versionId) needs the conditional GET: S3 may send one event for two writes, naming either', () => {
    expect(eventProvesCurrent(built, { eTag: 'e1' })).toBe(false);
    expect(eventProvesCurrent(built, { eTag: 'e1', versionId: '' })).toBe(false);
    // Written while versioning was suspended: the null version, overwritten in place.
    expect(eventProvesCurrent(built, { eTag: 'e1', versionId: 'null' })).toBe(false);
  });

  it("a message of rerun's tools names the ETag its listing saw: no notification S3 could merge, so it decides", () => {
    expect(eventProvesCurrent(built, { eTag: 'e1', origin: 'rerun-reprocess' })).toBe(true);
    expect(eventProvesCurrent(built, { eTag: 'e0', origin: 'rerun-reprocess' })).toBe(false);
    // An address is S3's own origin: no versionId, no proof.
    expect(eventProvesCurrent(built, { eTag: 'e1', origin: '203.0.113.7' })).toBe(false);
  });

  it('an event without an eTag needs the conditional GET', () => {
    expect(eventProvesCurrent(built, { versionId: 'v1' })).toBe(false);
    expect(eventProvesCurrent(built, { eTag: '', versionId: 'v1' })).toBe(false);
  });

  it('a missing, invalid or old-code output is never done, whatever the event says', () => {
    expect(eventProvesCurrent({ state: OutputState.MISSING }, { eTag: 'e1', versionId: 'v1' })).toBe(false);
    expect(
      eventProvesCurrent(
        { state: OutputState.INVALID, etag: 'out1', reason: 'partial' },
        { eTag: 'e1', versionId: 'v1' },
      ),
    ).toBe(false);
    expect(
      eventProvesCurrent(
        { state: OutputState.OLD_CODE, etag: 'out1', reason: 'built by v0' },
        { eTag: 'e1', versionId: 'v1' },
      ),
    ).toBe(false);
  });
});
