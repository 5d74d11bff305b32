import { describe, expect, it } from 'vitest';
import { partitionScheme } from '../../src/partitions/partitionScheme.js';
import {
  parseWindowTaskMessage,
  scheduledWindowTaskBody,
  windowTaskMessage,
} from '../../src/window/windowTaskMessage.js';

const schemes = {
  hourly: partitionScheme({ kind: 'time', grain: 'hourly', template: 'dt={yyyy}-{MM}-{dd}/hour={HH}' }),
  daily: partitionScheme({ kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' }),
  weekly: partitionScheme({ kind: 'time', grain: 'weekly', template: 'week={yyyy}-W{ww}' }),
  monthly: partitionScheme({ kind: 'time', grain: 'monthly', template: 'month={yyyy}-{MM}' }),
};

describe('window task messages', () => {
  it('one window by name: one FIFO group per window, deduplicated by window unless a token says otherwise', () => {
    expect(windowTaskMessage({ stage: 'daily', window: '2026-12-05' })).toEqual({
      body: '{"type":"rerun.window","version":1,"stage":"daily","window":"2026-12-05"}',
      groupId: 'daily/2026-12-05',
      deduplicationId: 'daily/2026-12-05',
    });
    expect(windowTaskMessage({ stage: 'daily', window: '2026-12-05', token: 'r1' }).deduplicationId).toBe(
      'daily/2026-12-05:r1',
    );
    expect(() => windowTaskMessage({ stage: 'daily', window: 'closed' })).toThrow(/names a stage and a window/);
  });

  it('round-trips through the parser of its stage', () => {
    const { body } = windowTaskMessage({ stage: 'daily', window: schemes.daily.parseWindow('2026-12-05') });
    expect(parseWindowTaskMessage(body, { stage: 'daily', scheme: schemes.daily })).toMatchObject({
      kind: 'task',
      window: { name: '2026-12-05' },
    });
  });

  it.each([
    ['hourly', '2026-12-06T00:05:00Z', '2026-12-05T23'],
    ['daily', '2026-12-06T00:15:00Z', '2026-12-05'],
    ['weekly', '2026-12-07T00:15:00Z', '2026-W49'],
    ['monthly', '2027-01-01T00:15:00Z', '2026-12'],
  ] as const)('a scheduled %s message names the window that closed last before its time', (grain, at, name) => {
    const body = JSON.stringify(scheduledWindowTaskBody(grain, at));
    expect(parseWindowTaskMessage(body, { stage: grain, scheme: schemes[grain] })).toMatchObject({
      kind: 'task',
      window: { name },
      origin: `closed before ${at}`,
    });
  });

  it('without "at", a scheduled message is read at its SentTimestamp, never at the reader\'s clock', () => {
    const body = JSON.stringify({ type: 'rerun.window', version: 1, stage: 'daily', window: 'closed' });
    const sent = Date.parse('2026-12-06T03:00:00Z');
    expect(
      parseWindowTaskMessage(body, { stage: 'daily', scheme: schemes.daily, sentTimestampMs: sent }),
    ).toMatchObject({
      kind: 'task',
      window: { name: '2026-12-05' },
    });
    expect(parseWindowTaskMessage(body, { stage: 'daily', scheme: schemes.daily })).toEqual({
      kind: 'invalid',
      reason: 'window "closed" needs "at" or the message SentTimestamp',
    });
  });

  it.each([
    ['not json', /body is not a JSON object/],
    ['[]', /body is not a JSON object/],
    ['{"type":"summarize","partition":"dt=2026-12-05"}', /type is "summarize"/],
    ['{"type":"rerun.window","version":2,"stage":"daily","window":"2026-12-05"}', /version 2/],
    ['{"type":"rerun.window","version":1,"stage":"other","window":"2026-12-05"}', /stage "other", not "daily"/],
    ['{"type":"rerun.window","version":1,"stage":"daily"}', /names its "window"/],
    ['{"type":"rerun.window","version":1,"stage":"daily","window":"2026-02-30"}', /"2026-02-30" is not one of/],
    ['{"type":"rerun.window","version":1,"stage":"daily","window":"closed","at":"soon"}', /"soon" is not a time/],
  ])('refuses %s by name', (body, reason) => {
    const parsed = parseWindowTaskMessage(body, { stage: 'daily', scheme: schemes.daily });
    expect(parsed.kind).toBe('invalid');
    expect(parsed.kind === 'invalid' ? parsed.reason : '').toMatch(reason);
  });

  it('refuses "closed" for a stage that is not partitioned by time', () => {
    const scheme = partitionScheme({ kind: 'static', keys: ['eu', 'us'] });
    const body = JSON.stringify(scheduledWindowTaskBody('regions', '2026-12-06T00:15:00Z'));
    expect(parseWindowTaskMessage(body, { stage: 'regions', scheme })).toEqual({
      kind: 'invalid',
      reason: 'window "closed" needs a stage partitioned by time; "regions" is static',
    });
  });
});
