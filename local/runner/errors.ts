import { RerunError } from '../../src/errors.js';

/**
 * The local runner was given settings that AWS would refuse for an SQS event source mapping
 * (for example a batch size above 10 without a batching window). Not retryable: fix the settings.
 */
export class RunnerConfigurationError extends RerunError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
    this.name = 'RunnerConfigurationError';
  }
}

/** `runUntilDrained` gave up before the queue was empty. */
export class RunnerDrainTimeoutError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: true });
    this.name = 'RunnerDrainTimeoutError';
  }
}

/** A handler module could not be found or failed while it was being imported. */
export class HandlerModuleLoadError extends RerunError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
    this.name = 'HandlerModuleLoadError';
  }
}

/** A handler module was imported but does not export a function under the expected name. */
export class HandlerExportMissingError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'HandlerExportMissingError';
  }
}

/**
 * `aws-lambda-rie`, the runtime's Node or `aws-lambda-ric` is not installed: run
 * `scripts/install-lambda-runtime.sh`, or run the handler in-process.
 */
export class LambdaRuntimeToolsMissingError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'LambdaRuntimeToolsMissingError';
  }
}

/** A Lambda runtime slot (the emulator and its runtime process) failed to start or died. */
export class LambdaRuntimeSlotError extends RerunError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
    this.name = 'LambdaRuntimeSlotError';
  }
}
