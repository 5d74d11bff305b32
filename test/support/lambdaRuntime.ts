import { projectRoot } from '../../infra/paths.js';
import { lambdaFunctionSettings, synthesizeWorkerBundles } from '../../infra/workerBundles.js';
import { LambdaRuntimePool } from '../../local/runner/LambdaRuntimePool.js';
import type { LambdaRuntimeSlot } from '../../local/runner/LambdaRuntimeSlot.js';
import { locateLambdaRuntimeTools } from '../../local/runner/lambdaRuntimeTools.js';
import { parseRecordOutcomeLogLine } from '../../src/batch/recordOutcomeLog.js';
import { emitRecordOutcome } from '../../src/worker/outcomes.js';

/** Where the tests run the worker: in the test process (default), or the deployed bundle under aws-lambda-rie. */
export const TestRuntime = { IN_PROCESS: 'in-process', LAMBDA: 'lambda' } as const;
export type TestRuntime = (typeof TestRuntime)[keyof typeof TestRuntime];

/**
 * The runtime of this test run: `RERUN_TEST_RUNTIME=lambda` (set by `npm run test:lambda-runtime`)
 * runs the seed tests against the synthesized bundle under the Lambda Runtime Interface Emulator.
 */
export const testRuntime: TestRuntime = (() => {
  const value = process.env.RERUN_TEST_RUNTIME ?? TestRuntime.IN_PROCESS;
  if (value !== TestRuntime.IN_PROCESS && value !== TestRuntime.LAMBDA) {
    throw new Error(`RERUN_TEST_RUNTIME must be "in-process" or "lambda" (got "${value}").`);
  }
  return value;
})();

/** Options of {@link startNormalizePool}. */
export interface NormalizePoolOptions {
  /** The endpoint the function's SDK clients use (the emulator, or a proxy in front of it). */
  readonly endpoint: string;
  /** The bucket the function reads (INPUT_BUCKETS: an event naming any other is refused). */
  readonly inputBucket: string;
  readonly outputBucket: string;
  readonly timeoutSeconds: number;
  /**
   * The queue's maxReceiveCount, as the stack gives the function (MAX_RECEIVE_COUNT). The synthesized
   * template holds the stack topology's value; a test queue has its own, so it is given here.
   * @default unset: the function reads it from the queue (GetQueueUrl, GetQueueAttributes)
   */
  readonly maxReceiveCount?: number;
  /** Receives each slot once started (the kill test reaches its runtime process through it). */
  readonly onSlot?: (slot: LambdaRuntimeSlot) => void;
}

/**
 * The deployed normalize bundle (synthesized from the real stack) in a pool of Lambda runtime
 * slots. Its record outcomes, read from the function's log lines, are re-emitted to this process's
 * `onRecordOutcome` listeners, so a test observes them as it does for an in-process handler.
 */
export async function startNormalizePool(options: NormalizePoolOptions): Promise<LambdaRuntimePool> {
  const { normalize } = await synthesizeWorkerBundles();
  return new LambdaRuntimePool({
    tools: locateLambdaRuntimeTools(projectRoot),
    function: lambdaFunctionSettings(normalize, {
      functionName: 'rerun-normalize',
      timeoutSeconds: options.timeoutSeconds,
      // No webhook: the ledger table is then never used.
      environment: {
        OUTPUT_BUCKET: options.outputBucket,
        INPUT_BUCKETS: options.inputBucket,
        LEDGER_TABLE: 'unused',
        NOTIFY_URL: '',
        // The seed tests count the worker's requests per item, as the in-process runs do; the
        // code-version marker (one create per instance) is left out here as there. It has tests of
        // its own: test/integration/codeVersionMarker.test.ts, and the deployed tier with the stack's value.
        CODE_VERSION_PREFIX: '',
        MAX_RECEIVE_COUNT: options.maxReceiveCount !== undefined ? String(options.maxReceiveCount) : '',
        AWS_ENDPOINT_URL: options.endpoint,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    }),
    onOutput: (line) => {
      const outcome = parseRecordOutcomeLogLine(line);
      if (outcome) emitRecordOutcome(outcome);
      // The function's own warnings and errors help read a failing test; the emulator's lines do not.
      else if (/"level":"(warn|error|WARN|ERROR)"/.test(line)) process.stderr.write(`[lambda] ${line}\n`);
    },
    ...(options.onSlot ? { onSlot: options.onSlot } : {}),
  });
}
