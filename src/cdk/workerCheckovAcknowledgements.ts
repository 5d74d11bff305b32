import { Annotations } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { WorkerTopology } from '../topology/WorkerTopology.js';
import { acknowledgeCheckov, CheckovCheck } from './checkovAcknowledgements.js';
import type { SqsWorkerProps } from './SqsWorkerProps.js';

/** What the acknowledgements are attached to: the worker construct and the resources it built. */
type AcknowledgedWorker = Construct & {
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  readonly function: IFunction;
  readonly logGroup: ILogGroup;
  readonly topology: WorkerTopology;
};

/** The checkov checks a worker meets otherwise, each with its reason (see checkovAcknowledgements.ts). */
export function acknowledgeWorkerChecks(worker: AcknowledgedWorker, props: SqsWorkerProps): void {
  const fp = props.functionProps ?? {};
  for (const queue of [worker.queue, worker.deadLetterQueue]) {
    if (queue.encryptionMasterKey) continue;
    acknowledgeCheckov(
      queue,
      CheckovCheck.SQS_KMS,
      'Encrypted at rest with SSE-SQS (SqsManagedSseEnabled): no key policy to keep in step with S3 notifications; ' +
        'queueProps.encryption KMS switches to a customer managed key.',
    );
  }
  if (!fp.vpc) {
    acknowledgeCheckov(
      worker.function,
      CheckovCheck.LAMBDA_VPC,
      'Calls only AWS APIs (S3, SQS, DynamoDB) and an HTTPS webhook, nothing inside a VPC; functionProps.vpc places it in one.',
    );
  }
  acknowledgeCheckov(
    worker.function,
    CheckovCheck.LAMBDA_DLQ,
    "Invoked by an SQS event source mapping, never asynchronously: a function DLQ would never receive anything; the work queue's redrive policy moves failed messages to its DLQ.",
  );
  if (props.reserveConcurrency === false) {
    acknowledgeCheckov(
      worker.function,
      CheckovCheck.LAMBDA_CONCURRENCY,
      "Opted out (reserveConcurrency: false) where the account's concurrency limit leaves nothing to reserve; the " +
        "mapping's MaximumConcurrency still caps it, and the synth warns (rerun:concurrencyNotReserved).",
    );
    Annotations.of(worker).addWarningV2(
      'rerun:concurrencyNotReserved',
      `The ${worker.topology.name} worker reserves no concurrency (reserveConcurrency: false): other functions of ` +
        "the account can take its concurrency, and Lambda's throttles then count as receives, so messages can " +
        'reach the DLQ without a failure record. Reserve it (the default) once the account limit allows.',
    );
  }
  if (!fp.environmentEncryption) {
    acknowledgeCheckov(
      worker.function,
      CheckovCheck.LAMBDA_ENV_CMK,
      'Lambda encrypts environment variables at rest with its AWS managed key; they hold resource names, and a ' +
        'webhook URL only from a dynamic reference (docs/DEPLOY.md); functionProps.environmentEncryption sets a key.',
    );
  }
  acknowledgeCheckov(
    worker.logGroup,
    CheckovCheck.LOGS_KMS,
    'CloudWatch Logs encrypts log data at rest; the logs hold object keys and reasons, no secrets, and a customer ' +
      'managed key would need the logs service in its key policy.',
  );
}
