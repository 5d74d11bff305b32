import { Duration, Stack } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  ApplicationLogLevel,
  Architecture,
  type IFunction,
  Function as LambdaFunction,
  LoggingFormat,
  SystemLogLevel,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import {
  BATCH_OPERATIONS_PREFIX,
  batchOperationsManifestPrefix,
  batchOperationsReportPrefix,
} from '../batch/batchOperationsLayout.js';
import { acknowledgeCheckov, CheckovCheck } from './checkovAcknowledgements.js';
import { BATCH_OPERATIONS_HANDLER_PROP_NAMES, checkProps } from './checkProps.js';
import { grantKeyUseVia, KeyService } from './keyGrants.js';
import { acknowledgePrefixWildcards } from './nagAcknowledgements.js';
import { grantPrefixAccess } from './prefixGrants.js';
import { entryFunctionProps, WORKER_RUNTIME } from './workerBundling.js';
import type { WorkerSource } from './workerSource.js';
import { WORKER_SOURCE_NAMES } from './workerSource.js';

/** Props of {@link BatchOperationsHandler}. */
export interface BatchOperationsHandlerProps {
  /**
   * The handler module (`createBatchOperationsHandler` over the same worker as the SQS handler),
   * bundled like the worker (src/cdk/workerBundling.ts: ESM, Node 24, the AWS SDK inside), or
   * ready-made code that carries its own SDK.
   */
  readonly source: WorkerSource;
  readonly inputBucket: IBucket;
  readonly inputPrefix: string;
  /** The bucket of the outputs, the failure records and the job files (manifests and reports). */
  readonly outputBucket: IBucket;
  readonly outputPrefixes: readonly string[];
  readonly failurePrefix: string;
  readonly memoryMiB: number;
  readonly timeoutSeconds: number;
  /** Merged over OUTPUT_BUCKET, INPUT_BUCKETS, LOG_LEVEL and NODE_OPTIONS. @default {} */
  readonly environment?: Readonly<Record<string, string>>;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /**
   * The root of the job files in the output bucket: the role reads `{root}manifests/` and writes
   * `{root}reports/`, nothing else.
   * @default BATCH_OPERATIONS_PREFIX ('batch-operations/')
   */
  readonly jobFilesPrefix?: string;
}

/**
 * What an S3 Batch Operations job of rerun needs: the function a `LambdaInvoke` job calls, and the
 * job's role, least privilege (S3 User Guide, "Granting permissions for Batch Operations"):
 *
 * - trusted by `batchoperations.s3.amazonaws.com` only on behalf of this account (`aws:SourceAccount`,
 *   against the confused deputy);
 * - `s3:GetObject` and `s3:GetObjectVersion` on the manifests rerun writes (`batch-operations/manifests/`);
 * - `lambda:InvokeFunction` on this one function;
 * - `s3:PutObject` on the report prefix (`batch-operations/reports/`), and `s3:GetBucketLocation` on
 *   the output bucket, which S3 reads before writing a report there;
 * - on an output bucket encrypted with a KMS key, that key's use through S3 only (`kms:ViaService`):
 *   Decrypt for the manifest, GenerateDataKey for the report.
 *
 * The function's own role reads the input prefix, reads and writes (conditionally) the output
 * prefixes and records failures, as the SQS worker's does; it gets no SQS permission (a job's
 * failure records ask SQS nothing).
 *
 * The operator who runs `rerun reprocess --engine batch-operations` needs `s3:CreateJob`,
 * `s3:DescribeJob` and `iam:PassRole` on {@link jobRole}, plus PutObject on the manifests prefix (and,
 * on an SSE-KMS output bucket, kms:GenerateDataKey on its key through S3).
 *
 * @example
 * const jobs = new BatchOperationsHandler(this, 'Jobs', { source: { entry: 'batch.mjs' }, inputBucket, inputPrefix: 'incoming/',
 *   outputBucket, outputPrefixes: ['normalized/'], failurePrefix: 'failures/', memoryMiB: 512, timeoutSeconds: 60 });
 */
export class BatchOperationsHandler extends Construct {
  /** The function jobs invoke. */
  readonly function: IFunction;
  /** The function's execution role. */
  readonly role: Role;
  /** The function's log group. */
  readonly logGroup: LogGroup;
  /** The role a job runs with (CreateJob's RoleArn). */
  readonly jobRole: Role;

