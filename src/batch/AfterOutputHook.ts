import type { Logger } from '../logging/logger.js';
import type { OutputDescription } from '../worker/ObjectOutcome.js';

/** Called after an object's output is known to be valid and current (written now or found done). */
export type AfterOutputHook = (
  output: OutputDescription,
  context: {
    readonly source: { bucket: string; key: string };
    readonly remainingTimeMs: number;
    readonly logger: Logger;
  },
) => Promise<AfterOutputResult>;

/** What an {@link AfterOutputHook} did: whether its side effect ran now (false: replayed or not needed). */
export interface AfterOutputResult {
  readonly executed: boolean;
  /** Appended to the record's reason, e.g. `notified` or `notification already sent`. */
  readonly note: string;
}
