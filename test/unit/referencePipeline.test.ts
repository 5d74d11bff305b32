import { describe, expect, it } from 'vitest';
import { referencePipeline } from '../../app/referencePipeline.js';
import { topology } from '../../app/topology.js';
import { normalizeKeyRules } from '../../src/normalize/normalizeWorker.js';
import { outputKeyOf } from '../../src/pipeline/keyRule.js';
import type { ObjectStage } from '../../src/pipeline/pipelineDescription.js';

describe('the reference pipeline as data', () => {
  it("its normalize stage's rules give exactly the normalize worker's output and quarantine keys", () => {
    const stage = referencePipeline().stages.normalize as ObjectStage;
    const worker = normalizeKeyRules(topology);
    for (const key of [
      'incoming/a.csv',
      'incoming/dt=2026-12-05/b c.ndjson',
      `incoming/dt=2026-12-05/${'x'.repeat(1100)}`,
      'elsewhere/d.csv',
    ]) {
      const source = { bucket: 'rerun-input', key };
      expect(outputKeyOf(stage.outputKey)(source)).toBe(worker.outputKey(source));
      expect(outputKeyOf(stage.sideOutputs?.quarantine as ObjectStage['outputKey'])(source)).toBe(
        worker.sideOutputs?.quarantine?.(source),
      );
    }
  });

  it('its summary is a daily window stage over the normalize stage, under summaries/', () => {
    expect(referencePipeline().stages.summarize).toEqual({
      kind: 'window',
      input: { stage: 'normalize' },
      partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
      outputPrefix: 'summaries/',
      codeVersion: 'summarize@1',
    });
  });
});
