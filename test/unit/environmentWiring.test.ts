import { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { wiringFromEnvironment } from '../../src/batch/environmentWiring.js';
import { RerunError } from '../../src/errors.js';
import type { FailureRecorder } from '../../src/failures/FailureRecorder.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { silentLogger } from '../../src/logging/logger.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';

/** What RerunPipeline sets for its worker (src/cdk/RerunPipeline.ts, createWorker). */
const PIPELINE_ENV = { OUTPUT_BUCKET: 'out', MAX_INPUT_BYTES: '1048576', AWS_REGION: 'us-east-1' };

/** The bucket an S3FailureRecorder records in (its options are private; the test reads them). */
const bucketOf = (recorder: FailureRecorder | undefined) =>
  (recorder as unknown as { options: { bucket: string; prefix: string; maxReceiveCount?: number } }).options;

/** The error `run` throws, or undefined. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('createSqsBatchHandler({ worker }) takes its wiring from the environment RerunPipeline and rerun dev set', () => {
  it('neither store nor sqs: the clients, the store, a JSON logger, the failure recorder and maxInputBytes come from it', () => {
    const wiring = wiringFromEnvironment({}, { ...PIPELINE_ENV, FAILURE_PREFIX: 'errors/' });
    expect(wiring.store).toBeInstanceOf(S3ObjectStore);
    expect(wiring.sqs).toBeInstanceOf(SQSClient);
    expect(wiring.logger).toBeDefined();
    expect(wiring.failureRecorder).toBeInstanceOf(S3FailureRecorder);
    expect(bucketOf(wiring.failureRecorder)).toMatchObject({ bucket: 'out', prefix: 'errors/' });
    expect(wiring.maxInputBytes).toBe(1_048_576);
  });

  it("the failure recorder knows the queue's MAX_RECEIVE_COUNT that SqsWorker sets, and refuses one out of range by name", () => {
    const wiring = wiringFromEnvironment({}, { ...PIPELINE_ENV, MAX_RECEIVE_COUNT: '5' });
    expect(bucketOf(wiring.failureRecorder)).toMatchObject({ maxReceiveCount: 5 });
    expect(bucketOf(wiringFromEnvironment({}, PIPELINE_ENV).failureRecorder)).not.toHaveProperty('maxReceiveCount');
    expect(String(thrown(() => wiringFromEnvironment({}, { ...PIPELINE_ENV, MAX_RECEIVE_COUNT: 'many' })))).toMatch(
      /MAX_RECEIVE_COUNT/,
    );
  });

  it("rerun dev's environment (no MAX_INPUT_BYTES, no FAILURE_PREFIX): no input limit, records under failures/", () => {
    const wiring = wiringFromEnvironment(
      {},
      { OUTPUT_BUCKET: 'rerun-output', AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' },
    );
    expect(wiring.maxInputBytes).toBeUndefined();
    expect(bucketOf(wiring.failureRecorder)).toMatchObject({ bucket: 'rerun-output', prefix: 'failures/' });
  });

  it('an option given explicitly wins over the environment', () => {
    const recorder: FailureRecorder = { record: async () => undefined };
    const wiring = wiringFromEnvironment(
      { maxInputBytes: 5, failureRecorder: recorder, logger: silentLogger },
      PIPELINE_ENV,
    );
    expect(wiring.maxInputBytes).toBe(5);
    expect(wiring.failureRecorder).toBe(recorder);
    expect(wiring.logger).toBe(silentLogger);
  });

  it('store and sqs given ("wiring it yourself"): nothing is read from the environment', () => {
    const sqs = new SQSClient({ region: 'us-east-1' });
    const store = new S3ObjectStore({} as never);
    // An environment that would be refused: no OUTPUT_BUCKET, a MAX_INPUT_BYTES that is no number.
    const wiring = wiringFromEnvironment({ store, sqs }, { MAX_INPUT_BYTES: 'lots' });
    expect(wiring).toEqual({ store, sqs });
  });

  it('a missing OUTPUT_BUCKET is named, in a branded error', () => {
    const error = thrown(() => wiringFromEnvironment({}, { MAX_INPUT_BYTES: '10' }));
    expect(RerunError.isRerunError(error)).toBe(true);
    expect((error as Error).name).toBe('WorkerConfigurationError');
    expect((error as Error).message).toMatch(/OUTPUT_BUCKET is not set/);
  });

  it('a MAX_INPUT_BYTES that is not a positive number is named', () => {
    for (const raw of ['lots', '0', '-1']) {
      const error = thrown(() => wiringFromEnvironment({}, { ...PIPELINE_ENV, MAX_INPUT_BYTES: raw }));
      expect(RerunError.isRerunError(error), raw).toBe(true);
      expect((error as Error).message).toContain(`MAX_INPUT_BYTES is "${raw}"`);
    }
  });

  it('store without sqs (or sqs without store) names the missing one', () => {
    const store = new S3ObjectStore({} as never);
    expect((thrown(() => wiringFromEnvironment({ store }, PIPELINE_ENV)) as Error).message).toMatch(
      /`store` is given but `sqs` is not/,
    );
    const sqs = new SQSClient({ region: 'us-east-1' });
    expect((thrown(() => wiringFromEnvironment({ sqs }, PIPELINE_ENV)) as Error).message).toMatch(
      /`sqs` is given but `store` is not/,
    );
  });
});
