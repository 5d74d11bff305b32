import type { LambdaFunctionSettings } from './LambdaRuntimeSlot.js';

/**
 * What running a synthesized function locally adds to its settings: its name, the values the stack
 * would resolve at deploy time, the local endpoint, region and credentials. The one definition that
 * the stack's bundles (infra/workerBundles.ts) and `rerun dev --runtime lambda`
 * (app/dev/StackWorkerSynthesizer.ts) share.
 */
export interface LocalFunctionOverrides {
  readonly functionName: string;
  /** A value for every variable the stack resolves at deploy time, plus local ones (AWS_ENDPOINT_URL, LOG_LEVEL...). */
  readonly environment: Readonly<Record<string, string>>;
  readonly region: string;
  readonly credentials: LambdaFunctionSettings['credentials'];
  /** @default the synthesized function's timeout */
  readonly timeoutSeconds?: number;
  /** @default the synthesized function's memory */
  readonly memoryMiB?: number;
}
