import { describe, expect, it } from 'vitest';
import {
  OUTPUT_NOTIFICATION_KEY_PREFIX,
  OutputNotificationInputError,
  outputNotificationBody,
  outputNotificationIdentity,
  outputNotificationKey,
  type PublishedOutput,
} from '../../src/notify/outputNotification.js';

const output: PublishedOutput = {
  bucket: 'rerun-output',
  key: 'normalized/a.ndjson',
  sha256: 'a'.repeat(64),
  records: 10,
  quarantined: 1,
  codeVersion: 'normalize@1',
  source: { bucket: 'rerun-input', key: 'incoming/a.csv', etag: '"e1"' },
};

describe('output notification dedupe key', () => {
  it('is deterministic and header-safe', () => {
    const key = outputNotificationKey(output);
    expect(key).toBe(outputNotificationKey({ ...output, source: { ...output.source } }));
    expect(key).toMatch(new RegExp(`^${OUTPUT_NOTIFICATION_KEY_PREFIX}[0-9a-f]{64}$`));
  });

  it('changes with the output location, its content or the code version', () => {
    const key = outputNotificationKey(output);
    expect(outputNotificationKey({ ...output, sha256: 'b'.repeat(64) })).not.toBe(key);
    expect(outputNotificationKey({ ...output, key: 'normalized/b.ndjson' })).not.toBe(key);
    expect(outputNotificationKey({ ...output, bucket: 'other' })).not.toBe(key);
    expect(outputNotificationKey({ ...output, codeVersion: 'normalize@2' })).not.toBe(key);
  });

  it('does not change when only descriptive fields differ (same output bytes from a touched input)', () => {
    const key = outputNotificationKey(output);
    expect(outputNotificationKey({ ...output, source: { ...output.source, etag: '"e2"' } })).toBe(key);
    expect(outputNotificationIdentity(output)).toEqual({
      bucket: output.bucket,
      key: output.key,
      sha256: output.sha256,
      codeVersion: output.codeVersion,
    });
  });
});

describe('output notification body', () => {
  it('describes the output, its source and carries the dedupe key, with no send time', () => {
    expect(outputNotificationBody(output)).toEqual({
      type: 'rerun.output.published',
      schemaVersion: 1,
      dedupeKey: outputNotificationKey(output),
      output: {
        bucket: 'rerun-output',
        key: 'normalized/a.ndjson',
        sha256: 'a'.repeat(64),
        records: 10,
        quarantined: 1,
      },
      source: { bucket: 'rerun-input', key: 'incoming/a.csv', etag: '"e1"' },
      codeVersion: 'normalize@1',
    });
    expect(JSON.stringify(outputNotificationBody(output))).toBe(JSON.stringify(outputNotificationBody(output)));
  });

  it('rejects an incomplete description with a named terminal error', () => {
    expect(() => outputNotificationBody({ ...output, sha256: '' })).toThrow(OutputNotificationInputError);
    expect(() => outputNotificationKey({ ...output, records: -1 })).toThrow(/records/);
    const error = (() => {
      try {
        outputNotificationKey({ ...output, codeVersion: '' });
      } catch (e) {
        return e as OutputNotificationInputError;
      }
    })();
    expect(error?.retryable).toBe(false);
  });
});
