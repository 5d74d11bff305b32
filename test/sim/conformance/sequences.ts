import { createHash } from 'node:crypto';
import type { Sequence, Step } from './replay.js';

const MIB = 1024 * 1024;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('base64');
const PART = Buffer.alloc(5 * MIB, 'p');
const TAIL = Buffer.from('tail\n');
const s3 = (name: string, input: Record<string, unknown>): Step => ({ service: 'S3', name, input });
const sqs = (name: string, input: Record<string, unknown>): Step => ({ service: 'SQS', name, input });
const ddb = (name: string, input: Record<string, unknown>): Step => ({ service: 'DynamoDB', name, input });
const OUT = '$bucket:out';

/** A multipart upload of PART and TAIL with SHA-256 checksums: steps `at` (create) to `at + 2`. */
function upload(key: string, at: number, metadata: Record<string, string> = { a: '1' }): Step[] {
  return [
    s3('CreateMultipartUpload', {
      Bucket: OUT,
      Key: key,
      ChecksumAlgorithm: 'SHA256',
      Metadata: metadata,
      ContentType: 'application/x-ndjson',
    }),
    s3('UploadPart', {
      Bucket: OUT,
      Key: key,
      UploadId: `$upload:${at}`,
      PartNumber: 1,
      Body: PART,
      ChecksumAlgorithm: 'SHA256',
      ChecksumSHA256: sha256(PART),
    }),
    s3('UploadPart', {
      Bucket: OUT,
      Key: key,
      UploadId: `$upload:${at}`,
      PartNumber: 2,
      Body: TAIL,
      ChecksumAlgorithm: 'SHA256',
      ChecksumSHA256: sha256(TAIL),
    }),
  ];
}

function parts(at: number) {
  return {
    Parts: [
      { PartNumber: 1, ETag: `$etag:${at + 1}`, ChecksumSHA256: sha256(PART) },
      { PartNumber: 2, ETag: `$etag:${at + 2}`, ChecksumSHA256: sha256(TAIL) },
    ],
  };
}

/**
 * Request sequences that each pin one part of the semantics the in-memory models claim, in the
 * order rerun's code relies on them. Replayed on the models and on each emulator, answer by answer.
 */
