import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startMotoServer } from '../local/emulator/motoServer.js';

declare module 'vitest' {
  export interface ProvidedContext {
    awsEndpoint: string;
  }
}

/**
 * Starts one moto server for the whole test run (or reuses AWS_ENDPOINT_URL, e.g. LocalStack).
 * With RERUN_TEST_RUNTIME=lambda, first synthesizes the worker bundles the runtime-mode tests run.
 * Test files isolate themselves with unique resource names (see test/support/aws.ts).
 */
export default async function setup(project: TestProject) {
  if (process.env.RERUN_TEST_RUNTIME === 'lambda') {
    // Synthesize the stack's bundles once, before the test files start (each would otherwise run
    // its own synth on a cache miss, concurrently, inside its first test's time budget).
    const { synthesizeWorkerBundles } = await import('../infra/workerBundles.js');
    await synthesizeWorkerBundles();
  }
  const external = process.env.AWS_ENDPOINT_URL;
  if (external) {
    project.provide('awsEndpoint', external);
    return;
  }
  const moto = await startMotoServer();
  project.provide('awsEndpoint', moto.endpoint);
  return () => moto.stop();
}
