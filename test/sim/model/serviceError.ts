/**
 * An error shaped as the AWS SDK's service exceptions are where rerun reads them: `name` (and
 * `Code`) is the error code, `$metadata.httpStatusCode` the status (src/s3/errors.ts, httpStatus and
 * errorCode). The in-memory models throw it, so the product code classifies their answers exactly
 * as it classifies S3's, SQS's and DynamoDB's.
 *
 * @example
 * throw new SimServiceError(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
 */
export class SimServiceError extends Error {
  readonly $metadata: { readonly httpStatusCode: number };
  readonly $fault: 'client' | 'server';
  readonly Code: string;
  /** Extra fields some errors carry (DynamoDB's ConditionalCheckFailedException has `Item`). */
  [field: string]: unknown;

  constructor(status: number, code: string, message: string, extra: Record<string, unknown> = {}) {
    // A service's answer has no stack worth keeping, and capturing one costs more than the answer.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = code;
    this.Code = code;
    this.$metadata = { httpStatusCode: status };
    this.$fault = status >= 500 ? 'server' : 'client';
    Object.assign(this, extra);
  }
}
