import { describe, expect, it } from 'vitest';
import { AWS_LIST_PRICES_USD, costPerMillionItems } from '../../bench/awsCost.js';
import { chainLatencyMs, checkTargets, TARGET_IDS, TargetStatus } from '../../bench/report.js';

describe('bench cost and targets', () => {
  it('prices a duplicate: one HEAD per item is $0.40 per million items; one DynamoDB write $0.625', () => {
    expect(costPerMillionItems({ 'S3:HeadObject': 200 }, 200)).toEqual({ s3: 0.4, dynamodb: 0, sqs: 0, total: 0.4 });
    expect(costPerMillionItems({ 'DynamoDB:PutItem': 200 }, 200).dynamodb).toBe(
      AWS_LIST_PRICES_USD.dynamodbWriteUnitPerMillion,
    );
  });

  it('bills PUT-class S3 requests at $5 per million, deletes nothing, and leaves drain checks out', () => {
    expect(
      costPerMillionItems(
        { 'S3:PutObject': 10, 'S3:UploadPart': 10, 'S3:DeleteObject': 10, 'SQS:GetQueueAttributes': 10 },
        10,
      ),
    ).toEqual({ s3: 10, dynamodb: 0, sqs: 0, total: 10 });
    expect(costPerMillionItems({ 'SQS:ReceiveMessage': 1, 'SQS:DeleteMessageBatch': 1 }, 10).sqs).toBe(0.08);
  });

  it('a duplicate chain is one modelled S3 round trip for rerun and one DynamoDB write for Powertools', () => {
    expect(chainLatencyMs({ S3: 1, DynamoDB: 0 }) / chainLatencyMs({ S3: 0, DynamoDB: 1 })).toBeGreaterThan(1);
  });

  it('lists every target of the issue by its stable id, as not measured when its section did not run', () => {
    const targets = checkTargets({});
    expect(targets.map((t) => t.id)).toEqual([...TARGET_IDS]);
    expect(targets.every((t) => t.status === TargetStatus.NOT_MEASURED && !t.met)).toBe(true);
  });
});
