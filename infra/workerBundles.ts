import { createHash, randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { StackWorkerSynthesizer } from '../app/dev/StackWorkerSynthesizer.js';
import type { LambdaFunctionSettings } from '../local/runner/LambdaRuntimeSlot.js';
import type { LocalFunctionOverrides } from '../local/runner/LocalFunctionOverrides.js';
import { WorkerBundleUnusableError } from '../src/cdk/errors.js';
import { projectRoot } from './paths.js';

/** The stack's workers that run on Lambda. */
export const WORKER_NAMES = ['normalize', 'summarize'] as const;
export type WorkerName = (typeof WORKER_NAMES)[number];

/** One worker's deployed artifact and the function settings Lambda runs it with, read from the synthesized template. */
export interface WorkerBundle {
  readonly worker: WorkerName;
  /** A copy of the function's asset folder (`index.mjs`, the chunks it loads, their maps), outside the project tree. */
  readonly directory: string;
  /** The function's `Handler` (`index.handler`). */
  readonly handler: string;
  /** The function's `Runtime` (`nodejs24.x`). */
  readonly runtime: string;
  readonly timeoutSeconds: number;
  readonly memoryMiB: number;
  /** The function's `LoggingConfig` (the stack sets JSON logs with an application log level). */
  readonly logging: { readonly format: 'Text' | 'JSON'; readonly applicationLogLevel?: string };
  /** The function's environment variables whose values the template holds literally (LOG_LEVEL, NODE_OPTIONS). */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * The names of the variables CloudFormation resolves at deploy time (bucket and table names,
   * dynamic references): whoever runs the bundle locally must provide them.
   */
  readonly deployTimeEnvironment: readonly string[];
}

/** Options of {@link synthesizeWorkerBundles}. */
export interface SynthesizeWorkerBundlesOptions {
  /**
   * Where bundles are cached, one folder per digest of the sources that make them. It must have no
   * `node_modules` in any parent folder, so the bundle cannot load a package it does not carry.
   * @default `<os tmpdir>/rerun-lambda-bundles`
   */
  readonly cacheRoot?: string;
}

/** What decides a bundle's content: the handler sources, the library, the stack (bundling settings) and the lockfile. */
const SOURCE_ROOTS = ['functions', 'src', 'infra', 'package.json', 'package-lock.json', 'tsconfig.json', 'cdk.json'];

/**
 * Synthesizes the real CDK app (the stack's own `NodejsFunction` bundling: esbuild, ESM, the SDK
 * inside, source maps) and returns each worker's asset with its function settings, found through
 * the template (function -> `Code.S3Key` -> `asset.<hash>/`). No second copy of the esbuild options
 * exists, so what runs locally is what `cdk deploy` uploads.
 *
 * Cached per digest of the sources: the first call takes a synth (about 8 s), later ones read the
 * cache. Each worker's folder is copied out of the project tree, as Lambda's /var/task holds the
 * bundle alone.
 *
 * @example
 * const { normalize } = await synthesizeWorkerBundles();
 * normalize.directory; // '/tmp/rerun-lambda-bundles/<digest>/normalize' (holds index.mjs)
 * normalize.deployTimeEnvironment; // ['OUTPUT_BUCKET', 'INPUT_BUCKETS', 'LEDGER_TABLE'] (and NOTIFY_URL with a webhook)
 */
export async function synthesizeWorkerBundles(
  options: SynthesizeWorkerBundlesOptions = {},
): Promise<Record<WorkerName, WorkerBundle>> {
  const cacheRoot = options.cacheRoot ?? join(tmpdir(), 'rerun-lambda-bundles');
  const digest = sourceDigest();
  const target = join(cacheRoot, digest);
  const index = join(target, 'bundles.json');
  if (existsSync(index)) return JSON.parse(readFileSync(index, 'utf8'));

  // Built beside the target and renamed into place, so concurrent callers never see half a cache entry.
  const staging = `${target}.${randomBytes(4).toString('hex')}.partial`;
  const outdir = join(staging, 'cdk.out');
  mkdirSync(outdir, { recursive: true });
  try {
    const context = JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')).context;
    // cdk-nag inspects the template and changes no asset: leave it to `cdk synth`.
    // Imported here: aws-cdk-lib takes a second or two to load, which a cache hit does not need.
    const { buildRerunApp } = await import('./buildApp.js');
    const { app, stack } = buildRerunApp({ appProps: { outdir, context }, nag: false });
    const assembly = app.synth();
    const template = assembly.getStackByName(stack.stackName).template as {
      Resources: Record<string, { Properties?: Record<string, unknown> }>;
    };
    const bundles = {} as Record<WorkerName, WorkerBundle>;
    for (const worker of WORKER_NAMES) {
      const fn = stack[worker].function;
      const logicalId = stack.getLogicalId(fn.node.defaultChild as CfnFunction);
      const properties = template.Resources[logicalId]?.Properties ?? {};
      const code = properties.Code as { S3Key?: unknown } | undefined;
      if (typeof code?.S3Key !== 'string') {
        throw new WorkerBundleUnusableError(
          `The synthesized ${worker} function (${logicalId}) has no asset (its Code.S3Key is missing): is it still a NodejsFunction?`,
        );
      }
      const directory = join(target, worker);
      cpSync(join(assembly.directory, `asset.${code.S3Key.replace(/\.zip$/, '')}`), join(staging, worker), {
        recursive: true,
      });
      const variables = ((properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ??
        {}) as Record<string, unknown>;
      const environment: Record<string, string> = {};
      const deployTimeEnvironment: string[] = [];
      for (const [name, value] of Object.entries(variables)) {
        if (typeof value === 'string') environment[name] = value;
        else deployTimeEnvironment.push(name);
      }
      const loggingConfig = (properties.LoggingConfig ?? {}) as { LogFormat?: unknown; ApplicationLogLevel?: unknown };
      bundles[worker] = {
        worker,
        directory,
        logging: {
          format: loggingConfig.LogFormat === 'JSON' ? 'JSON' : 'Text',
          ...(typeof loggingConfig.ApplicationLogLevel === 'string'
            ? { applicationLogLevel: loggingConfig.ApplicationLogLevel }
            : {}),
        },
        handler: String(properties.Handler),
        runtime: String(properties.Runtime),
        timeoutSeconds: Number(properties.Timeout),
        memoryMiB: Number(properties.MemorySize),
        environment,
        deployTimeEnvironment,
      };
    }
    rmSync(outdir, { recursive: true, force: true });
    writeFileSync(join(staging, 'bundles.json'), JSON.stringify(bundles, null, 2));
    try {
      renameSync(staging, target);
    } catch (error) {
      // Another process cached the same digest first: use theirs.
      if (!existsSync(index)) throw error;
    }
    return JSON.parse(readFileSync(index, 'utf8'));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** SHA-256 over the paths and contents of every file under {@link SOURCE_ROOTS}. */
function sourceDigest(): string {
  const hash = createHash('sha256');
  const visit = (path: string) => {
    const entries = readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.isFile()) hash.update(`${relative(projectRoot, full)}\0`).update(readFileSync(full));
    }
  };
  for (const root of SOURCE_ROOTS) {
    const full = join(projectRoot, root);
    if (!existsSync(full)) continue;
    if (statSync(full).isDirectory()) visit(full);
    else hash.update(`${root}\0`).update(readFileSync(full));
  }
  return hash.digest('hex').slice(0, 32);
}

/**
 * The settings a Lambda runtime slot runs a synthesized worker with: its handler, timeout, memory
 * and literal environment from the template, and the values CloudFormation would resolve at deploy
 * time from the caller. Throws when one of those is missing, naming it.
 *
 * @example
 * const settings = lambdaFunctionSettings(normalize, { functionName: 'rerun-normalize', region: 'us-east-1',
 *   credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
 *   environment: { OUTPUT_BUCKET: 'rerun-output', LEDGER_TABLE: 'rerun-ledger', NOTIFY_URL: '', AWS_ENDPOINT_URL: endpoint } });
 */
export function lambdaFunctionSettings(
  bundle: WorkerBundle,
  overrides: LocalFunctionOverrides,
): LambdaFunctionSettings {
  const missing = bundle.deployTimeEnvironment.filter((name) => overrides.environment[name] === undefined);
  if (missing.length > 0) {
    throw new WorkerBundleUnusableError(
      `The ${bundle.worker} function needs ${missing.join(', ')}, which the stack resolves at deploy time: pass a local value for each.`,
    );
  }
  return {
    codeDirectory: bundle.directory,
    handler: bundle.handler,
    functionName: overrides.functionName,
    timeoutSeconds: overrides.timeoutSeconds ?? bundle.timeoutSeconds,
    memoryMiB: overrides.memoryMiB ?? bundle.memoryMiB,
    logging: bundle.logging,
    environment: { ...bundle.environment, ...overrides.environment },
    region: overrides.region,
    credentials: overrides.credentials,
  };
}

/**
 * `rerun dev --runtime lambda`'s view of this stack: synthesizes the worker bundles, then gives each
 * worker's settings with the session's values. The CLI finds it in a checkout and passes it to
 * `runDev` (app/ does not import the stack, which imports app/).
 *
 * @example
 * const settingsOf = await synthesizeStackWorkers();
 * settingsOf('normalize', { functionName: 'rerun-normalize', environment, region: 'us-east-1', credentials });
 */
export const synthesizeStackWorkers: StackWorkerSynthesizer = async () => {
  const bundles = await synthesizeWorkerBundles();
  return (worker, overrides) => lambdaFunctionSettings(bundles[worker], overrides);
};
