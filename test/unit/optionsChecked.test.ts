import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { describe, expect, it } from 'vitest';
import { topology } from '../../app/topology.js';
import {
  ensurePythonTool,
  LocalRunner,
  PythonTool,
  runLocalBatchOperationsJob,
  startMotoServer,
  startWebhookSink,
} from '../../local/index.js';
import {
  BatchOperationsHandler,
  DataBucket,
  grantKeyUseVia,
  grantPrefixAccess,
  KeyService,
  LedgerTable,
  PipelineDashboard,
  RerunPipeline,
  RerunWindowStage,
  SqsWorker,
} from '../../src/cdk/index.js';
import {
  checkEndpoint,
  createAwsClients,
  createBatchOperationsHandler,
  createSqsBatchHandler,
  createTransformInput,
  defineWorker,
  deterministicKey,
  judgeOutput,
  notifyAfterOutput,
  notifyWebhook,
  OutputWriter,
  processObject,
  RerunError,
  S3FailureRecorder,
  S3ObjectStore,
  WorkerConfigurationError,
} from '../../src/index.js';
import { createDynamoDBClient, createLedgerTable, DynamoDBLedger } from '../../src/ledger/index.js';
import { CsvRecordReader, createNormalizeWorker, LineReader, normalizeRecords } from '../../src/normalize/index.js';
import { createLogger, emfOutcomeMetrics, fromConsole, powertoolsOutcomeMetrics } from '../../src/observability.js';
import { unknownOptionsMessage } from '../../src/options/checkOptions.js';
import { definePipeline } from '../../src/pipeline/index.js';
import {
  createWindowTaskHandler,
  defineWindowTask,
  parseWindowTaskMessage,
  S3PartitionStore,
  windowTaskMessage,
} from '../../src/window/index.js';

/*
 * Every public options object of the package (the root entry and the subpaths of package.json's
 * "exports"), given a misspelt option: each refuses it by name with the nearest known name, as a
 * rerun error of its own family, before doing anything else. The same options without the typo pass.
 * A typo is cast past TypeScript, as a JavaScript caller (or a spread of untyped config) would pass it.
 */

/** Stands for "unreachable": a call without the check would fail fast here instead of doing work. */
const NOWHERE = 'http://127.0.0.1:1';

// Clients that reach nothing: a call the check failed to stop would be refused a connection at once.
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const unreachable = { region: 'us-east-1', credentials, endpoint: NOWHERE, maxAttempts: 1 };
const s3 = new S3Client(unreachable);
const sqs = new SQSClient(unreachable);
const dynamodb = new DynamoDBClient(unreachable);
const store = new S3ObjectStore(s3);
const source = { bucket: 'in', key: 'incoming/a.csv', eTag: '"e"', versionId: undefined } as never;

const workerDefinition = {
  name: 'upper',
  codeVersion: 'upper@1',
  outputBucket: 'out',
  outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' },
  async transform() {
    return {};
  },
};
const worker = defineWorker(workerDefinition);

const windowDefinition = {
  name: 'daily',
  codeVersion: 'daily@1',
  partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
  inputs: [
    {
      name: 'hourly',
      prefix: 'events/',
      partitions: { kind: 'time', grain: 'hourly', template: 'dt={yyyy}-{MM}-{dd}/h={HH}' },
    },
  ],
  output: { bucket: 'out', prefix: 'daily/', fileName: 'out.json' },
  build: async () => undefined,
} as const;

const pipeline = () =>
  definePipeline({
    name: 'uploads',
    stages: {
      upper: {
        kind: 'object',
        input: { prefix: 'incoming/' },
        outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' },
        codeVersion: 'upper@1',
      },
      daily: {
        kind: 'window',
        input: { stage: 'upper' },
        partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
        outputPrefix: 'daily/',
        codeVersion: 'daily@1',
        fileName: 'counts.json',
      },
    },
  });

const prebuilt = () => ({
  code: Code.fromInline('exports.handler = async () => ({ batchItemFailures: [] });'),
  handler: 'index.handler',
  outputPrefixes: ['upper/'],
});

/** A fresh stack for one construct (a construct id may be used once per scope). */
const stack = () => new Stack(new App(), 'Options');

