import { WindowMappingUnsupportedError } from './errors.js';
import type { PartitionScheme, PartitionWindow, StaticWindow } from './partitionScheme.js';
import { timeWindowAt } from './timeWindow.js';

/**
 * Partition mappings: the windows of one scheme that intersect a window of another. Read one way it
 * is what a window depends on (a day on its 24 upstream hours, a month on its days, a day on the one
 * month that holds it); read the other way it is what a change invalidates downstream (an hour's
 * change makes its day stale). Intersection is symmetric, so one function serves both.
 */

/**
 * The windows of `scheme` that intersect `window` (a window of another scheme), in order. Where the
 * scheme's grain tiles the window's (hours in a day, days in a week or month) they cover its interval
 * exactly, with no gap and no overlap; where it is coarser (a month for a day, a month for a week
 * that straddles two) they are the ones that hold it.
 *
 * @throws WindowMappingUnsupportedError between a static and a time scheme, or every window of a
 *   time scheme onto an unpartitioned window (there is no end to list).
 * @example
 * const hourly = partitionScheme({ kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' });
 * const daily = partitionScheme({ kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' });
 * windowsIntersecting(hourly, daily.parseWindow('2026-12-05')).length; // 24
 */
export function windowsIntersecting(scheme: PartitionScheme, window: PartitionWindow): PartitionWindow[] {
  const { spec } = scheme;
  if (spec.kind === 'none') return [{ kind: 'none', name: 'all' }];
  if (spec.kind === 'time' && window.kind === 'time') {
    const windows: PartitionWindow[] = [];
    for (let w = timeWindowAt(spec.grain, window.start); w.start < window.end; w = timeWindowAt(spec.grain, w.end)) {
      windows.push(w);
    }
    return windows;
  }
  if (spec.kind === 'static' && window.kind === 'static') {
    return spec.keys.includes(window.name) ? [window] : [];
  }
  if (spec.kind === 'static' && window.kind === 'none') {
    return spec.keys.map((name): StaticWindow => ({ kind: 'static', name }));
  }
  throw new WindowMappingUnsupportedError(spec.kind, window.kind);
}
