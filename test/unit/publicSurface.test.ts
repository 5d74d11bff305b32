import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { RerunPipeline, RerunPipelineProps, referenceWorker, WorkerSource } from '../../src/cdk/index.js';
import type {
  AfterOutputHook,
  AfterOutputResult,
  Logger,
  OutputDescription,
  RecordOutcome,
  SqsBatchHandlerOptions,
  TransformInput,
  TransformOutputs,
  WorkerDefinition,
} from '../../src/index.js';
import * as root from '../../src/index.js';

/**
 * The public surface of each subpath of the package, pinned: the runtime exports (read from the
 * module) and the type-only exports (read from the entry's `export type` / `type X` specifiers).
 * Adding or removing an export fails here until this list says so, on purpose: the list is the
 * package's API, reviewed with every change. The `expectTypeOf` checks are compiled by `tsc -p .`.
 */
const SURFACE = {
  '.': {
    entry: 'src/index.ts',
    values: [
      'BatchOperationsEventError',
      'BatchOperationsResultCode',
      'BatchOperationsSchema',
      'DeadlineNearError',
      'DeleteStatus',
      'DynamoDBLedger',
      'EndpointUnusableError',
      'EventParseError',
      'FullBatchFailureError',
      'InputTooLargeError',
      'IntakeKind',
      'LedgerConfigurationError',
      'LedgerInProgressError',
      'LedgerLeaseLostError',
      'LedgerPayloadMismatchError',
      'LedgerRecordCorruptError',
      'LedgerResultUnstorableError',
      'LedgerStoredFailureError',
      'LogLevel',
      'MetadataKey',
      'MissingEnvironmentVariableError',
      'OutcomeMetric',
      'OutputKeyOutsidePrefixesError',
      'OutputNotificationInputError',
      'OutputState',
      'OutputWriter',
      'PartitionWindowInvalidError',
      'PublishConflictError',
      'RecordStatus',
      'ReferenceWorkerBundleMissingError',
      'RerunError',
      'S3AccessDeniedError',
      'S3BucketMissingError',
      'S3BucketNameInvalidError',
      'S3FailureRecorder',
      'S3ObjectStore',
      'StackConfigurationInvalidError',
      'WebhookDeliveryError',
      'WorkerBundleUnusableError',
      'WorkerConfigurationError',
      'WriteStatus',
      'addOutcome',
      'batchOperationsFailureSource',
      'buildOutputMetadata',
      'checkEndpoint',
      'createAwsClients',
      'createBatchOperationsHandler',
      'createInvocationLogger',
      'createLedgerTable',
      'createLogger',
      'createSqsBatchHandler',
      'createTransformInput',
      'decodeS3EventKey',
      'decodeText',
      'defineWorker',
      'describeError',
      'deterministicKey',
      'emfOutcomeMetrics',
      'encodeManifestKey',
      'formatEmfLine',
      'fromConsole',
      'fromPino',
      'fromPowertoolsLogger',
      'judgeOutput',
      'lambdaContextFields',
      'lambdaEnvironment',
      'notifyAfterOutput',
      'notifyWebhook',
      'onRecordOutcome',
      'optionalEnv',
      'parseBatchOperationsEvent',
      'parseS3EventBody',
      'pinoLambdaOptions',
      'powertoolsOutcomeMetrics',
      'processObject',
      'readSummary',
      'requireEnv',
      'silentLogger',
      'splitLines',
      'taskResult',
      'xrayTraceIdOf',
      'zeroOutcomeCounts',
    ],
    types: [
      'AfterOutputHook',
      'AfterOutputResult',
      'AwsClientOptions',
      'AwsClients',
      'BatchOperationsEvent',
      'BatchOperationsHandlerOptions',
      'BatchOperationsResponse',
      'BatchOperationsTask',
      'BatchOperationsTaskResult',
      'CheckEndpointOptions',
      'ConsoleLike',
      'DeterministicKeyOptions',
      'DynamoDBLedgerOptions',
      'EmfDocument',
      'EmfMetric',
      'EmfOutcomeMetricsOptions',
      'ErrorDescription',
      'FailedDelivery',
      'FailureRecorder',
      'GetResult',
      'InvocationFacts',
      'Judgement',
      'LambdaContextFields',
      'LambdaEnvironment',
      'Ledger',
      'Logger',
      'LoggerOptions',
      'NotifyAfterOutputOptions',
      'NotifyWebhookOptions',
      'ObjectOutcome',
      'OutcomeCounts',
      'OutcomeHook',
      'OutcomeHookContext',
      'OutputDescription',
      'OutputExpectation',
      'OutputHead',
      'OutputStream',
      'OutputWriterOptions',
      'ParsedBatchOperationsEvent',
      'ParsedBatchOperationsTask',
      'PinoLike',
      'PowertoolsLoggerLike',
      'PowertoolsMetricsLike',
      'PowertoolsOutcomeMetricsOptions',
      'ProcessObjectOptions',
      'RecordOutcome',
      'S3FailureRecorderOptions',
      'S3ObjectEvent',
      'SourceIdentity',
      'SqsBatchHandlerOptions',
      'StartedDelivery',
      'StartedRecord',
      'TransformInput',
      'TransformOutputs',
      'WebhookResponse',
      'WorkerDefinition',
      'WriteCondition',
      'WriteResult',
    ],
  },
  './cdk': {
    entry: 'src/cdk/index.ts',
    values: [
      'BATCH_OPERATIONS_STACK_OUTPUTS',
      'BatchOperationsHandler',
      'DataBucket',
      'KeyService',
      'LedgerTable',
      'PipelineDashboard',
      'ReferenceWorker',
      'ReferenceWorkerBundleMissingError',
      'RerunPipeline',
      'SourceAccountSqsDestination',
      'SqsWorker',
      'StackConfigurationInvalidError',
      'WorkerBundleUnusableError',
      'allowCloudWatchAlarms',
      'cloudWatchAlarmConditions',
      'denyBlindDeleteStatement',
      'denyBlindOverwriteStatement',
      'grantKeyUseVia',
      'grantLedgerAccess',
      'grantPrefixAccess',
      'objectArnsUnder',
      'referenceWorker',
      'requireConditionalDeletes',
      'requireConditionalWrites',
    ],
    types: [
      'BatchOperationsHandlerProps',
      'DataBucketProps',
      'LedgerTableProps',
      'LedgerTopology',
      'PipelineDashboardProps',
      'PrefixAccessOptions',
      'ReferenceWorkerName',
      'RerunPipelineProps',
      'RerunWebhookSource',
      'SqsWorkerProps',
      'WorkerFunctionProps',
      'WorkerSource',
      'WorkerTopology',
    ],
  },
  './ledger': {
    entry: 'src/ledger/index.ts',
    values: [
      'DynamoDBLedger',
      'LedgerConfigurationError',
      'LedgerInProgressError',
      'LedgerLeaseLostError',
      'LedgerPayloadMismatchError',
      'LedgerRecordCorruptError',
      'LedgerResultUnstorableError',
      'LedgerStoredFailureError',
      'LedgerWriteStage',
      'OnceStatus',
      'canonicalJson',
      'createLedgerTable',
      'hashPayload',
    ],
    types: [
      'CreateLedgerTableOptions',
      'CreateLedgerTableResult',
      'DynamoDBLedgerOptions',
      'EffectContext',
      'Ledger',
      'OnceOptions',
      'OnceResult',
      'StoredFailure',
    ],
  },
  './local': {
    entry: 'local/index.ts',
    values: [
      'HandlerExportMissingError',
      'HandlerModuleLoadError',
      'IDEMPOTENCY_KEY_HEADER',
      'LambdaRuntimeSlotError',
      'LambdaRuntimeToolsMissingError',
      'LocalRunner',
      'LocalSetupError',
      'ProvisionAction',
      'PythonMissingError',
      'PythonTool',
      'PythonToolInstallError',
      'RunnerConfigurationError',
      'RunnerDrainTimeoutError',
      'ensureBucket',
      'ensurePythonTool',
      'ensureQueue',
      'ensureQueueAttributes',
      'loadHandler',
      'parseManifestCsv',
      'runLocalBatchOperationsJob',
      'startMotoServer',
      'startWebhookSink',
    ],
    types: [
      'BatchOperationsFunction',
      'EnsurePythonToolOptions',
      'InvocationReport',
      'LocalBatchOperationsJobOptions',
      'LocalBatchOperationsJobResult',
      'LocalRunnerOptions',
      'LocalTaskOutcome',
      'MotoServer',
      'RunUntilDrainedOptions',
      'SinkDelivery',
      'SinkFault',
      'SinkRequestInfo',
      'SqsLambdaHandler',
      'StartMotoServerOptions',
      'WebhookSink',
      'WebhookSinkOptions',
    ],
  },
  './normalize': {
    entry: 'src/normalize/index.ts',
    values: [
      'ContentKind',
      'CsvRecordReader',
      'DEFAULT_MAX_INFLATED_BYTES',
      'DEFAULT_MAX_INFLATE_RATIO',
      'DEFAULT_MAX_NESTING_DEPTH',
      'DEFAULT_MAX_RAW_CHARS',
      'DEFAULT_MAX_RECORD_BYTES',
      'GZIP_EXTENSION',
      'InputFormat',
      'LineReader',
      'NORMALIZE_CODE_VERSION',
      'NORMALIZE_PREFIXES',
      'RecordDisposition',
      'SNIFF_BYTES',
      'SupportedExtensions',
      'TextEncoding',
      'UNTERMINATED_QUOTE_REASON',
      'compileCsvHeader',
      'createNormalizeWorker',
      'formatOfKey',
      'formatQuarantineLine',
      'normalizeHeaderName',
      'normalizeRecords',
      'sniffContent',
    ],
    types: [
      'CsvHeader',
      'CsvHeaderProblem',
      'CsvRecord',
      'DecodeLimits',
      'DecodeReport',
      'LineSink',
      'NormalizeOptions',
      'NormalizePrefixes',
      'NormalizeResult',
      'NormalizeSummary',
      'NormalizeWorkerOptions',
      'QuarantineEntry',
      'RecordCounts',
      'RecordLimits',
      'SniffResult',
      'TextLine',
    ],
  },
} as const;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, { types: string; default: string } | string>;
};

