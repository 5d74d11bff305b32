import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleStartModules } from '../../bench/bundleSize.js';
import { projectRoot } from '../../infra/paths.js';
import { buildReferenceWorkers } from '../../scripts/buildWorkers.js';
import { ReferenceWorkerBundleMissingError, StackConfigurationInvalidError } from '../../src/cdk/errors.js';
import { RerunPipeline } from '../../src/cdk/RerunPipeline.js';
import { REFERENCE_WORKERS_DIR, type ReferenceWorkerName, referenceWorkerIn } from '../../src/cdk/referenceWorker.js';
import { SqsWorker } from '../../src/cdk/SqsWorker.js';
import { WORKER_BUNDLING } from '../../src/cdk/workerBundling.js';
import { workerEsbuildOptions } from '../../src/cdk/workerEsbuildOptions.js';
import { externalSdkImports } from '../support/externalSdkImports.js';
import { handlerTypeInIsolation } from '../support/isolatedBundle.js';

// The prebuilt normalize worker, built as `npm run build` builds it, into a folder of its own (the
// consumer test rebuilds dist/ in parallel).
let workersDir = '';
const tmp: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tmp.push(dir);
  return dir;
};
beforeAll(async () => {
  workersDir = tempDir('rerun-workers-');
  await buildReferenceWorkers(workersDir, ['normalize']);
}, 60_000);
afterAll(() => {
  for (const dir of tmp) rmSync(dir, { recursive: true, force: true });
});

type FunctionJson = {
  Properties: {
    Handler: string;
    Runtime: string;
    Code: { S3Key: string };
    Environment: { Variables: Record<string, unknown> };
  };
};

