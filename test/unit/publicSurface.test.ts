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
      'DeadlineNearError',
      'EndpointUnusableError',
      'EventParseError',
      'FullBatchFailureError',
      'InputTooLargeError',
      'MissingEnvironmentVariableError',
      'OutputKeyOutsidePrefixesError',
      'OutputNotificationInputError',
      'OutputWriter',
      'PublishConflictError',
      'RecordStatus',
      'RerunError',
      'S3AccessDeniedError',
      'S3BucketMissingError',
      'S3BucketNameInvalidError',
      'S3FailureRecorder',
      'S3ObjectStore',
      'WebhookDeliveryError',
      'WorkerConfigurationError',
      'checkEndpoint',
      'createAwsClients',
      'createBatchOperationsHandler',
      'createSqsBatchHandler',
      'createTransformInput',
      'decodeS3EventKey',
      'decodeText',
      'defineWorker',
      'deterministicKey',
      'encodeManifestKey',
      'judgeOutput',
      'notifyAfterOutput',
      'notifyWebhook',
      'onRecordOutcome',
      'optionalEnv',
      'parseBatchOperationsEvent',
      'parseS3EventBody',
      'processObject',
      'requireEnv',
      'splitLines',
    ],
    types: [
      'AfterOutputHook',
      'AfterOutputResult',
      'AwsClientOptions',
      'AwsClients',
      'BatchOperationsEvent',
      'BatchOperationsHandlerOptions',
      'BatchOperationsResponse',
      'BatchOperationsResultCode',
      'BatchOperationsSchema',
      'BatchOperationsTask',
      'BatchOperationsTaskResult',
      'CheckEndpointOptions',
      'ConflictRetryPolicy',
      'CoveredInput',
      'DeleteStatus',
      'DeterministicKeyOptions',
      'FailedDelivery',
      'FailureRecord',
      'FailureRecorder',
      'FirstRun',
      'FirstRunObject',
      'FirstRunPath',
      'FirstRunPolicy',
      'GetResult',
      'GiveUpReason',
      'IntakeResult',
      'Judgement',
      'Logger',
      'MemoryBudget',
      'NotifyAfterOutputOptions',
      'NotifyWebhookOptions',
      'ObjectOutcome',
      'OutcomeHook',
      'OutcomeHookContext',
      'OutputDescription',
      'OutputExpectation',
      'OutputHead',
      'OutputState',
      'OutputStream',
      'OutputWriterOptions',
      'ParsedBatchOperationsEvent',
      'ParsedBatchOperationsTask',
      'ProcessObjectOptions',
      'ReadDeadline',
      'RecordOutcome',
      'ReleaseMemory',
      'S3FailureRecorderOptions',
      'S3ObjectEvent',
      'S3ObjectStoreOptions',
      'S3Operation',
      'S3PutOptions',
      'S3Target',
      'SourceIdentity',
      'SqsBatchHandlerOptions',
      'StartedDelivery',
      'StartedRecord',
      'TransformAdmission',
      'TransformInput',
      'TransformOutputs',
      'WebhookResponse',
      'WorkerDefinition',
      'WorkerDefinitionInput',
      'WriteCondition',
      'WriteResult',
      'WriteStatus',
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
      'RerunWindowStage',
      'SourceAccountSqsDestination',
      'SqsWorker',
      'StackConfigurationInvalidError',
      'WINDOW_STAGE_DEFAULT_SETTINGS',
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
      'windowStageOutputKeys',
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
      'RerunWindowStageProps',
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
      'createDynamoDBClient',
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
  './observability': {
    entry: 'src/observability.ts',
    values: [
      'LogLevel',
      'OutcomeMetric',
      'addOutcome',
      'createInvocationLogger',
      'createLogger',
      'describeError',
      'emfOutcomeMetrics',
      'formatEmfLine',
      'fromConsole',
      'fromPino',
      'fromPowertoolsLogger',
      'lambdaContextFields',
      'lambdaEnvironment',
      'pinoLambdaOptions',
      'powertoolsOutcomeMetrics',
      'silentLogger',
      'xrayTraceIdOf',
      'zeroOutcomeCounts',
    ],
    types: [
      'ConsoleLike',
      'EmfDocument',
      'EmfMetric',
      'EmfOutcomeMetricsOptions',
      'ErrorDescription',
      'FieldLogger',
      'InvocationFacts',
      'LambdaContextFields',
      'LambdaEnvironment',
      'Logger',
      'LoggerOptions',
      'OutcomeCounts',
      'PinoLike',
      'PowertoolsLoggerLike',
      'PowertoolsMetricsLike',
      'PowertoolsOutcomeMetricsOptions',
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
      'FunctionInvoker',
      'InvocationOutcome',
      'InvocationReport',
      'InvocationRequest',
      'InvocationResult',
      'LocalBatchOperationsJobOptions',
      'LocalBatchOperationsJobResult',
      'LocalJobManifest',
      'LocalRunnerOptions',
      'LocalTaskOutcome',
      'ManifestRow',
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
      'CsvRowBytes',
      'DEFAULT_MAX_INFLATED_BYTES',
      'DEFAULT_MAX_INFLATE_RATIO',
      'DEFAULT_MAX_NESTING_DEPTH',
      'DEFAULT_MAX_RAW_CHARS',
      'DEFAULT_MAX_RECORD_BYTES',
      'FormatRegistry',
      'GZIP_EXTENSION',
      'InputFormat',
      'LineBytes',
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
      'csvFormat',
      'defaultFormats',
      'formatOfKey',
      'formatQuarantineLine',
      'ndjsonFormat',
      'normalizeHeaderName',
      'normalizeRecords',
      'sniffContent',
    ],
    types: [
      'ByteTarget',
      'CsvHeader',
      'CsvHeaderProblem',
      'CsvRecord',
      'DecodeLimits',
      'DecodeReport',
      'FormatEnd',
      'FormatReader',
      'InputFormatDefinition',
      'LineSink',
      'NormalizeOptions',
      'NormalizePrefixes',
      'NormalizeResult',
      'NormalizeSummary',
      'NormalizeWorkerOptions',
      'QuarantineEntry',
      'RecordCounts',
      'RecordEmitter',
      'RecordLimits',
      'SniffResult',
      'TextLine',
    ],
  },
  './window': {
    entry: 'src/window/index.ts',
    values: [
      'CLOSED_WINDOW',
      'DEFAULT_MAX_WINDOW_INPUTS',
      'DEFAULT_MAX_WINDOW_OUTPUT_BYTES',
      'MAX_RANGE_WINDOWS',
      'PartitionKeysInvalidError',
      'PartitionTemplateInvalidError',
      'S3PartitionStore',
      'TimeGrain',
      'WINDOW_TASK_MESSAGE_TYPE',
      'WINDOW_TASK_MESSAGE_VERSION',
      'WindowMappingUnsupportedError',
      'WindowNameInvalidError',
      'WindowOutputInvalidError',
      'WindowOutputState',
      'WindowPartsPendingError',
      'WindowRangeReversedError',
      'WindowRangeTooLargeError',
      'WindowStatus',
      'WindowTaskConfigurationError',
      'WindowTaskMessageInvalidError',
      'WindowTooLargeError',
      'createWindowTaskHandler',
      'defineWindowTask',
      'judgeWindow',
      'parseWindowTaskMessage',
      'partitionScheme',
      'scheduledWindowTaskBody',
      'windowRetryDelaySeconds',
      'windowTaskMessage',
      'windowsIntersecting',
    ],
    types: [
      'GetExactResult',
      'ListOptions',
      'ListedLineageEntry',
      'ListedObject',
      'ParsedWindowTaskMessage',
      'PartitionScheme',
      'PartitionSpec',
      'PartitionWindow',
      'ResolvedInputSource',
      'SkippedKey',
      'StaticPartitionSpec',
      'StaticWindow',
      'TimePartitionScheme',
      'TimePartitionSpec',
      'TimeWindow',
      'UnpartitionedSpec',
      'WholeWindow',
      'WindowBuildContext',
      'WindowDeadline',
      'WindowInput',
      'WindowInputSource',
      'WindowLineageEntry',
      'WindowListing',
      'WindowMarker',
      'WindowObjectsSource',
      'WindowOutcome',
      'WindowOutputJudgement',
      'WindowParts',
      'WindowRangeOptions',
      'WindowReading',
      'WindowRunOptions',
      'WindowStatusReport',
      'WindowTask',
      'WindowTaskDefinition',
      'WindowTaskEnvelope',
      'WindowTaskHandlerOptions',
      'WindowTaskMessageBody',
      'WindowTaskMessageExpectation',
      'WindowTaskMessageOptions',
      'WindowTaskOutputsSource',
      'WindowVerdict',
      'WindowWords',
      'WindowWriter',
    ],
  },
  './pipeline': {
    entry: 'src/pipeline/index.ts',
    values: [
      'PIPELINE_DESCRIPTION_VERSION',
      'PipelineDescriptionError',
      'TimeGrain',
      'definePipeline',
      'describeKeyRule',
      'describePipeline',
      'isCustomKeyRule',
      'outputKeyOf',
      'parsePipelineDescription',
    ],
    types: [
      'CustomKeyRule',
      'DescribedKeyRule',
      'DescribedStage',
      'DeterministicKeyRule',
      'ObjectRef',
      'ObjectStage',
      'OutputKeyRule',
      'PartitionSpec',
      'PipelineDefinition',
      'PipelineDescription',
      'PublishedCustomKeyRule',
      'StageDefinition',
      'StageInput',
      'StaticPartitionSpec',
      'TimePartitionSpec',
      'UnpartitionedSpec',
      'WindowStage',
    ],
  },
} as const;

