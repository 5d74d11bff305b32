import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { IAMClient } from '@aws-sdk/client-iam';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { resolveStackResources, type StackResources } from '../../app/common/stackTarget.js';
import { startMiniStack } from '../../local/emulator/ministackServer.js';
import { cdkLocalDeploy } from './support/cdkLocalDeploy.js';
import { ensureMiniStackCertificate } from './support/ministackCertificate.js';
import { createOperator, type OperatorCredentials } from './support/operatorIdentity.js';
import { writeReadmeApp } from './support/readmeApp.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** MiniStack's endpoint, where the stack is deployed. */
    ministackEndpoint: string;
    /** The deployed stack's resources, from its CloudFormation outputs. */
    deployedStack: StackResources;
    /** The IAM user the operator commands run as (support/operatorIdentity.ts). */
    operator: OperatorCredentials;
    /** The stack of the README's own worker and RerunPipeline call (support/readmeApp.ts), from its outputs. */
    readmeStack: StackResources;
    /** The IAM user the operator commands on the README's stack run as. */
    readmeOperator: OperatorCredentials;
  }
}

/** MiniStack's root key: allowed everything, policies unchecked (the tier's own setup only). */
const ROOT = { accessKeyId: 'test', secretAccessKey: 'test' };

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
  const certificate = ensureMiniStackCertificate(join(root, '.rerun', 'ministack-tls'));
  const ministack = await startMiniStack({ enforceIam: { certificate } });
  say(`MiniStack at ${ministack.endpoint} (${Date.now() - started} ms)`);
  const keepLog = () => {
    mkdirSync(join(root, '.rerun'), { recursive: true });
    writeFileSync(join(root, '.rerun', 'ministack.log'), ministack.logTail());
  };
  try {
    await cdkLocalDeploy({
      endpoint: ministack.endpoint,
      cwd: root,
      stackName: STACK_NAME,
      caBundle: certificate.cert,
    });
    // This process started before NODE_EXTRA_CA_CERTS was set, so it trusts the certificate explicitly.
    const trusting = { httpsAgent: new Agent({ ca: readFileSync(certificate.cert) }) };
    const stack = await resolveStackResources(
      new CloudFormationClient({
        endpoint: ministack.endpoint,
        region: 'us-east-1',
        credentials: ROOT,
        requestHandler: trusting,
      }),
      STACK_NAME,
      ministack.endpoint,
    );
    say(`stack ${STACK_NAME} deployed and described (${Date.now() - started} ms since start)`);
    // The README's pipeline, deployed exactly as the README says, from its own folder.
    const readme = writeReadmeApp(root);
    await cdkLocalDeploy({
      endpoint: ministack.endpoint,
      cwd: readme.dir,
      projectRoot: root,
      stackName: readme.stackName,
      app: `${join(root, 'node_modules', '.bin', 'tsx')} app.mjs`,
      bootstrap: false,
      caBundle: certificate.cert,
    });
    say(`stack ${readme.stackName} (the README's pipeline) deployed (${Date.now() - started} ms since start)`);
    const cloudformation = new CloudFormationClient({
      endpoint: ministack.endpoint,
      region: 'us-east-1',
      credentials: ROOT,
      requestHandler: trusting,
    });
    const readmeStack = await resolveStackResources(cloudformation, readme.stackName, ministack.endpoint);
    const iam = new IAMClient({
      endpoint: ministack.endpoint,
      region: 'us-east-1',
      credentials: ROOT,
      requestHandler: trusting,
    });
    const operator = await createOperator(iam, stack);
    const readmeOperator = await createOperator(iam, readmeStack);
    project.provide('ministackEndpoint', ministack.endpoint);
    project.provide('deployedStack', stack);
    project.provide('operator', operator);
    project.provide('readmeStack', readmeStack);
    project.provide('readmeOperator', readmeOperator);
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
