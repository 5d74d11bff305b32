import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';

/** Options of {@link copyWorker}. */
export interface CopyWorkerOptions {
  /** @default 'copy' */
  readonly name?: string;
  /** @default '1' */
  readonly codeVersion?: string;
  /** Runs before the body is read (it may throw, as a failing transform). */
  readonly before?: () => void | Promise<void>;
  /** Runs once the whole body is copied (a slow transform advances a test clock here). */
  readonly after?: () => void;
}

/**
 * The tests' simplest worker: copies each input byte for byte to `out/` under its deterministic key.
 *
 * @example
 * const worker = copyWorker(outputBucket, { after: () => { clock.t += 100; } });
 */
export function copyWorker(outputBucket: string, options: CopyWorkerOptions = {}): WorkerDefinition {
  return defineWorker({
    name: options.name ?? 'copy',
    codeVersion: options.codeVersion ?? '1',
    outputBucket,
    outputKey: (s) => deterministicKey({ prefix: 'out/', source: s }),
    async transform({ body }, { output }) {
      await options.before?.();
      for await (const chunk of body) await output.write(chunk as Uint8Array);
      options.after?.();
      return {};
    },
  });
}
