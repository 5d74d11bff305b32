import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startMotoServer } from '../src/emulator/motoServer.js';

declare module 'vitest' {
  export interface ProvidedContext {
    awsEndpoint: string;
  }
}

/**
 * Starts one moto server for the whole test run (or reuses AWS_ENDPOINT_URL, e.g. LocalStack).
 * Test files isolate themselves with unique resource names (see test/support/aws.ts).
 */
export default async function setup(project: TestProject) {
  const external = process.env.AWS_ENDPOINT_URL;
  if (external) {
    project.provide('awsEndpoint', external);
    return;
  }
  const moto = await startMotoServer();
  project.provide('awsEndpoint', moto.endpoint);
  return () => moto.stop();
}