const runnerOptions = {
  queueUrl: `${NOWHERE}/q`,
  sqs,
  handler: async () => undefined,
  batchSize: 10,
  maxBatchingWindowSeconds: 0,
  timeoutSeconds: 30,
  maxConcurrency: 1,
};

interface Case {
  /** The public options object, as the message names it. */
  readonly subject: string;
  /** The misspelt option and the name it should suggest. */
  readonly typo: string;
  readonly suggestion: string;
  /** The error class (family) expected. */
  readonly family: string;
  /** Calls with the valid options, plus `extra` merged where the typo belongs. */
  readonly call: (extra: Record<string, unknown>) => unknown;
  /** Whether the valid call is run (false where it would reach a network or start a process). */
  readonly runsValid: boolean;
}

const W = 'WorkerConfigurationError';
const STACK = 'StackConfigurationInvalidError';

const CASES: readonly Case[] = [
  // rerun-pipeline
  {
    subject: 'defineWorker',
    typo: 'outputBuckt',
    suggestion: 'outputBucket',
    family: W,
    call: (x) => defineWorker({ ...workerDefinition, ...x }),
    runsValid: true,
  },
  {
    subject: 'createSqsBatchHandler',
    typo: 'concurency',
    suggestion: 'concurrency',
    family: W,
    call: (x) => createSqsBatchHandler({ worker, store, sqs, ...x }),
    runsValid: true,
  },
  {
    subject: 'createSqsBatchHandler codeVersionMarker',
    typo: 'prefx',
    suggestion: 'prefix',
    family: W,
    call: (x) =>
      createSqsBatchHandler({
        worker,
        store,
        sqs,
        codeVersionMarker: { bucket: 'out', prefix: 'code-versions/', ...x },
      }),
    runsValid: true,
  },
  {
    subject: 'createBatchOperationsHandler',
    typo: 'concurency',
    suggestion: 'concurrency',
    family: W,
    call: (x) => createBatchOperationsHandler({ worker, store, ...x }),
    runsValid: true,
  },
  {
    subject: 'createAwsClients',
    typo: 'regoin',
    suggestion: 'region',
    family: W,
    call: (x) => createAwsClients({ region: 'us-east-1', credentials, ...x }),
    runsValid: true,
  },
  {
    subject: 'checkEndpoint',
    typo: 'timeoutMS',
    suggestion: 'timeoutMs',
    family: W,
    call: (x) => checkEndpoint(NOWHERE, { timeoutMs: 1000, ...x }),
    runsValid: false,
  },
  {
    subject: 'S3FailureRecorder',
    typo: 'prefx',
    suggestion: 'prefix',
    family: W,
    call: (x) => new S3FailureRecorder({ store, bucket: 'out', prefix: 'failures/', ...x } as never),
    runsValid: true,
  },
  {
    subject: 'deterministicKey',
    typo: 'stripPrefx',
    suggestion: 'stripPrefix',
    family: W,
    call: (x) => deterministicKey({ prefix: 'upper/', source: { bucket: 'in', key: 'incoming/a' }, ...x }),
    runsValid: true,
  },
  {
    subject: 'notifyAfterOutput',
    typo: 'timeoutMS',
    suggestion: 'timeoutMs',
    family: W,
    call: (x) => notifyAfterOutput({ url: NOWHERE, codeVersion: 'upper@1', ...x } as never),
    runsValid: true,
  },
  {
    subject: 'notifyWebhook',
    typo: 'headrs',
    suggestion: 'headers',
    family: W,
    call: (x) => notifyWebhook({ url: NOWHERE, body: '{}', dedupeKey: 'k', timeoutMs: 1000, ...x } as never),
    runsValid: false,
  },
  {
    subject: 'OutputWriter',
    typo: 'contentTyp',
    suggestion: 'contentType',
    family: W,
    call: (x) =>
      new OutputWriter({ store, bucket: 'out', key: 'upper/a', codeVersion: 'upper@1', source, ...x } as never),
    runsValid: true,
  },
  {
    subject: 'S3ObjectStore',
    typo: 'minPartByte',
    suggestion: 'minPartBytes',
    family: W,
    call: (x) => new S3ObjectStore(s3, { ...x }),
    runsValid: true,
  },
  {
    subject: 'S3ObjectStore.get',
    typo: 'ifNoneMatc',
    suggestion: 'ifNoneMatch',
    family: W,
    call: (x) => store.get('in', 'incoming/a.csv', { ifNoneMatch: 'e', ...x }),
    runsValid: false,
  },
  {
    subject: 'S3ObjectStore.put',
    typo: 'contentTyp',
    suggestion: 'contentType',
    family: W,
    call: (x) =>
      store.put('out', 'upper/a', new Uint8Array(), {
        condition: { ifNoneMatch: '*' },
        metadata: {},
        sha256Base64: 'x',
        ...x,
      }),
    runsValid: false,
  },
  {
    subject: 'judgeOutput',
    typo: 'validat',
    suggestion: 'validate',
    family: W,
    call: (x) => judgeOutput(undefined, { source: { bucket: 'in', key: 'incoming/a.csv' }, codeVersion: '1', ...x }),
    runsValid: true,
  },
  {
    subject: 'processObject',
    typo: 'maxRound',
    suggestion: 'maxRounds',
    family: W,
    call: (x) => processObject(worker, { bucket: 'in', key: 'x', eventName: 'ObjectCreated:Put' }, { store, ...x }),
    runsValid: false,
  },
  {
    subject: 'createTransformInput',
    typo: 'countDecode',
    suggestion: 'countDecoded',
    family: W,
    call: (x) => createTransformInput({ source, body: Readable.from([]), contentLength: 0, ...x }),
    runsValid: true,
  },
  // rerun-pipeline/ledger
  {
    subject: 'DynamoDBLedger',
    typo: 'leaseMS',
    suggestion: 'leaseMs',
    family: 'LedgerConfigurationError',
    call: (x) => new DynamoDBLedger({ client: dynamodb, tableName: 'ledger', ...x }),
    runsValid: true,
  },
  {
    subject: 'DynamoDBLedger.once',
    typo: 'remainingTime',
    suggestion: 'remainingTimeMs',
    family: 'LedgerConfigurationError',
    call: (x) => new DynamoDBLedger({ client: dynamodb, tableName: 'ledger' }).once('k', {}, async () => 1, { ...x }),
    runsValid: false,
  },
  {
    subject: 'createLedgerTable',
    typo: 'activeTimeout',
    suggestion: 'activeTimeoutMs',
    family: 'LedgerConfigurationError',
    call: (x) => createLedgerTable({ client: dynamodb, tableName: 'ledger', ...x }),
    runsValid: false,
  },
  {
    subject: 'createDynamoDBClient',
    typo: 'endpont',
    suggestion: 'endpoint',
    family: 'LedgerConfigurationError',
    call: (x) => createDynamoDBClient({ region: 'us-east-1', ...x }),
    runsValid: true,
  },
  // rerun-pipeline/observability
  {
    subject: 'createLogger',
    typo: 'levl',
    suggestion: 'level',
    family: W,
    call: (x) => createLogger({ sink: () => undefined, ...x }),
    runsValid: true,
  },
  {
    subject: 'fromConsole',
    typo: 'levl',
    suggestion: 'level',
    family: W,
    call: (x) => fromConsole({ debug() {}, info() {}, warn() {}, error() {} }, { ...x }),
    runsValid: true,
  },
  {
    subject: 'emfOutcomeMetrics',
    typo: 'namespce',
    suggestion: 'namespace',
    family: W,
    call: (x) => emfOutcomeMetrics({ namespace: 'rerun', ...x }),
    runsValid: true,
  },
  {
    subject: 'powertoolsOutcomeMetrics',
    typo: 'publsh',
    suggestion: 'publish',
    family: W,
    call: (x) =>
      powertoolsOutcomeMetrics(
        { addMetric: () => undefined, addDimension: () => undefined, publishStoredMetrics: () => undefined },
        { ...x },
      ),
    runsValid: true,
  },
  // rerun-pipeline/normalize
  {
    subject: 'normalizeRecords',
    typo: 'maxRecordByte',
    suggestion: 'maxRecordBytes',
    family: W,
    call: (x) =>
      normalizeRecords(
        ['a,b\n1,2\n'],
        'csv',
        { output: { write: () => undefined }, quarantine: { write: () => undefined } },
        { ...x },
      ),
    runsValid: true,
  },
  {
    subject: 'createNormalizeWorker',
    typo: 'partByte',
    suggestion: 'partBytes',
    family: W,
    call: (x) => createNormalizeWorker({ outputBucket: 'out', ...x }),
    runsValid: true,
  },
  {
    subject: 'CsvRecordReader',
    typo: 'maxRawChar',
    suggestion: 'maxRawChars',
    family: W,
    call: (x) => new CsvRecordReader({ maxRecordBytes: 4096, ...x }),
    runsValid: true,
  },
  {
    subject: 'LineReader',
    typo: 'maxRecordByte',
    suggestion: 'maxRecordBytes',
    family: W,
    call: (x) => new LineReader({ maxRecordBytes: 4096, ...x }),
    runsValid: true,
  },
  // rerun-pipeline/window
  {
    subject: 'defineWindowTask',
    typo: 'buld',
    suggestion: 'build',
    family: 'WindowTaskConfigurationError',
    call: (x) => defineWindowTask({ ...windowDefinition, ...x } as never),
    runsValid: true,
  },
  {
    subject: 'createWindowTaskHandler',
    typo: 'stag',
    suggestion: 'stage',
    family: 'WindowTaskConfigurationError',
    call: (x) =>
      createWindowTaskHandler({ task: defineWindowTask(windowDefinition as never), clients: { s3, sqs }, ...x }),
    runsValid: true,
  },
  {
    subject: 'createWindowTaskHandler limits',
    typo: 'readAhed',
    suggestion: 'readAhead',
    family: 'WindowTaskConfigurationError',
    call: (x) =>
      createWindowTaskHandler({
        task: defineWindowTask(windowDefinition as never),
        clients: { s3, sqs },
        limits: { maxInputs: 10, ...x },
      }),
    runsValid: true,
  },
  {
    subject: 'windowTaskMessage',
    typo: 'tokn',
    suggestion: 'token',
    family: 'WindowTaskMessageInvalidError',
    call: (x) => windowTaskMessage({ stage: 'daily', window: '2026-12-05', ...x }),
    runsValid: true,
  },
  {
    subject: 'parseWindowTaskMessage',
    typo: 'sentTimestamp',
    suggestion: 'sentTimestampMs',
    family: 'WindowTaskMessageInvalidError',
    call: (x) =>
      parseWindowTaskMessage('{}', {
        stage: 'daily',
        scheme: defineWindowTask(windowDefinition as never).scheme,
        ...x,
      }),
    runsValid: true,
  },
  {
    subject: 'S3PartitionStore.list',
    typo: 'startAftr',
    suggestion: 'startAfter',
    family: W,
    call: (x) => new S3PartitionStore(s3).listAll('out', { prefix: 'daily/', ...x }),
    runsValid: false,
  },
  // rerun-pipeline/cdk: each construct's props, and the option objects nested in them
  {
    subject: 'RerunPipeline',
    typo: 'maxInputByte',
    suggestion: 'maxInputBytes',
    family: STACK,
    call: (x) => new RerunPipeline(stack(), 'P', { worker: prebuilt(), ...x }),
    runsValid: true,
  },
  {
    subject: 'RerunPipeline worker',
    typo: 'outputPrefix',
    suggestion: 'outputPrefixes',
    family: STACK,
    call: (x) => new RerunPipeline(stack(), 'P', { worker: { ...prebuilt(), ...x } }),
    runsValid: true,
  },
  {
    subject: 'RerunPipeline webhook',
    typo: 'parameterNme',
    suggestion: 'parameterName',
    family: STACK,
    call: (x) =>
      new RerunPipeline(stack(), 'P', {
        worker: prebuilt(),
        outputs: true,
        webhook: { parameterName: '/rerun/webhook-url', ...x } as never,
      }),
    runsValid: true,
  },
  {
    subject: 'RerunPipeline workerSettings',
    typo: 'memoryMib',
    suggestion: 'memoryMiB',
    family: STACK,
    call: (x) => new RerunPipeline(stack(), 'P', { worker: prebuilt(), workerSettings: { batchSize: 5, ...x } }),
    runsValid: true,
  },
  {
    subject: 'RerunPipeline batchOperations',
    typo: 'handlr',
    suggestion: 'handler',
    family: STACK,
    call: (x) =>
      new RerunPipeline(stack(), 'P', {
        worker: prebuilt(),
        outputPrefixes: ['upper/'],
        batchOperations: { handler: prebuilt(), ...x },
      }),
    runsValid: true,
  },
  {
    subject: 'RerunPipeline ledgerTableProps',
    typo: 'encryptionKy',
    suggestion: 'encryptionKey',
    family: STACK,
    call: (x) =>
      new RerunPipeline(stack(), 'P', {
        worker: prebuilt(),
        ledger: true,
        ledgerTableProps: { removalPolicy: RemovalPolicy.DESTROY, ...x },
      }),
    runsValid: true,
  },
  {
    subject: 'RerunWindowStage',
    typo: 'inputPrefx',
    suggestion: 'inputPrefix',
    family: STACK,
    call: (x) => windowStage(x),
    runsValid: true,
  },
  {
    subject: 'RerunWindowStage handler',
    typo: 'handlr',
    suggestion: 'handler',
    family: STACK,
    call: (x) => windowStage({ handler: { ...prebuilt(), ...x } }),
    runsValid: true,
  },
  {
    subject: 'RerunWindowStage schedule',
    typo: 'hourUTC',
    suggestion: 'hourUtc',
    family: STACK,
    call: (x) => windowStage({ schedule: { minuteUtc: 5, ...x } }),
    runsValid: true,
  },
  {
    subject: 'RerunWindowStage settings',
    typo: 'batchSze',
    suggestion: 'batchSize',
    family: STACK,
    call: (x) => windowStage({ settings: { memoryMiB: 512, ...x } }),
    runsValid: true,
  },
  {
    subject: 'SqsWorker',
    typo: 'logLvel',
    suggestion: 'logLevel',
    family: STACK,
    call: (x) => new SqsWorker(stack(), 'W', { topology: topology.normalize, source: prebuilt(), ...x }),
    runsValid: true,
  },
  {
    subject: 'SqsWorker topology',
    typo: 'memoryMib',
    suggestion: 'memoryMiB',
    family: STACK,
    call: (x) => new SqsWorker(stack(), 'W', { topology: { ...topology.normalize, ...x }, source: prebuilt() }),
    runsValid: true,
  },
  {
    subject: 'SqsWorker source',
    typo: 'handlr',
    suggestion: 'handler',
    family: STACK,
    call: (x) => new SqsWorker(stack(), 'W', { topology: topology.normalize, source: { ...prebuilt(), ...x } }),
    runsValid: true,
  },
  {
    subject: 'BatchOperationsHandler',
    typo: 'jobFilesPrefx',
    suggestion: 'jobFilesPrefix',
    family: STACK,
    call: (x) => {
      const scope = stack();
      const bucket = new Bucket(scope, 'B');
      return new BatchOperationsHandler(scope, 'H', {
        source: prebuilt(),
        inputBucket: bucket,
        inputPrefix: 'incoming/',
        outputBucket: bucket,
        outputPrefixes: ['upper/'],
        failurePrefix: 'failures/',
        memoryMiB: 1024,
        timeoutSeconds: 60,
        ...x,
      } as never);
    },
    runsValid: true,
  },
  {
    subject: 'BatchOperationsHandler source',
    typo: 'handlr',
    suggestion: 'handler',
    family: STACK,
    call: (x) => {
      const scope = stack();
      const bucket = new Bucket(scope, 'B');
      return new BatchOperationsHandler(scope, 'H', {
        source: { ...prebuilt(), ...x },
        inputBucket: bucket,
        inputPrefix: 'incoming/',
        outputBucket: bucket,
        outputPrefixes: ['upper/'],
        failurePrefix: 'failures/',
        memoryMiB: 1024,
        timeoutSeconds: 60,
      });
    },
    runsValid: true,
  },
  {
    subject: 'DataBucket',
    typo: 'versiond',
    suggestion: 'versioned',
    family: STACK,
    call: (x) => new DataBucket(stack(), 'B', { ...x }),
    runsValid: true,
  },
  {
    subject: 'LedgerTable',
    typo: 'encryptionKy',
    suggestion: 'encryptionKey',
    family: STACK,
    call: (x) => new LedgerTable(stack(), 'L', { ledger: topology.ledger, ...x } as never),
    runsValid: true,
  },
  {
    subject: 'PipelineDashboard',
    typo: 'dashboardNme',
    suggestion: 'dashboardName',
    family: STACK,
    call: (x) => {
      const scope = stack();
      const worker = new SqsWorker(scope, 'W', { topology: topology.normalize, source: prebuilt() });
      return new PipelineDashboard(scope, 'D', { workers: [worker], ...x } as never);
    },
    runsValid: true,
  },
  {
    subject: 'grantPrefixAccess',
    typo: 'reed',
    suggestion: 'read',
    family: STACK,
    call: (x) => {
      const scope = stack();
      const role = new Role(scope, 'R', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
      grantPrefixAccess(role, new Bucket(scope, 'B'), ['upper/'], { write: true, ...x });
    },
    runsValid: true,
  },
  {
    subject: 'grantKeyUseVia',
    typo: 'writ',
    suggestion: 'write',
    family: STACK,
    call: (x) => {
      const scope = stack();
      const role = new Role(scope, 'R', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
      grantKeyUseVia(role, new Key(scope, 'K'), KeyService.S3, { write: true, ...x });
    },
    runsValid: true,
  },
  // rerun-pipeline/local
  {
    subject: 'LocalRunner',
    typo: 'batchSze',
    suggestion: 'batchSize',
    family: 'RunnerConfigurationError',
    call: (x) => new LocalRunner({ ...runnerOptions, ...x } as never),
    runsValid: true,
  },
  {
    subject: 'LocalRunner.runUntilDrained',
    typo: 'timeoutMS',
    suggestion: 'timeoutMs',
    family: 'RunnerConfigurationError',
    call: (x) =>
      new LocalRunner(runnerOptions as never).runUntilDrained({
        timeoutMs: 1,
        ...x,
      }),
    runsValid: false,
  },
  {
    subject: 'runLocalBatchOperationsJob',
    typo: 'concurency',
    suggestion: 'concurrency',
    family: 'LocalSetupError',
    call: (x) => runLocalBatchOperationsJob({ ...x } as never),
    runsValid: false,
  },
  {
    subject: 'startMotoServer',
    typo: 'readyTimeout',
    suggestion: 'readyTimeoutMs',
    family: 'LocalSetupError',
    call: (x) => startMotoServer({ python: '/nonexistent/python', readyTimeoutMs: 1, ...x }),
    runsValid: false,
  },
  {
    subject: 'ensurePythonTool',
    typo: 'venvRot',
    suggestion: 'venvRoot',
    family: 'LocalSetupError',
    call: (x) => ensurePythonTool(PythonTool.MOTO, { python: '/nonexistent/python', venvRoot: '/nonexistent', ...x }),
    runsValid: false,
  },
  {
    subject: 'startWebhookSink',
    typo: 'prt',
    suggestion: 'port',
    family: 'LocalSetupError',
    call: (x) => startWebhookSink({ host: '256.0.0.1', ...x }),
    runsValid: false,
  },
];

function windowStage(extra: Record<string, unknown>) {
  const scope = stack();
  const upload = new RerunPipeline(scope, 'P', {
    worker: prebuilt(),
    pipeline: pipeline(),
    stage: 'upper',
    outputs: true,
  });
  return new RerunWindowStage(scope, 'Daily', {
    pipeline: pipeline(),
    stage: 'daily',
    handler: prebuilt(),
    bucket: upload.outputBucket,
    outputs: true,
    ...extra,
  });
}

/** The call's error, sync or async; undefined when it succeeded. */
async function errorOf(call: () => unknown): Promise<unknown> {
  try {
    await call();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('a misspelt option of every public options object is refused by name, with the nearest name', () => {
  it.each(CASES.map((c) => [`${c.subject}: '${c.typo}'`, c] as const))('%s', async (_, c) => {
    const error = await errorOf(() => c.call({ [c.typo]: 1 }));
    expect(RerunError.isRerunError(error)).toBe(true);
    expect((error as Error).name).toBe(c.family);
    expect((error as RerunError).retryable).toBe(false);
    expect((error as Error).message).toContain(
      `${c.subject}: unknown option '${c.typo}'; did you mean '${c.suggestion}'?`,
    );
  });

  it.each(CASES.filter((c) => c.runsValid).map((c) => [c.subject, c] as const))(
    '%s: the same options without the typo pass',
    async (_, c) => {
      expect(await errorOf(() => c.call({}))).toBeUndefined();
    },
  );

  it('definePipeline (its own checker, path by path) refuses a misspelt field with the nearest name', () => {
    expect(() => definePipeline({ name: 'uploads', stges: {} } as never)).toThrow(/stges.*did you mean "stages"/);
  });
});

describe('the message', () => {
  it('lists every unknown option, each with its nearest name when there is one', () => {
    expect(unknownOptionsMessage('X', ['concurency', 'zzz'], ['concurrency', 'logger'])).toBe(
      "X: unknown options 'concurency' (did you mean 'concurrency'?), 'zzz'",
    );
  });

  it('lists the known options when no name is near', () => {
    expect(unknownOptionsMessage('X', ['zzz'], ['concurrency', 'logger'])).toBe(
      "X: unknown option 'zzz' (its options: concurrency, logger)",
    );
  });

  it('a construct names every unknown prop, nested ones included, in one error', async () => {
    const error = await errorOf(
      () => new RerunPipeline(stack(), 'P', { worker: { ...prebuilt(), handlr: 'x' }, ledgr: true } as never),
    );
    expect((error as Error).message).toContain("RerunPipeline: unknown option 'ledgr'; did you mean 'ledger'?");
    expect((error as Error).message).toContain("RerunPipeline worker: unknown option 'handlr'");
  });
});

/** The `.ts` files under `dir`, recursively. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * The subjects of every options check in the package's code (src/ and local/): each
 * `checkOptions('subject', ...)`, and each `checkProps('Construct', ...)` with its nested props
 * (`Construct prop`), comments left out. It finds the checks there are, not an options object left
 * unchecked: that is what the cases above, one per public options object, are for.
 */
function checkedSubjects(): { subjects: Set<string>; calls: number; read: number } {
  const subjects = new Set<string>();
  let calls = 0;
  let read = 0;
  for (const file of [...sourceFiles('src'), ...sourceFiles('local')]) {
    const code = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    calls += code.match(/\bcheck(?:Options|Props)\(/g)?.length ?? 0;
    for (const m of code.matchAll(/\bcheckOptions\(\s*'([^']+)'/g)) {
      read += 1;
      subjects.add(m[1] as string);
    }
    for (const m of code.matchAll(/\bcheckProps\(\s*'([^']+)',[^{;]*?(?:\{([^}]*)\})?\s*\);/g)) {
      read += 1;
      const construct = m[1] as string;
      subjects.add(construct);
      for (const nested of (m[2] ?? '').matchAll(/(\w+):/g)) subjects.add(`${construct} ${nested[1]}`);
    }
  }
  return { subjects, calls, read };
}

describe('the cases cover every check', () => {
  it('every options check in the code has its case above', () => {
    const { subjects, calls, read } = checkedSubjects();
    // Every call was read: one whose subject is not a literal would otherwise escape this test.
    expect(read).toBe(calls);
    const cased = new Set(CASES.map((c) => c.subject));
    expect([...subjects].filter((s) => !cased.has(s))).toEqual([]);
  });
});

describe('S3FailureRecorder refuses a bucket that is not a name', () => {
  it('throws a WorkerConfigurationError at construction for undefined and empty buckets', () => {
    for (const bucket of [undefined, '', 42]) {
      expect(() => new S3FailureRecorder({ store, bucket } as never), String(bucket)).toThrow(WorkerConfigurationError);
    }
    expect(() => new S3FailureRecorder({ store, bucket: 'out' } as never)).not.toThrow();
  });
});
