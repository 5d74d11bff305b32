/**
 * AWS list prices used by the bench's cost figure, us-east-1, USD, as read on 2026-12-01:
 *
 * - S3 Standard requests (https://aws.amazon.com/s3/pricing/, "Requests & data retrievals"):
 *   PUT, COPY, POST, LIST $0.005 per 1,000; GET, SELECT and all other requests (HEAD) $0.0004 per
 *   1,000; DELETE and CANCEL (AbortMultipartUpload) are free. Multipart requests
 *   (CreateMultipartUpload, UploadPart, CompleteMultipartUpload) are billed as PUT-class.
 * - DynamoDB on-demand (https://aws.amazon.com/dynamodb/pricing/on-demand/): $0.625 per million
 *   write request units and $0.125 per million read request units (the prices since the on-demand
 *   reduction of 1 November 2024). A write of an item up to 1 KB is one unit, also when its
 *   condition fails; a strongly consistent read up to 4 KB is one unit, an eventually consistent one
 *   half. The bench's items are far below 1 KB (the Powertools record holds a hash and a status).
 * - SQS standard queues (https://aws.amazon.com/sqs/pricing/): $0.40 per million requests (each
 *   64 KB chunk of a payload is one request; the bench's messages are under 1 KB). The SQS requests
 *   of an event source mapping's pollers are billed to the account like any other.
 *
 * - Lambda (https://aws.amazon.com/lambda/pricing/, checked 2026-12-04), Arm (the stack's functions are ARM64):
 *   $0.0000133334 per GB-second of duration (the first tier, up to 7.5 billion GB-seconds a month),
 *   billed per invocation rounded up to the millisecond, and $0.20 per million requests (one per
 *   invocation: an SQS event source mapping invokes once per batch).
 *
 * Free tiers are left out: the figure is the marginal cost at scale.
 */
export const AWS_LIST_PRICES_USD = {
  region: 'us-east-1',
  s3PutClassPer1000: 0.005,
  s3GetClassPer1000: 0.0004,
  dynamodbWriteUnitPerMillion: 0.625,
  dynamodbReadUnitPerMillion: 0.125,
  sqsRequestPerMillion: 0.4,
  lambdaArmGbSecond: 0.000_013_333_4,
  lambdaRequestPerMillion: 0.2,
} as const;

const S3_PUT_CLASS = new Set([
  'PutObject',
  'CopyObject',
  'PostObject',
  'ListObjectsV2',
  'ListObjects',
  'CreateMultipartUpload',
  'UploadPart',
  'UploadPartCopy',
  'CompleteMultipartUpload',
]);
const S3_FREE = new Set(['DeleteObject', 'DeleteObjects', 'AbortMultipartUpload']);
const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
const DYNAMODB_READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

/** USD per million items of one phase, by service, from its request counts and its Lambda compute. */
export interface PhaseCost {
  readonly s3: number;
  readonly dynamodb: number;
  readonly sqs: number;
  /** Lambda duration (GB-seconds at the function's memory) plus Lambda requests; 0 when not given. */
  readonly lambda: number;
  readonly total: number;
}

/** The Lambda compute of a phase: what the function was billed for. */
export interface LambdaUsage {
  /** Invocations (Lambda requests). */
  readonly invocations: number;
  /** The invocations' durations added up, ms (each rounded up to the millisecond, as Lambda bills). */
  readonly durationMs: number;
  /** The function's memory, MB. */
  readonly memoryMiB: number;
}

/**
 * The cost of a phase from its counted requests (`Service:Operation` to count, as the counting proxy
 * reports them) and, when given, its Lambda usage, in USD per million items, at
 * {@link AWS_LIST_PRICES_USD}. DynamoDB requests count one unit each (items under 1 KB; reads counted
 * as strongly consistent, the higher price).
 *
 * @example
 * costPerMillionItems({ 'S3:HeadObject': 200 }, 200); // { s3: 0.4, dynamodb: 0, sqs: 0, lambda: 0, total: 0.4 }
 * costPerMillionItems({}, 10, { invocations: 1, durationMs: 100, memoryMiB: 1024 }); // lambda: 0.153
 */
export function costPerMillionItems(
  operations: Readonly<Record<string, number>>,
  items: number,
  lambdaUsage?: LambdaUsage,
): PhaseCost {
  const p = AWS_LIST_PRICES_USD;
  let s3 = 0;
  let dynamodb = 0;
  let sqs = 0;
  for (const [name, count] of Object.entries(operations)) {
    const [service, operation = ''] = name.split(':');
    if (service === 'S3') {
      if (S3_FREE.has(operation)) continue;
      s3 += (count * (S3_PUT_CLASS.has(operation) ? p.s3PutClassPer1000 : p.s3GetClassPer1000)) / 1000;
    } else if (service === 'DynamoDB') {
      if (DYNAMODB_WRITES.has(operation)) dynamodb += (count * p.dynamodbWriteUnitPerMillion) / 1e6;
      else if (DYNAMODB_READS.has(operation)) dynamodb += (count * p.dynamodbReadUnitPerMillion) / 1e6;
    } else if (service === 'SQS' && operation !== 'GetQueueAttributes') {
      sqs += (count * p.sqsRequestPerMillion) / 1e6;
    }
  }
  const lambda = lambdaUsage ? lambdaCost(lambdaUsage) : 0;
  const perMillion = (usd: number) => (items > 0 ? round((usd * 1e6) / items) : 0);
  return {
    s3: perMillion(s3),
    dynamodb: perMillion(dynamodb),
    sqs: perMillion(sqs),
    lambda: perMillion(lambda),
    total: perMillion(s3 + dynamodb + sqs + lambda),
  };
}

/** USD of Lambda duration (GB-seconds at the memory) and requests. */
function lambdaCost(usage: LambdaUsage): number {
  const p = AWS_LIST_PRICES_USD;
  const gbSeconds = (usage.memoryMiB / 1024) * (usage.durationMs / 1000);
  return gbSeconds * p.lambdaArmGbSecond + (usage.invocations * p.lambdaRequestPerMillion) / 1e6;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
