import { describe, expect, it } from 'vitest';
import { parseStageHandlers, scheduledWindowMessage, windowStagesOf } from '../../app/dev/devWindowStages.js';
import { topology } from '../../app/topology.js';
import { LocalSetupError } from '../../local/errors.js';
import { partitionScheme } from '../../src/partitions/partitionScheme.js';
import { describePipeline } from '../../src/pipeline/pipelineDescription.js';
import { WINDOW_STAGE_DEFAULT_SETTINGS } from '../../src/topology/windowStageSettings.js';
import { parseWindowTaskMessage } from '../../src/window/windowTaskMessage.js';

const DAILY = { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' } as const;
const WEEKLY = { kind: 'time', grain: 'weekly', template: '{yyyy}-W{ww}' } as const;

/** Stages listed downstream first, to prove the order follows the inputs, not the listing. */
const description = describePipeline({
  name: 'p',
  stages: {
    weekly: {
      kind: 'window',
      input: { stage: 'daily' },
      partitions: WEEKLY,
      outputPrefix: 'weekly/',
      codeVersion: 'w@1',
    },
    daily: { kind: 'window', input: { stage: 'upper' }, partitions: DAILY, outputPrefix: 'daily/', codeVersion: 'd@1' },
    upper: {
      kind: 'object',
      input: { prefix: 'incoming/' },
      outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' },
      partitions: DAILY,
    },
  },
});

describe('rerun dev --pipeline: window stages from the description', () => {
  it('orders window stages after the stages they read, with the construct defaults and the session overrides', () => {
    const stages = windowStagesOf(description, topology, {
      visibilityTimeoutSeconds: 3,
      maxReceiveCount: 2,
      functionTimeoutSeconds: 2,
    });
    expect(stages.map((s) => s.name)).toEqual(['daily', 'weekly']);
    expect(stages[0]?.worker).toEqual({
      ...WINDOW_STAGE_DEFAULT_SETTINGS,
      name: 'daily',
      visibilityTimeoutSeconds: 3,
      maxReceiveCount: 2,
      functionTimeoutSeconds: 2,
    });
  });

  it('refuses a function timeout above the visibility timeout, as Lambda refuses the mapping', () => {
    expect(() => windowStagesOf(description, topology, { visibilityTimeoutSeconds: 3 })).toThrow(
      /Window stage "daily": the function timeout \(900 s\) exceeds the visibility timeout \(3 s\)/,
    );
  });

  it('refuses an object stage over another prefix than the one rerun dev notifies', () => {
    const other = describePipeline({
      name: 'p',
      stages: { upper: { kind: 'object', input: { prefix: 'uploads/' }, outputKey: { prefix: 'upper/' } } },
    });
    expect(() => windowStagesOf(other, topology, {})).toThrow(LocalSetupError);
    expect(() => windowStagesOf(other, topology, {})).toThrow(/reads the input prefix "uploads\/"/);
  });

  it('reads --stage-handler values, and refuses malformed or repeated ones by their text', () => {
    expect(parseStageHandlers(['daily=./d.mjs', 'weekly=w.ts#build'])).toEqual({
      daily: { path: './d.mjs' },
      weekly: { path: 'w.ts', export: 'build' },
    });
    for (const bad of ['daily', '=x.mjs', 'daily=', 'daily=x.mjs#']) {
      expect(() => parseStageHandlers([bad]), bad).toThrow(`--stage-handler ${bad}: expected STAGE=PATH`);
    }
    expect(() => parseStageHandlers(['daily=a.mjs', 'daily=b.mjs'])).toThrow('names the stage "daily" twice');
  });

  it("sends what the stage's schedule sends: the handler resolves it to the window that just closed", () => {
    const at = Date.parse('2026-12-06T00:00:00Z');
    const message = scheduledWindowMessage('daily', at);
    expect(message.MessageGroupId).toBe('schedule-daily');
    const parsed = parseWindowTaskMessage(message.MessageBody, { stage: 'daily', scheme: partitionScheme(DAILY) });
    expect(parsed).toMatchObject({ kind: 'task', window: { name: '2026-12-05' } });
  });
});