  constructor(scope: Construct, id: string, props: BatchOperationsHandlerProps) {
    checkProps('BatchOperationsHandler', props, BATCH_OPERATIONS_HANDLER_PROP_NAMES, { source: WORKER_SOURCE_NAMES });
    super(scope, id);
    const root = props.jobFilesPrefix ?? BATCH_OPERATIONS_PREFIX;
    this.logGroup = new LogGroup(this, 'LogGroup', { retention: props.logRetention ?? RetentionDays.ONE_MONTH });
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Execution role of the rerun Batch Operations handler',
    });
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );
    const common = {
      description: 'rerun Batch Operations handler (LambdaInvoke jobs of rerun reprocess)',
      runtime: WORKER_RUNTIME,
      architecture: Architecture.ARM_64,
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: ApplicationLogLevel.INFO,
      systemLogLevelV2: SystemLogLevel.INFO,
      memorySize: props.memoryMiB,
      timeout: Duration.seconds(props.timeoutSeconds),
      environment: {
        OUTPUT_BUCKET: props.outputBucket.bucketName,
        // The only bucket it reads: a task naming another (the output bucket too) is refused by name.
        INPUT_BUCKETS: props.inputBucket.bucketName,
        LOG_LEVEL: 'info',
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
    };
    const source = props.source;
    this.function =
      'code' in source
        ? new LambdaFunction(this, 'Function', { ...common, code: source.code, handler: source.handler })
        : new NodejsFunction(this, 'Function', { ...common, ...entryFunctionProps(source) });
    grantPrefixAccess(this.function, props.inputBucket, [props.inputPrefix], { read: true });
    grantPrefixAccess(this.function, props.outputBucket, props.outputPrefixes, {
      read: true,
      write: true,
      delete: true,
    });
    grantPrefixAccess(this.function, props.outputBucket, [props.failurePrefix], {
      read: true,
      write: true,
      delete: true,
    });
    acknowledgePrefixWildcards(this.role, props.inputBucket, [props.inputPrefix]);
    acknowledgePrefixWildcards(this.role, props.outputBucket, [...props.outputPrefixes, props.failurePrefix]);

    const manifests = batchOperationsManifestPrefix(root);
    const reports = `${batchOperationsReportPrefix(root)}/`;
    this.jobRole = new Role(this, 'JobRole', {
      // Only S3 Batch Operations, and only for jobs of this account (confused deputy).
      assumedBy: new ServicePrincipal('batchoperations.s3.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
      description:
        'Role of the S3 Batch Operations jobs of rerun reprocess: read the manifest, invoke, write the report',
    });
    this.jobRole.addToPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject', 's3:GetObjectVersion'],
        resources: [`${props.outputBucket.bucketArn}/${manifests}*`],
      }),
    );
    this.jobRole.addToPolicy(
      new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.function.functionArn] }),
    );
    this.jobRole.addToPolicy(
      new PolicyStatement({ actions: ['s3:PutObject'], resources: [`${props.outputBucket.bucketArn}/${reports}*`] }),
    );
    this.jobRole.addToPolicy(
      new PolicyStatement({ actions: ['s3:GetBucketLocation'], resources: [props.outputBucket.bucketArn] }),
    );
    // On an SSE-KMS output bucket the job reads its manifest (Decrypt) and writes its report
    // (GenerateDataKey) under the bucket's key: without it, the job fails before its first task.
    if (props.outputBucket.encryptionKey) {
      grantKeyUseVia(this.jobRole, props.outputBucket.encryptionKey, KeyService.S3, { write: true });
    }
    acknowledgePrefixWildcards(this.jobRole, props.outputBucket, [manifests, reports]);

    const why = 'Invoked synchronously by S3 Batch Operations, one task per call';
    acknowledgeCheckov(this.function, CheckovCheck.LAMBDA_VPC, `${why}; it calls only S3, nothing inside a VPC.`);
    acknowledgeCheckov(
      this.function,
      CheckovCheck.LAMBDA_DLQ,
      `${why}, never asynchronously: a function DLQ would never receive anything; S3 retries and reports failed tasks.`,
    );
    acknowledgeCheckov(
      this.function,
      CheckovCheck.LAMBDA_CONCURRENCY,
      `${why}; S3 scales a job's invocations itself and backs off on throttles, so no concurrency is reserved.`,
    );
    acknowledgeCheckov(
      this.function,
      CheckovCheck.LAMBDA_ENV_CMK,
      'Lambda encrypts environment variables at rest with its AWS managed key; they hold resource names only.',
    );
    acknowledgeCheckov(
      this.logGroup,
      CheckovCheck.LOGS_KMS,
      'CloudWatch Logs encrypts log data at rest; the logs hold object keys and reasons, no secrets.',
    );
  }
}
