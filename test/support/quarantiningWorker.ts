import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';

/**
 * The tests' worker with a side output: upper-cases each line into `out/{bucket}/{key}.txt`, and
 * writes a line starting with "!" to the quarantine side output `quarantine/{bucket}/{key}.txt`
 * instead. Returns no summary. `overrides` replace any of its fields.
 *
 * @example
 * const worker = quarantiningWorker('out', { codeVersion: 'upper@2' });
 */
export function quarantiningWorker(outputBucket: string, overrides: Partial<WorkerDefinition> = {}): WorkerDefinition {
  return defineWorker({
    name: 'upper',
    codeVersion: 'upper@1',
    outputBucket,
    outputKey: (s) => deterministicKey({ prefix: 'out/', source: s, suffix: '.txt' }),
    sideOutputs: { quarantine: (s) => deterministicKey({ prefix: 'quarantine/', source: s, suffix: '.txt' }) },
    async transform({ body }, { output, side }) {
      let text = '';
      for await (const chunk of body) text += String(chunk);
      for (const line of text.split('\n').filter(Boolean)) {
        if (line.startsWith('!')) await side('quarantine').write(`${line}\n`);
        else await output.write(`${line.toUpperCase()}\n`);
      }
      return {};
    },
    ...overrides,
  });
}