/** The names an entry exports as types only: `export type { A } from` and `export { type A } from`. */
function typeOnlyExports(source: string): string[] {
  const names: string[] = [];
  for (const match of source.matchAll(/export (type )?\{([^}]*)\} from/g)) {
    for (const raw of (match[2] ?? '').split(',')) {
      const name = raw.trim();
      if (name === '') continue;
      if (match[1]) names.push(name);
      else if (name.startsWith('type ')) names.push(name.slice('type '.length));
    }
  }
  return names.sort();
}

/** Every `class X extends ...Error` declared in the .ts files under `dir` (tests excluded). */
function errorClassesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        for (const m of readFileSync(path, 'utf8').matchAll(/^export class (\w+) extends \w*Error\b/gm)) {
          found.push(m[1] as string);
        }
      }
    }
  };
  walk(join(ROOT, dir));
  return found.sort();
}

describe('the public surface of each subpath', () => {
  for (const [subpath, surface] of Object.entries(SURFACE)) {
    it(`${subpath}: the runtime and type exports are the pinned lists`, async () => {
      const module = (await import(join(ROOT, surface.entry))) as Record<string, unknown>;
      expect(Object.keys(module).sort()).toEqual([...surface.values]);
      expect(typeOnlyExports(readFileSync(join(ROOT, surface.entry), 'utf8'))).toEqual([...surface.types]);
    });

    it(`${subpath}: the exports map serves the compiled entry and its declarations`, () => {
      const compiled = `./dist/${relative(ROOT, join(ROOT, surface.entry)).replace(/\.ts$/, '')}`;
      expect(packageJson.exports[subpath]).toEqual({ types: `${compiled}.d.ts`, default: `${compiled}.js` });
    });
  }

  it('the exports map has no subpath that is not pinned here', () => {
    expect(Object.keys(packageJson.exports).sort()).toEqual([...Object.keys(SURFACE), './package.json'].sort());
  });

  it('"." exports every error class of the library, "./local" every one of the local tooling', () => {
    expect(errorClassesUnder('src').filter((name) => !SURFACE['.'].values.includes(name as never))).toEqual([]);
    expect(errorClassesUnder('local').filter((name) => !SURFACE['./local'].values.includes(name as never))).toEqual([]);
    for (const name of errorClassesUnder('src')) {
      const value = (root as Record<string, unknown>)[name] as new (...args: never[]) => unknown;
      expect(value.prototype, name).toBeInstanceOf(Error);
    }
  });

  it('reads type-only specifiers as a bundler would', () => {
    expect(
      typeOnlyExports(
        "export { a, type B } from './x.js';\nexport type { C, D } from './y.js';\nexport { e } from './z.js';",
      ),
    ).toEqual(['B', 'C', 'D']);
  });
});

