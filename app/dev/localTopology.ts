import { LocalSetupError } from '../../local/errors.js';
import { topology as defaultTopology, type Topology } from '../topology.js';

/** The overrides of the topology a `rerun dev` session accepts (its flags). */
export interface LocalTopologyOverrides {
  /** @default topology.appName ('rerun') */
  appName?: string;
  /** @default the topology's */
  visibilityTimeoutSeconds?: number;
  /** @default the topology's */
  maxReceiveCount?: number;
  /** @default the topology's */
  functionTimeoutSeconds?: number;
}

/**
 * The topology with the session's overrides applied; refuses names S3 or SQS would reject, and a
 * function timeout Lambda would refuse.
 *
 * @example
 * localTopology({ appName: 'demo', visibilityTimeoutSeconds: 5, functionTimeoutSeconds: 5 }).normalize.maxReceiveCount;
 */
export function localTopology(options: LocalTopologyOverrides): Topology {
  const appName = options.appName ?? defaultTopology.appName;
  // `<appName>-output` must be a valid bucket name (3-63 chars, lower case, digits, hyphens).
  if (!/^[a-z0-9][a-z0-9-]{0,45}[a-z0-9]$/.test(appName)) {
    throw new LocalSetupError(
      `Invalid app name "${appName}": use 2-47 lower-case letters, digits or hyphens (it prefixes bucket names).`,
    );
  }
  const w = defaultTopology.normalize;
  const normalize = {
    ...w,
    ...(options.visibilityTimeoutSeconds !== undefined
      ? { visibilityTimeoutSeconds: options.visibilityTimeoutSeconds }
      : {}),
    ...(options.maxReceiveCount !== undefined ? { maxReceiveCount: options.maxReceiveCount } : {}),
    ...(options.functionTimeoutSeconds !== undefined ? { functionTimeoutSeconds: options.functionTimeoutSeconds } : {}),
  };
  if (normalize.functionTimeoutSeconds > normalize.visibilityTimeoutSeconds) {
    // Lambda refuses a mapping whose function timeout exceeds the queue's visibility timeout.
    throw new LocalSetupError(
      `The function timeout (${normalize.functionTimeoutSeconds} s) exceeds the visibility timeout ` +
        `(${normalize.visibilityTimeoutSeconds} s), which Lambda refuses: pass --function-timeout ` +
        `${normalize.visibilityTimeoutSeconds} or less, or a longer --visibility-timeout.`,
    );
  }
  return { ...defaultTopology, appName, normalize };
}