describe('RerunPipeline with the prebuilt normalize worker', () => {
  let app: App;
  let template: Template;
  let assemblyDir: string;
  let fn: FunctionJson;

  beforeAll(() => {
    app = new App({ outdir: tempDir('rerun-reference-worker-') });
    const stack = new Stack(app, 'Consumer');
    new RerunPipeline(stack, 'Pipeline', { worker: referenceWorkerIn(workersDir, 'normalize') });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    assemblyDir = app.synth().directory;
    template = Template.fromStack(stack);
    const fns = template.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } });
    fn = Object.values(fns)[0] as FunctionJson;
  }, 60_000);

  it('synthesizes with cdk-nag AwsSolutions clean, deploying the bundle as it is', () => {
    const report = new AwsSolutionsChecks(app).validateScope(app);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
    expect(fn.Properties).toMatchObject({ Handler: 'index.handler', Runtime: 'nodejs24.x' });
  });

  it('ships an asset holding index.mjs, its chunks and their maps, with no @aws-sdk/* import from outside', () => {
    const asset = join(assemblyDir, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`);
    const files = readdirSync(asset).sort();
    expect(files).toContain('index.mjs');
    const modules = files.filter((f) => f.endsWith('.mjs'));
    expect(files.filter((f) => f.endsWith('.map')).sort()).toEqual(modules.map((f) => `${f}.map`).sort());
    for (const file of modules) expect(externalSdkImports(readFileSync(join(asset, file), 'utf8'))).toEqual([]);
    const bundle = readFileSync(join(asset, 'index.mjs'), 'utf8');
    // The SDK's PutObject serializer, which writes If-None-Match, is inside, in what the entry loads.
    const start = bundleStartModules(asset).map((file) => readFileSync(join(asset, file), 'utf8'));
    expect(start.join('\n')).toContain('If-None-Match');
    expect(bundle.startsWith('import { createRequire as __rerunCreateRequire }')).toBe(true);
  });

  it("gets from the construct's defaults every variable the normalize handler requires", () => {
    const vars = fn.Properties.Environment.Variables;
    // functions/normalize/handler.ts: OUTPUT_BUCKET required, MAX_INPUT_BYTES the size limit,
    // RERUN_TRACE_AWS_SDK with tracing on, INPUT_BUCKETS the only bucket it reads (an event naming
    // another is refused). No LEDGER_TABLE: it uses the ledger only for NOTIFY_URL, which a webhook
    // sets together with the ledger (RerunPipeline's `ledger`).
    // FAILURE_PREFIX where its failure records may go; MAX_RECEIVE_COUNT its queue's redrive count;
    // CODE_VERSION_PREFIX where it records when its code version first ran (the prefix the tools list).
    expect(vars.CODE_VERSION_PREFIX).toBe('code-versions/');
    expect(Object.keys(vars).sort()).toEqual([
      'CODE_VERSION_PREFIX',
      'FAILURE_PREFIX',
      'INPUT_BUCKETS',
      'LOG_LEVEL',
      'MAX_INPUT_BYTES',
      'MAX_RECEIVE_COUNT',
      'NODE_OPTIONS',
      'OUTPUT_BUCKET',
      'RERUN_TRACE_AWS_SDK',
    ]);
  });

  it('loads in plain Node.js with no node_modules in reach', () => {
    const env = {
      OUTPUT_BUCKET: 'probe-bucket',
      AWS_REGION: 'us-east-1',
      LOG_LEVEL: 'warn',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    expect(handlerTypeInIsolation(join(workersDir, 'normalize', 'index.mjs'), env)).toBe('function');
  });
});

describe("the normalize bundle's start", () => {
  // Distinctive texts of each SDK: X-Ray's daemon address variable, DynamoDB's JSON protocol target prefix.
  const XRAY = 'AWS_XRAY_DAEMON_ADDRESS';
  const DYNAMODB = 'DynamoDB_20120810';
  const holding = (dir: string, files: readonly string[], text: string) =>
    files.filter((file) => readFileSync(join(dir, file), 'utf8').includes(text));

  it('reads neither the X-Ray SDK nor the DynamoDB client: only their import() loads them, from chunks beside it', () => {
    const dir = join(workersDir, 'normalize');
    const start = bundleStartModules(dir);
    // The entry imports the chunks every path needs (the S3 and SQS clients among them).
    expect(start.length).toBeGreaterThan(1);
    expect(holding(dir, start, XRAY)).toEqual([]);
    expect(holding(dir, start, DYNAMODB)).toEqual([]);
    const all = readdirSync(dir).filter((f) => f.endsWith('.mjs'));
    expect(holding(dir, all, XRAY)).not.toEqual([]);
    expect(holding(dir, all, DYNAMODB)).not.toEqual([]);
  });

  it('loads with tracing and a ledger, which import their chunks at start, with no node_modules in reach', () => {
    const env = {
      OUTPUT_BUCKET: 'probe-bucket',
      AWS_REGION: 'us-east-1',
      LOG_LEVEL: 'warn',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      RERUN_TRACE_AWS_SDK: 'true',
      NOTIFY_URL: 'http://127.0.0.1:9/hook',
      LEDGER_TABLE: 'probe-ledger',
    };
    expect(handlerTypeInIsolation(join(workersDir, 'normalize', 'index.mjs'), env)).toBe('function');
  });
});

describe('the prebuilt bundle and the construct bundling cannot drift', () => {
  it('is byte for byte the bundle NodejsFunction makes of the same handler', () => {
    const app = new App({ outdir: tempDir('rerun-reference-worker-') });
    const stack = new Stack(app, 'Bundled');
    const worker = new SqsWorker(stack, 'Normalize', {
      topology: {
        name: 'normalize',
        memoryMiB: 512,
        functionTimeoutSeconds: 60,
        visibilityTimeoutSeconds: 360,
        batchSize: 10,
        maxBatchingWindowSeconds: 1,
        maxConcurrency: 2,
        maxReceiveCount: 5,
        queueRetentionDays: 4,
        dlqRetentionDays: 14,
      },
      source: {
        entry: join(projectRoot, 'functions', 'normalize', 'handler.ts'),
        projectRoot,
        depsLockFilePath: join(projectRoot, 'package-lock.json'),
        tsconfig: join(projectRoot, 'tsconfig.json'),
      },
    });
    const assembly = app.synth();
    const json = Template.fromStack(stack).toJSON() as { Resources: Record<string, FunctionJson> };
    const id = stack.getLogicalId(worker.function.node.defaultChild as never);
    const key = json.Resources[id]?.Properties.Code.S3Key ?? '';
    const asset = join(assembly.directory, `asset.${key.replace(/\.zip$/, '')}`);
    const prebuiltDir = join(workersDir, 'normalize');
    const modules = (dir: string) =>
      readdirSync(dir)
        .filter((f) => f.endsWith('.mjs'))
        .sort();
    expect(modules(prebuiltDir)).toEqual(modules(asset));
    for (const file of modules(asset)) {
      const bundled = readFileSync(join(asset, file));
      const prebuilt = readFileSync(join(prebuiltDir, file));
      expect(prebuilt.length).toBe(bundled.length);
      expect(prebuilt.equals(bundled)).toBe(true);
    }
  }, 60_000);

  it('refuses a bundling setting the prebuild does not translate', () => {
    expect(() =>
      workerEsbuildOptions(
        { ...WORKER_BUNDLING, mainFields: ['module'], keepNames: true },
        { entry: 'x.ts', outdir: 'o', cwd: projectRoot },
      ),
    ).toThrow(/keepNames/);
  });
});

describe('referenceWorker without a prebuilt bundle', () => {
  it('fails saying to run npm run build, or to use { entry }', () => {
    const empty = tempDir('rerun-no-workers-');
    let error: unknown;
    try {
      referenceWorkerIn(empty, 'normalize');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ReferenceWorkerBundleMissingError);
    expect((error as Error).message).toContain(join(empty, 'normalize', 'index.mjs'));
    expect((error as Error).message).toMatch(/run `npm run build`/);
    expect((error as Error).message).toMatch(/\{ entry \}/);
  });

  it('refuses a name that is not one of the reference workers', () => {
    expect(() => referenceWorkerIn(workersDir, 'upper' as ReferenceWorkerName)).toThrow(StackConfigurationInvalidError);
  });

  it("looks in the checkout's dist/workers when run from the sources (the package's own dist/workers when compiled)", () => {
    expect(REFERENCE_WORKERS_DIR).toBe(join(projectRoot, 'dist', 'workers'));
  });
});
