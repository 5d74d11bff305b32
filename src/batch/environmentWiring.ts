import type { SQSClient } from '@aws-sdk/client-sqs';
import { createAwsClients } from '../aws/clients.js';
import { optionalIntegerEnv } from '../env.js';
import { WorkerConfigurationError } from '../errors.js';
import type { FailureRecorder } from '../failures/FailureRecorder.js';
import { DEFAULT_FAILURE_PREFIX } from '../failures/failureRecord.js';
import { S3FailureRecorder } from '../failures/S3FailureRecorder.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { S3ObjectStore } from '../s3/S3ObjectStore.js';
import type { CodeVersionMarkerPlace } from '../worker/codeVersionMarker.js';

/** The wiring of a batch handler that the environment can give: what `RerunPipeline` and `rerun dev` set. */
export interface HandlerWiring {
  readonly store: S3ObjectStore;
  readonly sqs: SQSClient;
  readonly logger?: Logger;
  readonly failureRecorder?: FailureRecorder;
  readonly maxInputBytes?: number;
  readonly codeVersionMarker?: CodeVersionMarkerPlace | false;
}

/** What the caller gave explicitly; each given field wins over the environment's. */
export interface ExplicitWiring {
  readonly store?: S3ObjectStore | undefined;
  readonly sqs?: SQSClient | undefined;
  readonly logger?: Logger | undefined;
  readonly failureRecorder?: FailureRecorder | undefined;
  readonly maxInputBytes?: number | undefined;
  readonly codeVersionMarker?: CodeVersionMarkerPlace | false | undefined;
  /** The worker: its output bucket holds the code-version marker taken from CODE_VERSION_PREFIX. */
  readonly worker?: { readonly outputBucket: string } | undefined;
}

/**
 * The handler's wiring: what `explicit` gives, the rest from `env`.
 *
 * - Neither `store` nor `sqs` given: the handler wires itself from the environment the construct and
 *   `rerun dev` set, as their own handlers do. The S3 and SQS clients from `createAwsClients` (at
 *   AWS_ENDPOINT_URL when it is set: the emulator of `rerun dev`), a JSON logger at LOG_LEVEL, an
 *   `S3FailureRecorder` in OUTPUT_BUCKET under FAILURE_PREFIX (`failures/` when unset) knowing the
 *   queue's MAX_RECEIVE_COUNT (asked of SQS when unset), and
 *   `maxInputBytes` from MAX_INPUT_BYTES (no limit when unset: `rerun dev` sets none), and the
 *   code-version marker under CODE_VERSION_PREFIX in the worker's output bucket (none when unset;
 *   both RerunPipeline and `rerun dev` set it). A missing OUTPUT_BUCKET, or a MAX_INPUT_BYTES that
 *   is not a positive number, is refused by name.
 * - Both given: nothing is read from the environment ("wiring it yourself"); what is not given stays
 *   off (no failure recorder, the silent logger, no input limit, no code-version marker), as before.
 * - One of the two: refused, naming the other, since a store and a queue client of two different
 *   endpoints would write where the handler does not read.
 *
 * @example
 * const wiring = wiringFromEnvironment({}, process.env); // under RerunPipeline or rerun dev
 */
export function wiringFromEnvironment(explicit: ExplicitWiring, env: NodeJS.ProcessEnv = process.env): HandlerWiring {
  if (explicit.store && explicit.sqs) {
    return {
      store: explicit.store,
      sqs: explicit.sqs,
      ...(explicit.logger ? { logger: explicit.logger } : {}),
      ...(explicit.failureRecorder ? { failureRecorder: explicit.failureRecorder } : {}),
      ...(explicit.maxInputBytes !== undefined ? { maxInputBytes: explicit.maxInputBytes } : {}),
      ...(explicit.codeVersionMarker !== undefined ? { codeVersionMarker: explicit.codeVersionMarker } : {}),
    };
  }
  if (explicit.store || explicit.sqs) {
    const [given, missing] = explicit.store ? ['store', 'sqs'] : ['sqs', 'store'];
    throw new WorkerConfigurationError(
      `createSqsBatchHandler: \`${given}\` is given but \`${missing}\` is not: give both to wire the handler ` +
        'yourself, or neither to take both from the environment (AWS_ENDPOINT_URL, as RerunPipeline and rerun dev set it).',
    );
  }
  const clients = createAwsClients({ endpoint: env.AWS_ENDPOINT_URL });
  const store = new S3ObjectStore(clients.s3);
  const logger = explicit.logger ?? createLogger({ env });
  const failureRecorder = explicit.failureRecorder ?? environmentFailureRecorder(store, clients.sqs, logger, env);
  const maxInputBytes = explicit.maxInputBytes ?? environmentMaxInputBytes(env);
  const codeVersionMarker = explicit.codeVersionMarker ?? environmentCodeVersionMarker(explicit.worker, env);
  return {
    store,
    sqs: clients.sqs,
    logger,
    failureRecorder,
    ...(maxInputBytes !== undefined ? { maxInputBytes } : {}),
    ...(codeVersionMarker !== undefined ? { codeVersionMarker } : {}),
  };
}

/**
 * The code-version marker the construct grants: under CODE_VERSION_PREFIX, in the worker's output
 * bucket (where the tools list it). Undefined when the variable is unset or empty, or no worker is given.
 */
function environmentCodeVersionMarker(
  worker: ExplicitWiring['worker'],
  env: NodeJS.ProcessEnv,
): CodeVersionMarkerPlace | undefined {
  const prefix = env.CODE_VERSION_PREFIX;
  if (!prefix || !worker) return undefined;
  return { bucket: worker.outputBucket, prefix };
}

/** The failure recorder the construct grants: OUTPUT_BUCKET, under FAILURE_PREFIX. */
function environmentFailureRecorder(
  store: S3ObjectStore,
  sqs: SQSClient,
  logger: Logger,
  env: NodeJS.ProcessEnv,
): FailureRecorder {
  const bucket = env.OUTPUT_BUCKET;
  if (!bucket) {
    throw new WorkerConfigurationError(
      'createSqsBatchHandler: no `failureRecorder` given and OUTPUT_BUCKET is not set, so there is nowhere to record ' +
        'why a message was given up on. RerunPipeline and rerun dev set OUTPUT_BUCKET; elsewhere set it, or give ' +
        '`failureRecorder` (with `store` and `sqs`: "wiring it yourself" in docs/guides/05-writing-and-testing-a-worker.md).',
    );
  }
  const prefix = env.FAILURE_PREFIX || DEFAULT_FAILURE_PREFIX;
  // The queue's redrive count (SqsWorker sets it): spares a cold sandbox the SQS calls that would learn it.
  const maxReceiveCount = optionalIntegerEnv('MAX_RECEIVE_COUNT', { min: 1, max: 1000 }, env);
  return new S3FailureRecorder({
    store,
    sqs,
    bucket,
    prefix,
    logger,
    ...(maxReceiveCount !== undefined ? { maxReceiveCount } : {}),
  });
}

/** MAX_INPUT_BYTES as a number (RerunPipeline sets it from its sizing); undefined when unset. */
function environmentMaxInputBytes(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.MAX_INPUT_BYTES;
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!(value > 0)) {
    throw new WorkerConfigurationError(
      `createSqsBatchHandler: MAX_INPUT_BYTES is "${raw}", not a positive number of bytes (RerunPipeline sets it ` +
        'from its sizing; unset means no limit). Fix the variable, or give `maxInputBytes`.',
    );
  }
  return value;
}
