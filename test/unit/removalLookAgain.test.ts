import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_ALLOWANCE_MS } from '../../src/batch/clockSkew.js';
import {
  lookAgainBody,
  lookAgainDelaySeconds,
  lookAgainDueAt,
  lookAgainMessages,
  MAX_DELAY_SECONDS,
  planLookAgain,
} from '../../src/batch/removalLookAgain.js';
import { IntakeKind, parseS3EventBody } from '../../src/intake/parseS3Event.js';

describe('a removal looks again', () => {
  it('due two function timeouts after the delete: one for a build that read the input just before it, one as a margin', () => {
    expect(lookAgainDueAt('2026-12-04T10:00:00.000Z', 60_000)).toBe(Date.parse('2026-12-04T10:02:00.000Z'));
  });

  it('delayed by the whole seconds left, at most what SQS allows, and not at all once due', () => {
    const due = Date.parse('2026-12-04T10:02:00.000Z');
    expect(lookAgainDelaySeconds(due, Date.parse('2026-12-04T10:00:05.000Z'))).toBe(115);
    expect(lookAgainDelaySeconds(due, Date.parse('2026-12-04T10:01:59.500Z'))).toBe(1);
    expect(lookAgainDelaySeconds(due, due)).toBeUndefined();
    expect(lookAgainDelaySeconds(due + 3_600_000, due)).toBe(MAX_DELAY_SECONDS);
  });

  it('the event sent again reads as the same delete, with the time that fixes when it is due', () => {
    for (const key of ['incoming/a b.csv', 'incoming/1+1=2 café.csv', "incoming/odd!'()*~.csv"]) {
      const body = lookAgainBody({ bucket: 'in', key, eventName: 'ObjectRemoved:Delete' }, '2026-12-04T10:00:00.000Z');
      const intake = parseS3EventBody(body);
      expect(intake.kind).toBe(IntakeKind.OBJECTS);
      expect(intake.kind === IntakeKind.OBJECTS ? intake.objects : []).toEqual([
        expect.objectContaining({
          bucket: 'in',
          key,
          eventName: 'ObjectRemoved:Delete',
          eventTime: '2026-12-04T10:00:00.000Z',
        }),
      ]);
    }
  });

  it('looks again only for a delete whose eventTime lies within its window: not ahead of the clock beyond the skew allowance, not past due', () => {
    const now = Date.parse('2026-12-04T10:00:05.000Z');
    expect(planLookAgain('2026-12-04T10:00:00.000Z', now, 60_000)).toEqual({
      send: true,
      eventTime: '2026-12-04T10:00:00.000Z',
      delaySeconds: 115,
    });
    // Within the clock-skew allowance ahead: believed, due two timeouts after it.
    expect(planLookAgain(new Date(now + CLOCK_SKEW_ALLOWANCE_MS).toISOString(), now, 60_000)).toMatchObject({
      send: true,
      delaySeconds: 300 + 120,
    });
    expect(planLookAgain('2099-01-01T00:00:00.000Z', now, 60_000)).toEqual({
      send: false,
      note: expect.stringMatching(
        /^not looking again: its eventTime 2099-01-01T00:00:00.000Z is \d+ s ahead of this function's clock, beyond the 300 s allowed for clock skew/,
      ),
    });
    expect(planLookAgain('yesterday', now, 60_000)).toEqual({
      send: false,
      note: 'not looking again: its eventTime "yesterday" is not a time',
    });
    expect(planLookAgain('2026-12-04T09:58:05.000Z', now, 60_000)).toEqual({
      send: false,
      note: expect.stringMatching(/^no look again needed \(every build that read the input before the delete/),
    });
  });

  it('sends the look agains of one message as few messages as fit the body limit, each delayed to its latest due', () => {
    const pending = Array.from({ length: 500 }, (_, i) => ({
      object: { bucket: 'in', key: `incoming/${'k'.repeat(300)}-${i}.csv`, eventName: 'ObjectRemoved:Delete' },
      eventTime: '2026-12-04T10:00:00.000Z',
      delaySeconds: 100 + (i % 7),
    }));
    const messages = lookAgainMessages(pending);
    expect(messages.length).toBeGreaterThan(1);
    expect(messages.length).toBeLessThanOrEqual(2);
    const keys: string[] = [];
    for (const message of messages) {
      expect(Buffer.byteLength(message.body)).toBeLessThanOrEqual(200_000);
      expect(message.delaySeconds).toBe(106);
      const intake = parseS3EventBody(message.body);
      if (intake.kind !== IntakeKind.OBJECTS) throw new Error(`not an S3 event: ${JSON.stringify(intake)}`);
      expect(intake.objects).toHaveLength(message.records);
      keys.push(...intake.objects.map((o) => o.key));
    }
    expect(keys).toEqual(pending.map((p) => p.object.key));
  });
});
