import type { LambdaFunctionSettings } from '../../local/runner/LambdaRuntimeSlot.js';

/** The stack's workers that `rerun dev --runtime lambda` runs from their synthesized bundles. */
export type StackWorker = 'normalize' | 'summarize';

/** What a local session adds to a synthesized worker's settings (its endpoint, names and credentials). */
export interface StackWorkerOverrides {
  readonly functionName: string;
  /** A value for every variable the stack resolves at deploy time, plus local ones (AWS_ENDPOINT_URL...). */
  readonly environment: Readonly<Record<string, string>>;
  readonly region: string;
  readonly credentials: LambdaFunctionSettings['credentials'];
  /** @default the synthesized function's timeout */
  readonly timeoutSeconds?: number;
  /** @default the synthesized function's memory */
  readonly memoryMiB?: number;
}

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
  (worker: StackWorker, overrides: StackWorkerOverrides) => LambdaFunctionSettings
>;
