import { expect } from 'vitest';
import type { PipelineClients } from '../../../src/ledger/pipelineClients.js';
import { KNOWN_DIFFERENCES, type KnownDifference } from './knownDifferences.js';
import { recordedSequences } from './recorded.js';
import { compare, type Difference, endpointSide, modelSide, replay } from './replay.js';
import { SCRIPTED } from './sequences.js';

/**
 * Replays every sequence (the scripted ones and those recorded from the simulation) on the models
 * and on the emulator, and checks the differences against the known list: each difference found
 * must be a known one of this emulator, and each known one must still be found.
 */
export async function checkConformance(
  emulator: KnownDifference['emulator'],
  clients: PipelineClients,
  run: string,
): Promise<void> {
  const sequences = [...SCRIPTED, ...(await recordedSequences([1, 2, 3]))];
  const found: Difference[] = [];
  for (const [i, sequence] of sequences.entries()) {
    const model = await replay(modelSide(), sequence, `${run}-${i}`);
    const other = await replay(endpointSide(emulator, clients), sequence, `${run}-${i}`);
    found.push(...compare(sequence, model, other));
  }
  const known = KNOWN_DIFFERENCES.filter((k) => k.emulator === emulator);
  const unknown = found.filter((d) => !known.some((k) => k.matches(d)));
  expect(
    unknown.map(
      (d) =>
        `${d.sequence}, step ${d.step}, ${d.request} ${d.field}: model ${d.model.slice(0, 160)} / ${emulator} ${d.emulator.slice(0, 160)}`,
    ),
    'differences from the models that docs/EMULATORS.md does not list',
  ).toEqual([]);
  const gone = known.filter((k) => !found.some((d) => k.matches(d))).map((k) => k.id);
  expect(gone, `listed differences of ${emulator} that no replay shows any more (update docs/EMULATORS.md)`).toEqual(
    [],
  );
}