/**
 * Error classes of src/ that no entry exports, each because no exported function throws it:
 * PartitionWindowInvalidError comes from the CLI's partition windows (src/keys/partition.ts, which no
 * entry exports), and the CLI turns it into a usage error. ManifestLineTooLongError comes from the
 * manifest readers of `rerun reprocess` and the local Batch Operations stand-in (src/intake/manifestLines.ts,
 * which no entry exports), and so does ManifestTooLargeError; a caller recognises them by
 * RerunError.isRerunError and their names. SealInProgressError reaches only a caller of processObject that
 * passes a `deadline` (the batch handler, which defers the message by its retryAfterSeconds); the root
 * keeps to its 40 names, and such a caller recognises it by its name and retryAfterSeconds.
 */
const INTERNAL_ERRORS: readonly string[] = [
  'SealInProgressError',
  'PartitionWindowInvalidError',
  'ManifestLineTooLongError',
  'ManifestTooLargeError',
];

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

  it('the API reference (typedoc.json) documents every pinned subpath, and nothing else', () => {
    // A subpath the reference leaves out makes every type it declares a TypeDoc warning on the
    // pages that reference it, and `npm run docs` fails CI on a warning.
    const typedoc = JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8')) as { entryPoints: string[] };
    expect([...typedoc.entryPoints].sort()).toEqual(
      Object.values(SURFACE)
        .map((surface) => surface.entry)
        .sort(),
    );
  });

  it('the root holds at most 40 runtime names: what a worker author needs, the rest in subpaths', () => {
    expect(SURFACE['.'].values.length).toBeLessThanOrEqual(40);
    // The ledger lives in ./ledger only, logging and metrics in ./observability only.
    for (const subpath of ['./ledger', './observability'] as const) {
      expect(SURFACE[subpath].values.filter((name) => SURFACE['.'].values.includes(name as never))).toEqual([]);
    }
  });

  it("every error class is exported: the ledger's by ./ledger, the constructs' by ./cdk, the window tasks' and partitions' by ./window, the pipeline description's by ./pipeline, the rest by \".\"", () => {
    const ledger = errorClassesUnder('src/ledger');
    const cdk = errorClassesUnder('src/cdk');
    const window = [...errorClassesUnder('src/partitions'), ...errorClassesUnder('src/window')];
    const pipeline = errorClassesUnder('src/pipeline');
    const library = errorClassesUnder('src').filter(
      (name) =>
        !ledger.includes(name) &&
        !cdk.includes(name) &&
        !window.includes(name) &&
        !pipeline.includes(name) &&
        !INTERNAL_ERRORS.includes(name),
    );
    expect(pipeline.filter((name) => !SURFACE['./pipeline'].values.includes(name as never))).toEqual([]);
    expect(ledger.filter((name) => !SURFACE['./ledger'].values.includes(name as never))).toEqual([]);
    expect(cdk.filter((name) => !SURFACE['./cdk'].values.includes(name as never))).toEqual([]);
    expect(window.filter((name) => !SURFACE['./window'].values.includes(name as never))).toEqual([]);
    expect(library.filter((name) => !SURFACE['.'].values.includes(name as never))).toEqual([]);
    expect(errorClassesUnder('local').filter((name) => !SURFACE['./local'].values.includes(name as never))).toEqual([]);
    for (const name of library) {
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
