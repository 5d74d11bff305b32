import { mapWithConcurrency } from '../../src/batch/mapWithConcurrency.js';
import type { Day } from '../../src/keys/partition.js';
import type { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { dayGroup, type InputGroup, outsideDaysGroup, type StageInputLayout } from './stageInputLayout.js';

/**
 * The number of inputs of each day of a user's object stage, listed by its own layout: one listing
 * of the day's prefix each (`{prefix}year=2026/month=12/day=05/hour=` for an hourly template),
 * counting only the keys the template reads as that day. Undefined for a layout with no days (its
 * inputs are one group, shown apart).
 *
 * @example
 * await countInputDays(reader, { bucket: 'in', prefix: 'incoming/' }, layout, ['2026-12-05']); // [3]
 */
export async function countInputDays(
  reader: S3PartitionStore,
  where: { readonly bucket: string; readonly prefix: string },
  layout: StageInputLayout,
  days: readonly Day[],
): Promise<number[] | undefined> {
  if (layout.kind === 'all') return undefined;
  const { bucket, prefix } = where;
  return mapWithConcurrency(days, 8, async (day) => {
    const group = dayGroup(layout, prefix, day);
    let inputs = 0;
    for (const range of group.ranges) {
      for await (const object of reader.list(bucket, range)) {
        if (!object.key.endsWith('/') && (!group.holds || group.holds(object.key))) inputs++;
      }
    }
    return inputs;
  });
}

/**
 * The group a drill-down of a user's object stage lists: a day of its layout, or (`undated`) its
 * inputs outside any day, all of them when its layout has none.
 *
 * @throws RangeError for a day of a layout with no days (its note says why)
 * @example
 * stageInputGroup(layout, 'incoming/', '2026-12-05').ranges; // [{ prefix: 'incoming/year=2026/month=12/day=05/hour=' }]
 */
export function stageInputGroup(layout: StageInputLayout, prefix: string, day: Day | 'undated'): InputGroup {
  if (day === 'undated') return outsideDaysGroup(layout, prefix);
  if (layout.kind === 'all') throw new RangeError(`${layout.note}: ask for day=undated`);
  return dayGroup(layout, prefix, day);
}
