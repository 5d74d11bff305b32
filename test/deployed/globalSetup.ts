import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { resolveStackResources, type StackResources } from '../../app/cli/stackTarget.js';
import { startMiniStack } from '../../local/emulator/ministackServer.js';
import { cdkLocalDeploy } from './support/cdkLocalDeploy.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** MiniStack's endpoint, where the stack is deployed. */
    ministackEndpoint: string;
    /** The deployed stack's resources, from its CloudFormation outputs. */
    deployedStack: StackResources;
  }
}

/** The stack's name: the app's default, so its queue names are the shipped ones. */
const STACK_NAME = 'rerun';

/**
 * The deployed tier's setup: installs MiniStack if needed (requirements/ministack.txt, pinned, into .venv/ministack),
 * starts it on a free loopback port, deploys the real CDK app to it with cdklocal, and provides the
 * stack's outputs (DescribeStacks, through the same resolver as `rerun --stack`). MiniStack's log
 * is kept in .rerun/ministack.log for a failed run.
 */
export default async function setup(project: TestProject) {
  const root = process.cwd();
  const started = Date.now();
  const say = (text: string) => process.stderr.write(`[deployed tier] ${text}\n`);
  const ministack = await startMiniStack();
  say(`MiniStack at ${ministack.endpoint} (${Date.now() - started} ms)`);
  const keepLog = () => {
    mkdirSync(join(root, '.rerun'), { recursive: true });
    writeFileSync(join(root, '.rerun', 'ministack.log'), ministack.logTail());
  };
  try {
    await cdkLocalDeploy({ endpoint: ministack.endpoint, cwd: root, stackName: STACK_NAME });
    const stack = await resolveStackResources(
      new CloudFormationClient({
        endpoint: ministack.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      }),
      STACK_NAME,
      ministack.endpoint,
    );
    say(`stack ${STACK_NAME} deployed and described (${Date.now() - started} ms since start)`);
    project.provide('ministackEndpoint', ministack.endpoint);
    project.provide('deployedStack', stack);
  } catch (error) {
    keepLog();
    await ministack.stop();
    throw error;
  }
  return async () => {
    keepLog();
    await ministack.stop();
  };
}
