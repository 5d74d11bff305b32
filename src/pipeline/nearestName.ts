/**
 * The known name nearest to `name`: one that differs only in case, or that starts with it (a
 * shortened name), or the nearest by edit distance when near enough to be a typo (at most a third
 * of its length, at least 1); else undefined. What a "did you mean" hint offers.
 *
 * @example
 * nearestName('uper', ['upper', 'daily']); // 'upper'
 * nearestName('strip', ['prefix', 'stripPrefix']); // 'stripPrefix'
 * nearestName('zzz', ['upper']); // undefined
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameButCase = known.find((k) => k.toLowerCase() === lower);
  if (sameButCase !== undefined) return sameButCase;
  const longer = lower.length >= 3 ? known.find((k) => k.toLowerCase().startsWith(lower)) : undefined;
  if (longer !== undefined) return longer;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = editDistance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  // Never a name that shares nothing with this one (a one-letter name is not a typo of another).
  const near = bestDistance <= Math.max(1, Math.floor(name.length / 3)) && bestDistance < name.length;
  return best !== undefined && near ? best : undefined;
}

/** `; did you mean "x"?` for a hint, or ''. */
export function didYouMean(name: string, known: readonly string[]): string {
  const nearest = nearestName(name, known);
  return nearest === undefined ? '' : `; did you mean "${nearest}"?`;
}

/** Levenshtein distance (insert, delete, substitute), one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + cost));
    }
    previous = row;
  }
  return previous[b.length] as number;
}
