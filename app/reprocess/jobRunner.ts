import { createBatchOperationsHandler } from '../../src/batch/createBatchOperationsHandler.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { CliUsageError } from '../common/command.js';
import type { PlanningStage } from '../common/pipelineStage.js';
import type { PipelineTarget } from '../common/pipelineTarget.js';
import type { JobRunner } from './batchOperationsEngine.js';
import { accountIdOfArn } from './batchOperationsJob.js';

/**
 * The stack outputs naming the Batch Operations function and job role (RerunPipeline with
 * `batchOperations: true` and `outputs: true` writes them).
 */
export const BATCH_OUTPUTS = {
  FUNCTION_ARN: 'BatchOperationsFunctionArn',
  ROLE_ARN: 'BatchOperationsRoleArn',
} as const;

/**
 * Where the job runs, said on stderr. Against an emulator endpoint (AWS_ENDPOINT_URL: `rerun dev`
 * and the local stack tell commands where they run by it), the local stand-in runs it, since neither
 * moto nor MiniStack implements S3 Control jobs (docs/EMULATORS.md); against AWS, CreateJob.
 */
export async function jobRunner(
  target: PipelineTarget,
  given: { readonly functionArn?: string | undefined; readonly roleArn?: string | undefined },
  note: (text: string) => void,
  stage: PlanningStage,
): Promise<JobRunner> {
  if (target.endpoint) {
    if (!stage.reference) {
      // The stand-in runs rerun's normalizer in this process: it is not this stage's worker.
      throw new CliUsageError(
        `--engine batch-operations against an emulator runs rerun's reference normalizer in this process, and stage ` +
          `"${stage.name}" runs another worker: use --engine sqs (the default) here.`,
      );
    }
    note(
      `engine: batch-operations (local stand-in: AWS_ENDPOINT_URL=${target.endpoint} is an emulator, ` +
        'which has no S3 Control jobs; the job runs in this process, same manifest and report)\n',
    );
    const store = new S3ObjectStore(target.clients.s3);
    return {
      kind: 'local',
      handler: createBatchOperationsHandler({
        worker: createNormalizeWorker({ outputBucket: target.outputBucket, prefixes: target.topology }),
        store,
        failureRecorder: new S3FailureRecorder({ store, sqs: target.clients.sqs, bucket: target.outputBucket }),
      }),
    };
  }
  const outputs = target.stack?.outputs ?? {};
  const functionArn = given.functionArn ?? outputs[BATCH_OUTPUTS.FUNCTION_ARN];
  const roleArn = given.roleArn ?? outputs[BATCH_OUTPUTS.ROLE_ARN];
  if (!functionArn || !roleArn) {
    throw new CliUsageError(
      `--engine batch-operations needs ${functionArn ? '' : 'the function the job invokes (--function-arn)'}` +
        `${!functionArn && !roleArn ? ' and ' : ''}${roleArn ? '' : "the job's role (--role-arn)"}, or --stack NAME ` +
        `of a stack with the outputs ${BATCH_OUTPUTS.FUNCTION_ARN} and ${BATCH_OUTPUTS.ROLE_ARN} ` +
        '(RerunPipeline with batchOperations: true and outputs: true).',
    );
  }
  accountIdOfArn(roleArn);
  let adapter: typeof import('./s3ControlJobs.js');
  try {
    adapter = await import('./s3ControlJobs.js');
  } catch (error) {
    throw new CliUsageError(
      '--engine batch-operations against AWS needs @aws-sdk/client-s3-control (an optional peer dependency): ' +
        `npm install @aws-sdk/client-s3-control (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
  note(`engine: batch-operations (S3 Batch Operations in ${target.region}, role ${roleArn})\n`);
  return {
    kind: 'aws',
    jobs: adapter.s3ControlJobs(adapter.createS3ControlClient(target.region)),
    functionArn,
    roleArn,
  };
}
