import { type RequestIdentity, Service } from './awsRequest.js';

/** An HTTP answer a fault proxy sends instead of forwarding the request. */
export interface CannedResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The error code the client will see (for the chaos report). */
  readonly code: string;
}

/** Throttling error codes by service, as the services send them (all are in the SDK's throttling list). */
export const THROTTLING_CODES: Readonly<Record<'SQS' | 'DynamoDB', readonly string[]>> = {
  DynamoDB: ['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded'],
  SQS: ['RequestThrottled', 'ThrottlingException'],
};

/**
 * An S3 REST error: XML body `<Error><Code>...`, the shape S3 uses for every error (a HEAD answer
 * carries no body; the SDK then goes by the status code, as it does with real S3).
 *
 * @example
 * s3Error(503, 'SlowDown', 'Please reduce your request rate.', 'req-1');
 */
export function s3Error(status: number, code: string, message: string, requestId: string): CannedResponse {
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${code}</Code><Message>${message}</Message><RequestId>${requestId}</RequestId>` +
    `<HostId>chaos-proxy</HostId></Error>`;
  return {
    status,
    headers: { 'content-type': 'application/xml', 'x-amz-request-id': requestId },
    body,
    code,
  };
}

/**
 * An error of a JSON-protocol service (DynamoDB `awsJson1_0`, SQS `awsJson1_0` with query
 * compatibility): `{"__type": "<namespace>#<Code>", "message": ...}`; SQS also names the legacy
 * query error code in `x-amzn-query-error`.
 *
 * @example
 * jsonError('DynamoDB', 400, 'ProvisionedThroughputExceededException', 'Rate exceeded', 'req-2');
 */
export function jsonError(
  service: 'SQS' | 'DynamoDB',
  status: number,
  code: string,
  message: string,
  requestId: string,
): CannedResponse {
  const namespace = service === 'SQS' ? 'com.amazonaws.sqs' : 'com.amazonaws.dynamodb.v20120810';
  return {
    status,
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-requestid': requestId,
      ...(service === 'SQS' ? { 'x-amzn-query-error': `${code};${status >= 500 ? 'Receiver' : 'Sender'}` } : {}),
    },
    body: JSON.stringify({ __type: `${namespace}#${code}`, message }),
    code,
  };
}

/**
 * A 500 Internal Error in the shape of the request's service.
 *
 * @example
 * internalError({ service: 'S3', operation: 'PutObject', conditionalWrite: true }, 'req-3');
 */
export function internalError(identity: RequestIdentity, requestId: string): CannedResponse {
  switch (identity.service) {
    case Service.S3:
      return s3Error(500, 'InternalError', 'We encountered an internal error. Please try again.', requestId);
    case Service.DYNAMODB:
      return jsonError('DynamoDB', 500, 'InternalServerError', 'Internal server error', requestId);
    case Service.SQS:
      return jsonError('SQS', 500, 'InternalError', 'Internal error', requestId);
    default:
      return {
        status: 500,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ error: 'injected internal error' }),
        code: 'InternalError',
      };
  }
}
