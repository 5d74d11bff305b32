/**
 * List prices for the cost of a reprocess by each engine, us-east-1, USD, as read on 2026-12-01
 * (https://aws.amazon.com/s3/pricing/ "Requests & data retrievals" and "Batch Operations";
 * https://aws.amazon.com/sqs/pricing/; https://aws.amazon.com/lambda/pricing/ "Requests"):
 * LIST and PUT $0.005 per 1,000; SQS $0.40 per million requests; Lambda $0.20 per million
 * invocations; a Batch Operations job $0.25, plus $1.00 per million objects processed. Lambda's
 * duration is left out: both engines run the same processObject once per object.
 */
export const REPROCESS_PRICES_USD = {
  s3ListPer1000: 0.005,
  s3PutPer1000: 0.005,
  sqsRequestPerMillion: 0.4,
  lambdaInvokePerMillion: 0.2,
  batchOperationsJob: 0.25,
  batchOperationsPerMillionObjects: 1.0,
} as const;

/**
 * SQS requests per reprocessed object: a tenth of a SendMessageBatch (rerun sends 10 per batch), a
 * tenth of a ReceiveMessage and of a DeleteMessageBatch (the event source mapping's batches of 10).
 * The pollers' empty receives between batches are left out (they cost the same whether or not a
 * reprocess runs).
 */
export const SQS_REQUESTS_PER_OBJECT = 0.3;
/** Lambda invocations per object: the SQS engine's batches of 10, Batch Operations' one task each. */
export const SQS_INVOKES_PER_OBJECT = 0.1;
export const BATCH_OPERATIONS_INVOKES_PER_OBJECT = 1;

/** One engine's cost of a reprocess, by what it pays for. */
export interface EngineCost {
  readonly listing: number;
  readonly queue: number;
  readonly job: number;
  readonly invokes: number;
  readonly total: number;
}

/**
 * The cost of reprocessing `objects` inputs by each engine, from list prices and the LIST requests
 * a plan sends per input key (`listRequestsPerKey`, counted by the bench: the input listing and the
 * output listing each, so twice a listing's requests per key). `batchOperationsGenerated` is a job
 * whose manifest S3 generates (`--generate-manifest`): no listing on the operator's machine, and
 * no plan, so every object under the prefix is a task.
 *
 * @example
 * reprocessEngineCosts(100_000_000, 0.002).sqs.total; // about 15 (USD)
 */
export function reprocessEngineCosts(
  objects: number,
  listRequestsPerKey: number,
): { sqs: EngineCost; batchOperationsPlanned: EngineCost; batchOperationsGenerated: EngineCost } {
  const p = REPROCESS_PRICES_USD;
  const listing = (objects * listRequestsPerKey * p.s3ListPer1000) / 1000;
  const cost = (parts: Omit<EngineCost, 'total'>): EngineCost => ({
    ...round(parts),
    total: cents(parts.listing + parts.queue + parts.job + parts.invokes),
  });
  const job = p.batchOperationsJob + (objects * p.batchOperationsPerMillionObjects) / 1e6;
  const boInvokes = (objects * BATCH_OPERATIONS_INVOKES_PER_OBJECT * p.lambdaInvokePerMillion) / 1e6;
  return {
    sqs: cost({
      listing,
      queue: (objects * SQS_REQUESTS_PER_OBJECT * p.sqsRequestPerMillion) / 1e6,
      job: 0,
      invokes: (objects * SQS_INVOKES_PER_OBJECT * p.lambdaInvokePerMillion) / 1e6,
    }),
    // The manifest is one PUT per plan (rerun's content-addressed CSV).
    batchOperationsPlanned: cost({ listing: listing + p.s3PutPer1000 / 1000, queue: 0, job, invokes: boInvokes }),
    batchOperationsGenerated: cost({ listing: 0, queue: 0, job, invokes: boInvokes }),
  };
}

function cents(n: number): number {
  return Math.round(n * 100) / 100;
}

function round(parts: Omit<EngineCost, 'total'>): Omit<EngineCost, 'total'> {
  return {
    listing: cents(parts.listing),
    queue: cents(parts.queue),
    job: cents(parts.job),
    invokes: cents(parts.invokes),
  };
}
