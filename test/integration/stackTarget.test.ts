import { describe, expect, it } from 'vitest';
import { testClients, uniqueName } from '../support/aws.js';
import { createOutputsStack, provisionTwoStagePipeline, rerunCli } from '../support/summaryPipeline.js';

describe('rerun --stack NAME against a CloudFormation API (moto)', () => {
  const clients = testClients();

  it('status and redrive take every resource from the stack’s outputs (the app name differs on purpose)', async () => {
    const p = await provisionTwoStagePipeline(clients);
    // A stack whose outputs name the pipeline's resources, as the rerun stack's outputs do.
    const stackName = await createOutputsStack(p, 'rerun-outputs');
    const status = await rerunCli([
      'status',
      '--from',
      '2026-01-05',
      '--to',
      '2026-01-05',
      '--stack',
      stackName,
      '--json',
    ]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.json()).toMatchObject({ outputBucket: p.stack.outputBucket, inputBucket: p.stack.inputBucket });
    // The stack's name is not the local app's: redrive found both DLQs through the outputs alone.
    const redrive = await rerunCli(['redrive', '--dry-run', '--stack', stackName, '--json']);
    expect(redrive.code, redrive.stderr).toBe(0);
    expect(redrive.stderr).toBe('');
    expect(redrive.json()).toMatchObject({ dryRun: true, inspected: 0 });
  });

  it('a stack that does not exist is named in the error, exit 1', async () => {
    const name = uniqueName('no-such-stack');
    const run = await rerunCli(['status', '--from', '2026-01-05', '--to', '2026-01-05', '--stack', name]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(`rerun status: The stack "${name}" does not exist at http://127\\.0\\.0\\.1:\\d+`),
    );
  });
});
