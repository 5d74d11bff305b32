import { describe, expect, it } from 'vitest';
import { CliUsageError } from '../../app/common/command.js';
import type { PlanningStage } from '../../app/common/pipelineStage.js';
import type { PipelineTarget } from '../../app/common/pipelineTarget.js';
import { objectStageStatusReport } from '../../app/status/objectStageStatusReport.js';
import type { StatusEvent } from '../../app/status/statusEvents.js';
import type { StatusRequest } from '../../app/status/statusRequest.js';

/** A target that fails the test when anything of it is read: a refused request touches no bucket. */
const UNTOUCHED = new Proxy({} as PipelineTarget, {
  get(_, name) {
    throw new Error(`the target's ${String(name)} was read`);
  },
});

/** An object stage of a user's pipeline, over incoming/, without a code version. */
const STAGE = { name: 'upper', from: 'pipeline.json', reference: false, inputPrefix: 'incoming/' } as PlanningStage;

const ASKED: StatusRequest = { verify: false, validate: true, json: false };

describe("rerun status of an object stage takes a typed request, and refuses what the stage can't judge", () => {
  const refusal = async (request: StatusRequest) => {
    const told: StatusEvent[] = [];
    const error = await objectStageStatusReport(request, {} as never, UNTOUCHED, STAGE, (e) => told.push(e)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(told).toEqual([]);
    expect(error).toBeInstanceOf(CliUsageError);
    return (error as Error).message;
  };

  it('--from/--to, a --prefix outside the stage, --verify without a code version: usage errors, nothing read', async () => {
    expect(await refusal({ ...ASKED, from: '2026-01-01', to: '2026-01-02' })).toMatch(/Drop --from and --to\.$/);
    expect(await refusal({ ...ASKED, prefix: 'other/' })).toMatch(
      /^--prefix must start with the input prefix incoming\//,
    );
    expect(await refusal({ ...ASKED, verify: true })).toMatch(/^--verify judges each output's code version/);
  });
});
