import type { LambdaFunctionSettings } from '../../local/runner/LambdaRuntimeSlot.js';
import type { LocalFunctionOverrides } from '../../local/runner/LocalFunctionOverrides.js';

/** The stack's workers that `rerun dev --runtime lambda` runs from their synthesized bundles. */
export type StackWorker = 'normalize' | 'summarize';

/**
 * Synthesizes the stack's worker bundles (what `cdk deploy` uploads) and returns how to run each one
 * in a Lambda runtime slot with a session's values. `rerun dev` does not import the stack: the
 * application sits below it (infra/ imports app/topology.ts), so whoever composes the session
 * passes this in. The reference stack's implementation is `synthesizeStackWorkers` of
 * infra/workerBundles.ts, which only a checkout of the repository has.
 *
 * @example
 * const settingsOf = await synthesize();
 * new LambdaRuntimePool({ tools, function: settingsOf('normalize', { functionName, environment, region, credentials }) });
 */
export type StackWorkerSynthesizer = () => Promise<
  (worker: StackWorker, overrides: LocalFunctionOverrides) => LambdaFunctionSettings
>;
