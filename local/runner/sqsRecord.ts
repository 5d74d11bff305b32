import type { SQSMessageAttribute, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from 'aws-lambda';

/**
 * The fields of an SQS `ReceiveMessage` result that Lambda copies into an event record. Declared
 * structurally (it matches the SDK's `Message`) so this file stays free of SDK imports.
 */
export interface ReceivedMessage {
  readonly MessageId?: string | undefined;
  readonly ReceiptHandle?: string | undefined;
  readonly Body?: string | undefined;
  readonly MD5OfBody?: string | undefined;
  readonly MD5OfMessageAttributes?: string | undefined;
  readonly Attributes?: Partial<Record<string, string>> | undefined;
  readonly MessageAttributes?:
    | Record<
        string,
        {
          readonly DataType?: string | undefined;
          readonly StringValue?: string | undefined;
          readonly BinaryValue?: Uint8Array | undefined;
          readonly StringListValues?: readonly string[] | undefined;
          readonly BinaryListValues?: readonly Uint8Array[] | undefined;
        }
      >
    | undefined;
}

/** Where the records come from: the queue's ARN and region, as Lambda reports them. */
export interface RecordSource {
  /** The queue ARN (`eventSourceARN`). */
  readonly queueArn: string;
  /** The region (`awsRegion`). */
  readonly region: string;
}

/**
 * System attributes Lambda puts first, in the order its events show them. Any other attribute SQS
 * returns (AWSTraceHeader, MessageGroupId, SequenceNumber, MessageDeduplicationId,
 * DeadLetterQueueSourceArn...) follows, unchanged.
 */
const LEADING_ATTRIBUTES = ['ApproximateReceiveCount', 'SentTimestamp', 'SenderId', 'ApproximateFirstReceiveTimestamp'];

/**
 * Builds the `SQSRecord` Lambda's SQS event source mapping hands to a function for one received message.
 *
 * Shape (https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html): camel-cased top-level fields,
 * system `attributes` as strings, `messageAttributes` as
 * `{ stringValue | binaryValue (base64), stringListValues: [], binaryListValues: [], dataType }`,
 * `eventSource: 'aws:sqs'`, the queue ARN and region. `md5OfMessageAttributes` is present only when
 * the message has attributes (SQS returns no digest otherwise).
 *
 * @example
 * const record = toSqsRecord(message, { queueArn: 'arn:aws:sqs:us-east-1:123456789012:q', region: 'us-east-1' });
 * record.attributes.ApproximateReceiveCount; // '1'
 */
export function toSqsRecord(message: ReceivedMessage, source: RecordSource): SQSRecord {
  if (!message.MessageId || !message.ReceiptHandle) {
    throw new TypeError('An SQS message without MessageId or ReceiptHandle cannot become a Lambda record.');
  }
  // Key order as in the events Lambda delivers (documentation example); the digest of the message
  // attributes follows the body's when there is one.
  return {
    messageId: message.MessageId,
    receiptHandle: message.ReceiptHandle,
    body: message.Body ?? '',
    attributes: recordAttributes(message.Attributes ?? {}),
    messageAttributes: recordMessageAttributes(message.MessageAttributes ?? {}),
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: source.queueArn,
    awsRegion: source.region,
  };
}

function recordAttributes(attributes: Partial<Record<string, string>>): SQSRecordAttributes {
  const ordered: Record<string, string> = {};
  for (const name of LEADING_ATTRIBUTES) {
    const value = attributes[name];
    if (value !== undefined) ordered[name] = value;
  }
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && !(name in ordered)) ordered[name] = value;
  }
  return ordered as unknown as SQSRecordAttributes;
}

function recordMessageAttributes(attributes: NonNullable<ReceivedMessage['MessageAttributes']>): SQSMessageAttributes {
  const result: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(attributes)) {
    const attribute: SQSMessageAttribute = { dataType: value.DataType ?? 'String' };
    // Lambda serialises binary values as base64 strings (the event is JSON).
    if (value.StringValue !== undefined) attribute.stringValue = value.StringValue;
    if (value.BinaryValue !== undefined) attribute.binaryValue = Buffer.from(value.BinaryValue).toString('base64');
    attribute.stringListValues = [...(value.StringListValues ?? [])];
    attribute.binaryListValues = (value.BinaryListValues ?? []).map((b) => Buffer.from(b).toString('base64'));
    // Key order as in Lambda's events: value first, then the lists, then the type.
    const { dataType, ...rest } = attribute;
    result[name] = { ...rest, dataType };
  }
  return result;
}