describe('the hook and worker types have their documented shapes', () => {
  it('afterOutput: (output, { source, remainingTimeMs, logger }) => Promise<{ executed, note }>', () => {
    expectTypeOf<SqsBatchHandlerOptions['afterOutput']>().toEqualTypeOf<AfterOutputHook | undefined>();
    expectTypeOf<Parameters<AfterOutputHook>[0]>().toEqualTypeOf<OutputDescription>();
    expectTypeOf<Parameters<AfterOutputHook>[1]>().toEqualTypeOf<{
      readonly source: { bucket: string; key: string };
      readonly remainingTimeMs: number;
      readonly logger: Logger;
    }>();
    expectTypeOf<ReturnType<AfterOutputHook>>().toEqualTypeOf<Promise<AfterOutputResult>>();
    expectTypeOf<AfterOutputResult>().toEqualTypeOf<{ readonly executed: boolean; readonly note: string }>();
  });

  it('onRecordOutcome: a listener of RecordOutcome, returning its unsubscribe', () => {
    expectTypeOf(root.onRecordOutcome).parameter(0).toEqualTypeOf<(outcome: RecordOutcome) => void>();
    expectTypeOf(root.onRecordOutcome).returns.toEqualTypeOf<() => void>();
    expectTypeOf<RecordOutcome['status']>().toEqualTypeOf<'processed' | 'skipped' | 'failed' | 'requeued'>();
    expectTypeOf<RecordOutcome>().toHaveProperty('messageId').toEqualTypeOf<string>();
    expectTypeOf<RecordOutcome>().toHaveProperty('reason').toEqualTypeOf<string>();
  });

  it('defineWorker: a transform of (TransformInput, TransformOutputs) into a summary', () => {
    expectTypeOf<Parameters<WorkerDefinition['transform']>>().toEqualTypeOf<[TransformInput, TransformOutputs]>();
    expectTypeOf<TransformInput['lines']>().toEqualTypeOf<() => AsyncIterable<string>>();
    expectTypeOf<TransformInput['text']>().toEqualTypeOf<() => AsyncIterable<string>>();
    expectTypeOf<TransformOutputs['output']['write']>().toEqualTypeOf<(chunk: string | Uint8Array) => Promise<void>>();
    expectTypeOf(root.defineWorker<{ lines: number }>).returns.toEqualTypeOf<WorkerDefinition<{ lines: number }>>();
  });

  it("RerunPipeline: the minimal props are a worker's entry", () => {
    expectTypeOf<{ worker: { entry: string } }>().toExtend<RerunPipelineProps>();
    expectTypeOf<{ entry: string }>().toExtend<WorkerSource>();
    expectTypeOf<ConstructorParameters<typeof RerunPipeline>[2]>().toEqualTypeOf<RerunPipelineProps>();
  });

  it("referenceWorker: one of rerun's own workers by name, as a WorkerSource", () => {
    expectTypeOf<Parameters<typeof referenceWorker>>().toEqualTypeOf<['normalize' | 'summarize']>();
    expectTypeOf<ReturnType<typeof referenceWorker>>().toEqualTypeOf<WorkerSource>();
  });

  it('createSqsBatchHandler: a Lambda SQS handler with partial batch responses', () => {
    expectTypeOf(root.createSqsBatchHandler).returns.toEqualTypeOf<
      (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>
    >();
  });
});
