/**
 * The CDK app `cdk synth` / `cdk deploy` run (cdk.json: `npx tsx infra/app.ts`).
 * Environment-agnostic: the account and region come from the deploying credentials, so synth
 * needs neither credentials nor network.
 */
import { buildRerunApp } from './buildApp.js';

buildRerunApp();