export const SCRIPTED: readonly Sequence[] = [
  {
    name: 'conditional PutObject and conditional GET',
    steps: [
      s3('PutObject', {
        Bucket: OUT,
        Key: 'a',
        Body: 'one',
        IfNoneMatch: '*',
        ChecksumAlgorithm: 'SHA256',
        ChecksumSHA256: sha256(Buffer.from('one')),
        Metadata: { 'Rerun-X': 'Y' },
      }),
      s3('PutObject', { Bucket: OUT, Key: 'a', Body: 'two', IfNoneMatch: '*' }),
      s3('PutObject', { Bucket: OUT, Key: 'a', Body: 'two', IfMatch: '"0123456789abcdef0123456789abcdef"' }),
      s3('PutObject', {
        Bucket: OUT,
        Key: 'a',
        Body: 'two',
        IfMatch: '$quoted-etag:0',
        ChecksumAlgorithm: 'SHA256',
        ChecksumSHA256: sha256(Buffer.from('two')),
      }),
      s3('PutObject', { Bucket: OUT, Key: 'missing', Body: 'x', IfMatch: '$quoted-etag:3' }),
      s3('HeadObject', { Bucket: OUT, Key: 'a', ChecksumMode: 'ENABLED' }),
      s3('GetObject', { Bucket: OUT, Key: 'a', IfNoneMatch: '$quoted-etag:3' }),
      s3('GetObject', { Bucket: OUT, Key: 'a', IfNoneMatch: '$quoted-etag:0' }),
      s3('HeadObject', { Bucket: OUT, Key: 'missing' }),
      s3('GetObject', { Bucket: OUT, Key: 'missing' }),
      // A read pinned to a version (a window task's inputs): the current ETag reads, a replaced one is 412.
      s3('GetObject', { Bucket: OUT, Key: 'a', IfMatch: '$quoted-etag:3' }),
      s3('GetObject', { Bucket: OUT, Key: 'a', IfMatch: '$quoted-etag:0' }),
      s3('GetObject', { Bucket: OUT, Key: 'missing', IfMatch: '$quoted-etag:3' }),
    ],
  },
  {
    name: 'conditional DeleteObject',
    steps: [
      s3('PutObject', { Bucket: OUT, Key: 'd', Body: 'gone soon' }),
      s3('DeleteObject', { Bucket: OUT, Key: 'd', IfMatch: '"0123456789abcdef0123456789abcdef"' }),
      s3('DeleteObject', { Bucket: OUT, Key: 'd', IfMatch: '$quoted-etag:0' }),
      s3('DeleteObject', { Bucket: OUT, Key: 'd', IfMatch: '$quoted-etag:0' }),
      s3('DeleteObject', { Bucket: OUT, Key: 'd' }),
    ],
  },
  {
    name: 'conditional CompleteMultipartUpload, a 412 that leaves the upload, NoSuchUpload, EntityTooSmall',
    steps: [
      ...upload('m', 0),
      s3('CompleteMultipartUpload', {
        Bucket: OUT,
        Key: 'm',
        UploadId: '$upload:0',
        MultipartUpload: parts(0),
        IfNoneMatch: '*',
      }),
      s3('HeadObject', { Bucket: OUT, Key: 'm', ChecksumMode: 'ENABLED' }),
      ...upload('m', 5, { a: '2' }),
      s3('CompleteMultipartUpload', {
        Bucket: OUT,
        Key: 'm',
        UploadId: '$upload:5',
        MultipartUpload: parts(5),
        IfNoneMatch: '*',
      }),
      s3('CompleteMultipartUpload', {
        Bucket: OUT,
        Key: 'm',
        UploadId: '$upload:5',
        MultipartUpload: parts(5),
        IfMatch: '"0123456789abcdef0123456789abcdef-2"',
      }),
      s3('CompleteMultipartUpload', {
        Bucket: OUT,
        Key: 'm',
        UploadId: '$upload:5',
        MultipartUpload: parts(5),
        IfMatch: '$quoted-etag:3',
      }),
      s3('HeadObject', { Bucket: OUT, Key: 'm', ChecksumMode: 'ENABLED' }),
      s3('CompleteMultipartUpload', {
        Bucket: OUT,
        Key: 'm',
        UploadId: '$upload:0',
        MultipartUpload: parts(0),
        IfMatch: '$quoted-etag:10',
      }),
      s3('AbortMultipartUpload', { Bucket: OUT, Key: 'm', UploadId: '$upload:0' }),
      s3('CreateMultipartUpload', { Bucket: OUT, Key: 'small', ChecksumAlgorithm: 'SHA256' }),
      s3('UploadPart', {
        Bucket: OUT,
        Key: 'small',
        UploadId: '$upload:14',
        PartNumber: 1,
        Body: TAIL,
        ChecksumAlgorithm: 'SHA256',
        ChecksumSHA256: sha256(TAIL),
      }),
      s3('UploadPart', {
        Bucket: OUT,
        Key: 'small',
        UploadId: '$upload:14',
        PartNumber: 2,
        Body: TAIL,
        ChecksumAlgorithm: 'SHA256',
        ChecksumSHA256: sha256(TAIL),
      }),
      s3('CompleteMultipartUpload', {
        Bucket: OUT,
        Key: 'small',
        UploadId: '$upload:14',
        MultipartUpload: {
          Parts: [1, 2].map((n) => ({ PartNumber: n, ETag: `$etag:${14 + n}`, ChecksumSHA256: sha256(TAIL) })),
        },
        IfNoneMatch: '*',
      }),
    ],
  },
  {
    name: 'the seal: UploadPartCopy of the object onto itself, on its ETag, and a conditional completion',
    steps: [
      ...upload('s', 0),
      s3('CompleteMultipartUpload', {
        Bucket: OUT,
        Key: 's',
        UploadId: '$upload:0',
        MultipartUpload: parts(0),
        IfNoneMatch: '*',
      }),
      s3('CreateMultipartUpload', {
        Bucket: OUT,
        Key: 's',
        ChecksumAlgorithm: 'SHA256',
        Metadata: { sealed: 'yes' },
        ContentType: 'application/x-ndjson',
      }),
      s3('UploadPartCopy', {
        Bucket: OUT,
        Key: 's',
        UploadId: '$upload:4',
        PartNumber: 1,
        CopySource: '$copy-source:out/s',
        CopySourceIfMatch: '"0123456789abcdef0123456789abcdef-2"',
        CopySourceRange: `bytes=0-${PART.byteLength + TAIL.byteLength - 1}`,
      }),
      s3('UploadPartCopy', {
        Bucket: OUT,
        Key: 's',
        UploadId: '$upload:4',
        PartNumber: 1,
        CopySource: '$copy-source:out/s',
        CopySourceIfMatch: '$quoted-etag:3',
        CopySourceRange: `bytes=0-${PART.byteLength + TAIL.byteLength - 1}`,
      }),
      s3('CompleteMultipartUpload', {
        Bucket: OUT,
        Key: 's',
        UploadId: '$upload:4',
        MultipartUpload: {
          Parts: [{ PartNumber: 1, ETag: '$copy-etag:6', ChecksumSHA256: sha256(Buffer.concat([PART, TAIL])) }],
        },
        IfMatch: '"0123456789abcdef0123456789abcdef-2"',
      }),
      s3('CompleteMultipartUpload', {
        Bucket: OUT,
        Key: 's',
        UploadId: '$upload:4',
        MultipartUpload: {
          Parts: [{ PartNumber: 1, ETag: '$copy-etag:6', ChecksumSHA256: sha256(Buffer.concat([PART, TAIL])) }],
        },
        IfMatch: '$quoted-etag:3',
      }),
      s3('HeadObject', { Bucket: OUT, Key: 's', ChecksumMode: 'ENABLED' }),
    ],
  },
  {
    name: 'ListObjectsV2: UTF-8 binary order, prefix, start-after, delimiter, pages',
    steps: [
      ...['b/2', 'b/10', 'a', 'é', 'z', 'b/1/x', 'B'].map((Key) => s3('PutObject', { Bucket: OUT, Key, Body: Key })),
      s3('ListObjectsV2', { Bucket: OUT }),
      s3('ListObjectsV2', { Bucket: OUT, Prefix: 'b/' }),
      s3('ListObjectsV2', { Bucket: OUT, StartAfter: 'b/10' }),
      s3('ListObjectsV2', { Bucket: OUT, MaxKeys: 2 }),
    ],
  },
  {
    name: 'SQS: receive counts, a fresh receipt handle per receive, redrive to the DLQ after maxReceiveCount',
    steps: [
      sqs('SendMessage', { QueueUrl: '$queue:work', MessageBody: 'm1' }),
      sqs('ReceiveMessage', {
        QueueUrl: '$queue:work',
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        AttributeNames: ['ApproximateReceiveCount'],
      }),
      sqs('ReceiveMessage', { QueueUrl: '$queue:work', AttributeNames: ['ApproximateReceiveCount'] }),
      sqs('ChangeMessageVisibility', { QueueUrl: '$queue:work', ReceiptHandle: '$handle:1', VisibilityTimeout: 0 }),
      sqs('ReceiveMessage', { QueueUrl: '$queue:work', AttributeNames: ['ApproximateReceiveCount'] }),
      sqs('DeleteMessage', { QueueUrl: '$queue:work', ReceiptHandle: '$handle:1' }),
      sqs('ChangeMessageVisibility', { QueueUrl: '$queue:work', ReceiptHandle: '$handle:4', VisibilityTimeout: 0 }),
      sqs('ReceiveMessage', { QueueUrl: '$queue:work', AttributeNames: ['ApproximateReceiveCount'] }),
      sqs('ReceiveMessage', { QueueUrl: '$queue:work-dlq', AttributeNames: ['ApproximateReceiveCount'] }),
    ],
  },
  {
    name: 'DynamoDB: conditional writes, ALL_NEW and ALL_OLD on a failed condition',
    steps: [
      ddb('UpdateItem', {
        TableName: '$table:ledger',
        Key: { pk: { S: 'k' } },
        UpdateExpression: 'SET #s = :p, #n = if_not_exists(#n, :zero) + :one',
        ConditionExpression: 'attribute_not_exists(#pk) OR (#s = :p AND #l < :now)',
        ExpressionAttributeNames: { '#pk': 'pk', '#s': 'status', '#n': 'attempt', '#l': 'lease' },
        ExpressionAttributeValues: {
          ':p': { S: 'IN_PROGRESS' },
          ':zero': { N: '0' },
          ':one': { N: '1' },
          ':now': { N: '10' },
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
      ddb('UpdateItem', {
        TableName: '$table:ledger',
        Key: { pk: { S: 'k' } },
        UpdateExpression: 'SET #s = :p',
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': 'pk', '#s': 'status' },
        ExpressionAttributeValues: { ':p': { S: 'X' } },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
      ddb('UpdateItem', {
        TableName: '$table:ledger',
        Key: { pk: { S: 'k' } },
        UpdateExpression: 'SET #s = :done REMOVE #l',
        ConditionExpression: '#s = :p AND NOT attribute_exists(#l)',
        ExpressionAttributeNames: { '#s': 'status', '#l': 'lease' },
        ExpressionAttributeValues: { ':p': { S: 'IN_PROGRESS' }, ':done': { S: 'SUCCEEDED' } },
        ReturnValues: 'ALL_NEW',
      }),
      ddb('PutItem', {
        TableName: '$table:ledger',
        Item: { pk: { S: 'k' }, status: { S: 'NEW' } },
        ConditionExpression: 'attribute_not_exists(#pk) OR #s <> :done',
        ExpressionAttributeNames: { '#pk': 'pk', '#s': 'status' },
        ExpressionAttributeValues: { ':done': { S: 'SUCCEEDED' } },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
      ddb('GetItem', { TableName: '$table:ledger', Key: { pk: { S: 'k' } }, ConsistentRead: true }),
    ],
  },
];
