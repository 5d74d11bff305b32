import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { type BuildRerunAppOptions, buildRerunApp } from '../../../infra/buildApp.js';
import { projectRoot } from '../../../infra/paths.js';
import type { RerunStack } from '../../../infra/RerunStack.js';

/** A synthesized rerun app, as the stack tests inspect it. */
export interface SynthesizedRerun {
  readonly app: App;
  readonly stack: RerunStack;
  readonly template: Template;
  /** The raw template JSON (resources, parameters, outputs). */
  readonly json: CfnTemplate;
  /** Directory of the cloud assembly (cdk.out equivalent). */
  readonly assemblyDir: string;
  /** Removes the assembly directory. */
  dispose(): void;
}

/** The parts of a CloudFormation template the tests read. */
export interface CfnTemplate {
  Resources: Record<string, CfnResourceJson>;
  Parameters?: Record<string, Record<string, unknown>>;
  Outputs?: Record<string, { Value: unknown; Description?: string }>;
}

/** One template resource. */
export interface CfnResourceJson {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string[];
}

/** The feature flags and settings `cdk synth` reads from cdk.json, so the tests synthesize what the CLI does. */
export function cdkJsonContext(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')).context;
}

/**
 * Builds and synthesizes the app once (bundling the handler with the local esbuild, no Docker, no
 * network, no credentials). Synthesis runs every registered validation plugin: with the default
 * options that is cdk-nag (AwsSolutions) and CDK's built-in CloudFormation validation, so a finding
 * makes this throw.
 */
export function synthRerun(options: BuildRerunAppOptions = {}): SynthesizedRerun {
  const outdir = mkdtempSync(join(tmpdir(), 'rerun-cdk-test-'));
  const { app, stack } = buildRerunApp({
    ...options,
    appProps: { outdir, ...options.appProps, context: { ...cdkJsonContext(), ...options.appProps?.context } },
  });
  const assembly = app.synth();
  const template = Template.fromStack(stack);
  return {
    app,
    stack,
    template,
    json: template.toJSON() as CfnTemplate,
    assemblyDir: assembly.directory,
    dispose: () => rmSync(outdir, { recursive: true, force: true }),
  };
}

/** Logical ids of the resources of `type`. */
export function logicalIdsOfType(json: CfnTemplate, type: string): string[] {
  return Object.entries(json.Resources)
    .filter(([, r]) => r.Type === type)
    .map(([id]) => id);
}

/** The single resource of `type` whose logical id starts with `prefix` (fails loudly otherwise). */
export function resourceOf(json: CfnTemplate, type: string, prefix: string): { id: string; resource: CfnResourceJson } {
  const ids = logicalIdsOfType(json, type).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1) throw new Error(`expected one ${type} named ${prefix}*, found ${JSON.stringify(ids)}`);
  const id = ids[0] as string;
  return { id, resource: json.Resources[id] as CfnResourceJson };
}

/** The asset folder of a synthesized Lambda function (its `Code.S3Key` names the asset). */
export function functionAssetDir(synth: SynthesizedRerun, functionId: string): string {
  const code = synth.json.Resources[functionId]?.Properties?.Code as { S3Key?: string } | undefined;
  if (!code?.S3Key) throw new Error(`${functionId} has no asset code`);
  return join(synth.assemblyDir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
}
