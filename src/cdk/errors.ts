import { RerunError } from '../errors.js';

/**
 * The stack was given settings that AWS would refuse or that break a safety rule (for example a queue
 * visibility timeout below 6 x the function timeout). Thrown at synth time; retrying cannot help.
 *
 * @example
 * throw new StackConfigurationInvalidError(['worker "normalize": maxReceiveCount must be ...']);
 */
export class StackConfigurationInvalidError extends RerunError {
  readonly violations: readonly string[];
  constructor(violations: readonly string[]) {
    super(`Invalid stack configuration; fix app/topology.ts or the construct props:\n- ${violations.join('\n- ')}`, {
      retryable: false,
    });
    this.name = 'StackConfigurationInvalidError';
    this.violations = violations;
  }
}

/**
 * A synthesized worker cannot be run locally as asked: its asset is missing from the cloud assembly,
 * or a variable CloudFormation would resolve at deploy time has no local value. Not retryable.
 *
 * @example
 * throw new WorkerBundleUnusableError('The normalize function needs OUTPUT_BUCKET, ...');
 */
export class WorkerBundleUnusableError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'WorkerBundleUnusableError';
  }
}

/**
 * `referenceWorker(name)` found no prebuilt bundle: this copy of rerun-pipeline was not built (a
 * checkout of the repository before `npm run build`). Not retryable: build it, or bundle the
 * handler yourself with `{ entry }`.
 *
 * @example
 * throw new ReferenceWorkerBundleMissingError('normalize', '/repo/dist/workers/normalize/index.mjs');
 */
export class ReferenceWorkerBundleMissingError extends RerunError {
  /** The worker asked for (`normalize`). */
  readonly worker: string;
  /** The bundle that is missing. */
  readonly path: string;
  constructor(worker: string, path: string) {
    super(
      `The prebuilt ${worker} worker is missing (${path}): this copy of rerun-pipeline was not built. ` +
        `In a checkout of the repository run \`npm run build\` first, or bundle the handler yourself with { entry }.`,
      { retryable: false },
    );
    this.name = 'ReferenceWorkerBundleMissingError';
    this.worker = worker;
    this.path = path;
  }
}
