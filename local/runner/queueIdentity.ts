import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '../../src/logging/logger.js';
import { RunnerConfigurationError } from './errors.js';

/** The queue as records and the context name it: its ARN, and the region and account they report. */
export interface QueueIdentity {
  readonly queueArn: string;
  readonly region: string;
  readonly accountId: string;
}

/**
 * Reads the queue's ARN and visibility timeout, and checks the mapping the way Lambda does: a
 * function timeout longer than the visibility timeout is refused; a visibility timeout shorter than
 * batching window + function timeout is allowed, with a warning (expect duplicates).
 *
 * @example
 * const identity = await resolveQueueIdentity({ sqs, queueUrl, timeoutSeconds: 60, maxBatchingWindowSeconds: 1 }, logger);
 */
export async function resolveQueueIdentity(
  mapping: {
    readonly sqs: SQSClient;
    readonly queueUrl: string;
    readonly timeoutSeconds: number;
    readonly maxBatchingWindowSeconds: number;
    readonly region?: string | undefined;
    readonly accountId?: string | undefined;
  },
  logger: Logger,
): Promise<QueueIdentity> {
  const response = await mapping.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: mapping.queueUrl,
      AttributeNames: ['QueueArn', 'VisibilityTimeout'],
    }),
  );
  const queueArn = response.Attributes?.QueueArn;
  if (!queueArn) throw new RunnerConfigurationError(`The queue ${mapping.queueUrl} did not report its QueueArn.`);
  const [, , , arnRegion = '', arnAccount = ''] = queueArn.split(':');
  const visibility = Number(response.Attributes?.VisibilityTimeout);
  // Lambda refuses a mapping whose function timeout exceeds the queue's visibility timeout
  // (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html).
  if (Number.isFinite(visibility) && mapping.timeoutSeconds > visibility) {
    throw new RunnerConfigurationError(
      `The function timeout (${mapping.timeoutSeconds} s) exceeds the visibility timeout of ${queueArn} ` +
        `(${visibility} s); Lambda refuses this mapping. Raise the queue's VisibilityTimeout (AWS advises 6 x the function timeout).`,
    );
  }
  const held = mapping.timeoutSeconds + mapping.maxBatchingWindowSeconds;
  if (Number.isFinite(visibility) && visibility < held) {
    // Allowed by Lambda, but a message can then become visible again while its batch is still
    // being gathered or processed, and be delivered twice (AWS advises 6 x the function timeout).
    logger.warn('the visibility timeout is shorter than batching window + function timeout: expect duplicates', {
      queueArn,
      visibilityTimeoutSeconds: visibility,
      batchingWindowPlusTimeoutSeconds: held,
    });
  }
  return {
    queueArn,
    region: mapping.region ?? arnRegion,
    accountId: mapping.accountId ?? arnAccount,
  };
}
