import { describe, expect, it } from 'vitest';
import { stageInputGroup } from '../../app/ui/stageInputDays.js';
import { dayGroup, stageInputLayout } from '../../app/ui/stageInputLayout.js';

describe("stageInputLayout: how the console groups a user's object stage's inputs", () => {
  it('groups by day a template whose windows fall within days, listing one prefix per day', () => {
    const hourly = stageInputLayout('clean', 'incoming/', {
      kind: 'time',
      grain: 'hourly',
      template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}',
    });
    if (hourly.kind !== 'days') throw new Error(`expected days, got ${JSON.stringify(hourly)}`);
    const day = dayGroup(hourly, 'incoming/', '2026-12-05');
    expect(day.ranges).toEqual([{ prefix: 'incoming/year=2026/month=12/day=05/hour=' }]);
    expect(day.holds?.('incoming/year=2026/month=12/day=05/hour=13/a.json')).toBe(true);
    // Under the day's prefix, but in no hour of the template.
    expect(day.holds?.('incoming/year=2026/month=12/day=05/hour=xx/a.json')).toBe(false);
    const flatDays = stageInputLayout('clean', 'incoming/', {
      kind: 'time',
      grain: 'daily',
      template: '{yyyy}/{MM}/{dd}',
    });
    expect(flatDays.kind).toBe('days');
  });

  it('says why it cannot group by day: no partitions, named ones, or weeks and months', () => {
    expect(stageInputLayout('upper', 'incoming/', undefined)).toEqual({
      kind: 'all',
      note: 'stage "upper" declares no time partitions: its inputs under incoming/ are shown as one group, all inputs, not by day',
    });
    expect(stageInputLayout('upper', 'incoming/', { kind: 'none' }).kind).toBe('all');
    const regions = stageInputLayout('upper', 'incoming/', { kind: 'static', keys: ['eu', 'us'] });
    expect(regions).toMatchObject({
      kind: 'all',
      note: expect.stringContaining('partitioned by name (eu, us), not by time'),
    });
    for (const [grain, template] of [
      ['monthly', '{yyyy}/{MM}'],
      ['weekly', '{yyyy}/W{ww}'],
    ] as const) {
      const layout = stageInputLayout('upper', 'incoming/', { kind: 'time', grain, template });
      expect(layout).toMatchObject({ kind: 'all', note: expect.stringContaining(`keys its inputs by ${template}`) });
      // Its inputs are one group; a day of it is refused, never an empty page.
      expect(stageInputGroup(layout, 'incoming/', 'undated').ranges).toEqual([{ prefix: 'incoming/' }]);
      expect(() => stageInputGroup(layout, 'incoming/', '2026-12-05')).toThrow(RangeError);
    }
  });
});
