import { describe, expect, it } from 'vitest';
import {
  lookAgainBody,
  lookAgainDelaySeconds,
  lookAgainDueAt,
  MAX_DELAY_SECONDS,
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
});
