import { describe, expect, it } from 'vitest';
import { reprocessEngineCosts } from '../../bench/reprocessEngineCost.js';

describe('reprocessEngineCosts', () => {
  it('prices 100 M objects by each engine from the LIST requests per key and the per-object requests and fees', () => {
    // Two listings of 1,000 keys a page: 0.002 LIST per input key.
    const cost = reprocessEngineCosts(100_000_000, 0.002);
    expect(cost.sqs).toEqual({ listing: 1, queue: 12, job: 0, invokes: 2, total: 15 });
    expect(cost.batchOperationsPlanned).toEqual({ listing: 1, queue: 0, job: 100.25, invokes: 20, total: 121.25 });
    expect(cost.batchOperationsGenerated).toEqual({ listing: 0, queue: 0, job: 100.25, invokes: 20, total: 120.25 });
  });

  it('leaves a job its fixed fee however small, and grows every part with the count', () => {
    expect(reprocessEngineCosts(0, 0.002).batchOperationsGenerated.total).toBe(0.25);
    const million = reprocessEngineCosts(1_000_000, 0.002);
    expect(million.sqs.total).toBe(0.15);
    expect(million.batchOperationsGenerated.total).toBe(1.45);
  });
});
