/**
 * rerun's local tooling (`import ... from 'rerun-pipeline/local'`): the runner that reproduces Lambda's SQS
 * trigger, the embedded emulator (moto server, installed from its pinned requirements into a virtual
 * environment on first use), the webhook sink, and the bucket and queue provisioning of `rerun dev`.
 *
 * @example
 * import { LocalRunner, startMotoServer } from 'rerun-pipeline/local';
 */

export {
  type BatchOperationsFunction,
  type LocalBatchOperationsJobOptions,
  type LocalBatchOperationsJobResult,
  type LocalJobManifest,
  type LocalTaskOutcome,
  type ManifestRow,
  parseManifestCsv,
  runLocalBatchOperationsJob,
} from './batchOperations/LocalBatchOperationsJob.js';
export { type MotoServer, type StartMotoServerOptions, startMotoServer } from './emulator/motoServer.js';
export {
  type EnsurePythonToolOptions,
  ensurePythonTool,
  PythonMissingError,
  PythonTool,
  PythonToolInstallError,
} from './emulator/pythonEnvironment.js';
export { LocalSetupError } from './errors.js';
export { ensureBucket, ensureQueue, ensureQueueAttributes, ProvisionAction } from './provision.js';
export type { InvocationOutcome } from './runner/batchResponse.js';
export {
  HandlerExportMissingError,
  HandlerModuleLoadError,
  LambdaRuntimeSlotError,
  LambdaRuntimeToolsMissingError,
  RunnerConfigurationError,
  RunnerDrainTimeoutError,
} from './runner/errors.js';
export type { FunctionInvoker, InvocationRequest, InvocationResult } from './runner/FunctionInvoker.js';
export type { InvocationReport } from './runner/invocationReport.js';
export { LocalRunner, type RunUntilDrainedOptions, type SqsLambdaHandler } from './runner/LocalRunner.js';
export { loadHandler } from './runner/loadHandler.js';
export type { LocalRunnerOptions } from './runner/localRunnerOptions.js';
export {
  IDEMPOTENCY_KEY_HEADER,
  type SinkDelivery,
  type SinkFault,
  type SinkRequestInfo,
  startWebhookSink,
  type WebhookSink,
  type WebhookSinkOptions,
} from './sink/WebhookSink.js';
