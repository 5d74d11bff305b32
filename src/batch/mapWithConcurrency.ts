/**
 * Runs `task` over `items` with at most `concurrency` at once, keeping results in input order.
 * Bounded on purpose: an unbounded `Promise.all` over a 10,000-record batch opens 10,000 requests.
 * The first task that throws rejects the whole call, and no task starts after that (the ones already
 * running finish on their own), as p-map does.
 *
 * @example
 * const sizes = await mapWithConcurrency(keys, 4, (key) => headSize(key));
 */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be an integer >= 1');
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await task(items[index] as T, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  });
  await Promise.all(lanes);
  return results;
}
