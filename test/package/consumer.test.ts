/**
 * The package as a user gets it: `npm run build`, `npm pack`, and a new project elsewhere that
 * installs the tarball and its peers (the exact versions of our lockfile) with neither tsx nor
 * typescript. There, a plain-JavaScript worker imports from `rerun-pipeline`, the installed `rerun` bin runs
 * it under `rerun dev` with plain node, and a CDK app builds `RerunPipeline` from `rerun-pipeline/cdk`.
 *
 * The install is the slow part (aws-cdk-lib is large): 16-45 s for build, pack and install on two
 * busy cores with a warm npm cache (19 s for the install alone with an empty one); the CDK app's
 * synth (esbuild bundling and cdk-nag) about 20 s; removing the scratch project up to 30 s.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GetObjectCommand, type GetObjectCommandOutput, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevReady, DevSummary } from '../../app/dev/runDev.js';
import { ensurePythonTool, PythonTool } from '../../local/emulator/pythonEnvironment.js';
import { readDocumentationPages } from '../../scripts/docPages.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { externalSdkImports } from '../support/externalSdkImports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version: string }>;
};
/** The version our lockfile resolves, so the scratch project runs what our own tests run. */
const pinned = (name: string) => `${name}@${lock.packages[`node_modules/${name}`]?.version}`;

/** The peers (the AWS SDK clients; aws-cdk-lib and constructs for rerun/cdk), cdk-nag, and esbuild, which bundles `{ entry }`. */
const CONSUMER_DEPENDENCIES = [
  '@aws-sdk/client-s3',
  '@aws-sdk/client-sqs',
  '@aws-sdk/client-dynamodb',
  'aws-cdk-lib',
  'constructs',
  'cdk-nag',
  'esbuild',
].map(pinned);

/** The user's pipeline as data, shared by the worker and the CDK app. */
const PIPELINE = `import { definePipeline } from 'rerun-pipeline/pipeline';

// Two stages: each upload under incoming/ becomes upper/{bucket}/{key without incoming/}, and each
// day of those outputs (uploads under incoming/dt=YYYY-MM-DD/) is rolled up into daily/dt=YYYY-MM-DD/counts.json.
export const pipeline = definePipeline({
  name: 'uploads',
  stages: {
    upper: {
      kind: 'object',
      input: { prefix: 'incoming/' },
      outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' },
      codeVersion: 'upper@1',
    },
    daily: {
      kind: 'window',
      input: { stage: 'upper' },
      partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
      outputPrefix: 'daily/',
      fileName: 'counts.json',
      codeVersion: 'daily@1',
    },
  },
});
`;

/** A user's worker in plain JavaScript, written against the package name only. */
const WORKER = `import { createSqsBatchHandler, defineWorker, requireEnv } from 'rerun-pipeline';
import { pipeline } from './pipeline.mjs';
const { codeVersion, outputKey } = pipeline.stages.upper;
export const upper = defineWorker({
  name: 'upper',
  codeVersion,
  outputKey, // the key rule as data: the tools read the same rule from the stack
  outputBucket: requireEnv('OUTPUT_BUCKET'),
  outputPrefixes: ['upper/'], // RerunPipeline grants these prefixes and no other
  async transform({ text }, { output }) {
    for await (const chunk of text()) await output.write(chunk.toUpperCase());
    return {};
  },
});
export const handler = createSqsBatchHandler({ worker: upper });
`;

/**
 * A user's CDK app: a RerunPipeline with `worker`, cdk-nag's AwsSolutions checks, and a report on
 * stdout (findings, warnings, resource types, and each worker function's runtime and asset folder).
 */
const cdkApp = (
  imports: string,
  worker: string,
  outdir: string,
  stackName: string,
  extraImports = '',
) => `import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ${imports} } from 'rerun-pipeline/cdk';
${extraImports}
const app = new App({ outdir: '${outdir}' });
const stack = new Stack(app, '${stackName}');
new RerunPipeline(stack, 'Pipeline', { worker: ${worker} });
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
const assembly = app.synth();
const report = new AwsSolutionsChecks(app).validateScope(app);
const artifact = assembly.getStackArtifact(stack.artifactId);
const resources = Object.values(artifact.template.Resources);
// The worker function (SqsWorker describes it as 'rerun <name> worker'), not CDK's custom-resource handlers.
const workers = resources.filter(
  (r) => r.Type === 'AWS::Lambda::Function' && /^rerun .* worker$/.test(r.Properties.Description ?? ''),
);
console.log(JSON.stringify({
  violations: report.violations.map((v) => v.ruleName + ' ' + v.violatingResources.map((r) => r.constructPath).join(',')),
  messages: artifact.messages.filter((m) => m.level !== 'info').map((m) => m.level + ' ' + m.id + ' ' + String(m.entry.data)),
  types: resources.map((r) => r.Type),
  outputs: Object.fromEntries(Object.entries(artifact.template.Outputs ?? {}).map(([k, o]) => [k, o.Value])),
  workers: workers.map((r) => ({
    runtime: r.Properties.Runtime,
    asset: join(assembly.directory, 'asset.' + r.Properties.Code.S3Key.replace(/\\.zip$/, '')),
  })),
}));
`;

/** The minimal RerunPipeline: the user's worker.mjs, bundled by esbuild at synth. */
const CDK_APP = cdkApp(
  'RerunPipeline',
  "{ entry: 'worker.mjs' }, pipeline, outputPrefixes: ['upper/'], outputs: true",
  'cdk.out',
  'Consumer',
  "import { pipeline } from './pipeline.mjs';\n",
);
/** rerun's own normalizer, prebuilt in the package: no esbuild, no lockfile at synth. */
const PREBUILT_CDK_APP = cdkApp(
  'RerunPipeline, referenceWorker',
  "referenceWorker('normalize')",
  'cdk.out.prebuilt',
  'Normalizer',
);

interface CdkAppReport {
  violations: string[];
  messages: string[];
  types: string[];
  outputs: Record<string, unknown>;
  workers: { runtime: string; asset: string }[];
}

let scratch = '';
let packDir = '';
const children: ChildProcess[] = [];

/** The environment of a user's shell: no npm lifecycle variables, no repository bins on PATH. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== 'AWS_ENDPOINT_URL' && key !== 'NODE_OPTIONS') env[key] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => !entry.includes('node_modules'))
    .join(delimiter);
  return { ...env, ...extra };
}

function run(command: string, args: string[], cwd: string, env = userEnv()): string {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

beforeAll(() => {
  const started = Date.now();
  run('npm', ['run', 'build'], ROOT);
  packDir = mkdtempSync(join(tmpdir(), 'rerun-pack-'));
  // --json: npm pack answers with its report as JSON (--ignore-scripts: no script banner before it).
  const packed = JSON.parse(
    run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], ROOT),
  ) as {
    filename: string;
  }[];
  const tarball = join(packDir, packed[0]?.filename ?? '');

  scratch = mkdtempSync(join(tmpdir(), 'rerun-consumer-'));
  writeFileSync(
    join(scratch, 'package.json'),
    `${JSON.stringify({ name: 'rerun-consumer', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
  );
  writeFileSync(join(scratch, 'pipeline.mjs'), PIPELINE);
  writeFileSync(join(scratch, 'worker.mjs'), WORKER);
  writeFileSync(join(scratch, 'app.mjs'), CDK_APP);
  writeFileSync(join(scratch, 'prebuilt.mjs'), PREBUILT_CDK_APP);
  run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel',
      'error',
      tarball,
      ...CONSUMER_DEPENDENCIES,
    ],
    scratch,
  );
  process.stderr.write(`consumer test: build, pack and install took ${Math.round((Date.now() - started) / 1000)} s\n`);
}, 600_000);

afterAll(() => {
  for (const child of children) {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group has already exited.
    }
  }
  // ~15,000 files (aws-cdk-lib): seconds on an idle disk, half a minute on a busy one.
  for (const dir of [scratch, packDir]) if (dir) rmSync(dir, { recursive: true, force: true });
}, 300_000);

describe('the README shows what this test runs', () => {
  it("its worker.mjs is this test's worker, and its CDK apps (README, deploying guide) this test's RerunPipeline calls", () => {
    const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
    const pages = readDocumentationPages()
      .map((page) => page.text)
      .join('\n');
    expect(readme).toContain(`\`\`\`js\n${PIPELINE}\`\`\``);
    expect(readme).toContain(`\`\`\`js\n${WORKER}\`\`\``);
    const call =
      "new RerunPipeline(stack, 'Pipeline', { worker: { entry: 'worker.mjs' }, pipeline, outputPrefixes: ['upper/'], outputs: true });";
    expect(readme).toContain(call);
    expect(CDK_APP).toContain(call);
    expect(pages).toContain("new RerunPipeline(stack, 'Pipeline', { worker: referenceWorker('normalize') });");
    expect(PREBUILT_CDK_APP).toContain(
      "new RerunPipeline(stack, 'Pipeline', { worker: referenceWorker('normalize') });",
    );
  });
});

describe('the packed package in a new project', () => {
  it('installs without tsx or typescript, and ships compiled code only', () => {
    // npm ls exits 1 when it finds none of the names: read its JSON, not its status.
    const ls = spawnSync('npm', ['ls', '--all', '--json', 'tsx', 'typescript'], {
      cwd: scratch,
      env: userEnv(),
      encoding: 'utf8',
    });
    const listed = JSON.parse(ls.stdout) as { dependencies?: Record<string, unknown> };
    expect(listed.dependencies ?? {}).toEqual({});
    expect(existsSync(join(scratch, 'node_modules', 'tsx'))).toBe(false);
    expect(existsSync(join(scratch, 'node_modules', 'typescript'))).toBe(false);

    const installed = join(scratch, 'node_modules', 'rerun-pipeline');
    expect(existsSync(join(installed, 'dist', 'src', 'index.js'))).toBe(true);
    expect(existsSync(join(installed, 'dist', 'src', 'index.d.ts'))).toBe(true);
    expect(existsSync(join(installed, 'dist', 'local', 'emulator', 'atomicMotoServer.py'))).toBe(true);
    // rerun ui's page, its script's modules and its style, served from the package (no CDN).
    for (const asset of ['index.html', 'console.js', 'consolePage.js', 'daysView.js', 'queueViews.js', 'console.css']) {
      expect(existsSync(join(installed, 'dist', 'app', 'ui', 'assets', asset)), asset).toBe(true);
    }
    expect(existsSync(join(installed, 'src'))).toBe(false);
    expect(existsSync(join(installed, 'test'))).toBe(false);
    expect(existsSync(join(installed, 'bench'))).toBe(false);
  });

  it('every subpath imports with plain node', () => {
    const script =
      "for (const p of ['rerun-pipeline', 'rerun-pipeline/ledger', 'rerun-pipeline/observability', 'rerun-pipeline/local', 'rerun-pipeline/normalize', 'rerun-pipeline/cdk', 'rerun-pipeline/window']) " +
      'console.log(p, Object.keys(await import(p)).length);';
    const out = run(process.execPath, ['--input-type=module', '-e', script], scratch);
    for (const subpath of [
      'rerun-pipeline',
      'rerun-pipeline/ledger',
      'rerun-pipeline/observability',
      'rerun-pipeline/local',
      'rerun-pipeline/normalize',
      'rerun-pipeline/cdk',
      'rerun-pipeline/window',
    ]) {
      expect(out).toMatch(new RegExp(`^${subpath} [1-9][0-9]*$`, 'm'));
    }
  });

  it('`npx rerun dev --handler worker.mjs` runs the plain-JavaScript worker on an upload', async () => {
    // The emulator's Python: the one the other tests use (already installed), so moto is not reinstalled.
    const python = await ensurePythonTool(PythonTool.MOTO, { progress: () => {} });
    const child = spawn('npx', ['--no', 'rerun', 'dev', '--no-demo', '--handler', 'worker.mjs'], {
      cwd: scratch,
      env: userEnv({ RERUN_PYTHON: python, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' }),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, signalled as a terminal's Ctrl+C would be (npx and rerun both get it).
      detached: true,
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // 'close': every holder of its stdout is gone, npx and the rerun process it started.
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const line = async (prefix: string): Promise<string> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const found = stdout.split('\n').find((l) => l.startsWith(`${prefix} `));
        if (found) return found.slice(prefix.length + 1);
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`no ${prefix} line (exit ${child.exitCode}). stderr:\n${stderr}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    const ready = JSON.parse(await line('READY')) as DevReady;
    expect(ready.emulator).toBe('embedded');
    const s3 = new S3Client({
      endpoint: ready.endpoint,
      region: ready.region,
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const key = `${ready.inputPrefix}greeting.txt`;
    await s3.send(new PutObjectCommand({ Bucket: ready.inputBucket, Key: key, Body: 'hello, rerun é\n' }));
    const outputKey = deterministicKey({
      prefix: 'upper/',
      source: { bucket: ready.inputBucket, key },
      stripPrefix: 'incoming/',
    });
    let object: GetObjectCommandOutput | undefined;
    const deadline = Date.now() + 30_000;
    while (object === undefined) {
      try {
        object = await s3.send(new GetObjectCommand({ Bucket: ready.outputBucket, Key: outputKey }));
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`no output at ${outputKey}. stderr:\n${stderr}`, { cause: error });
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    expect(await object.Body?.transformToString()).toBe('HELLO, RERUN É\n');
    // Built by the stage's code version from pipeline.mjs, recorded with the output (what the done-check reads).
    expect(object.Metadata?.['rerun-code-version']).toBe('upper@1');

    if (child.pid) process.kill(-child.pid, 'SIGINT');
    await closed;
    const summary = JSON.parse(await line('SUMMARY')) as DevSummary;
    expect(summary).toMatchObject({ processed: 1, failed: 0, deadLettered: 0, ended: 'interrupted' });
    // rerun dev sets LOG_LEVEL=warn for the handler (its table shows every outcome): the worker's
    // createLogger() honours it, so none of the handler's info lines reaches the session.
    expect(`${stdout}${stderr}`).not.toMatch(/"level":"info"/);
    // The bin runs the compiled CLI under plain node: the package ships no CLI sources, so its
    // launcher never takes the checkout's tsx path.
    const installed = join(scratch, 'node_modules', 'rerun-pipeline');
    const launcher = readFileSync(join(installed, 'bin', 'rerun.js'), 'utf8');
    expect(launcher.split('\n')[0]).toBe('#!/usr/bin/env node');
    expect(existsSync(join(installed, 'app', 'cli', 'rerun.ts'))).toBe(false);
    const compiled = readFileSync(join(installed, 'dist', 'app', 'cli', 'rerun.js'), 'utf8');
    expect(compiled.split('\n')[0]).toBe('#!/usr/bin/env node');
  }, 120_000);

  it("`npx rerun dev --once --demo` runs rerun's own compiled normalize worker on its shipped samples", async () => {
    const python = await ensurePythonTool(PythonTool.MOTO, { progress: () => {} });
    const result = spawnSync('npx', ['--no', 'rerun', 'dev', '--once', '--demo'], {
      cwd: scratch,
      env: userEnv({ RERUN_PYTHON: python, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' }),
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(result.status, result.stderr).toBe(0);
    const summaryLine = result.stdout.split('\n').find((l) => l.startsWith('SUMMARY ')) ?? 'SUMMARY {}';
    const summary = JSON.parse(summaryLine.slice('SUMMARY '.length)) as DevSummary;
    // examples/: twelve CSV/NDJSON files normalized, notes.txt and the s3:TestEvent skipped.
    expect(summary).toMatchObject({ processed: 12, skipped: 2, failed: 0, deadLettered: 0, ended: 'drained' });
    expect(result.stderr).toMatch(/normalized\/rerun-input\/orders\.csv\.ndjson/);
  }, 120_000);

  it('a TypeScript handler under the plain-node bin fails with how to run it (Node 20 strips no types)', async () => {
    writeFileSync(
      join(scratch, 'typed.ts'),
      'export const handler = async (event: unknown) => ({ batchItemFailures: [] });\n',
    );
    const python = await ensurePythonTool(PythonTool.MOTO, { progress: () => {} });
    const result = spawnSync('npx', ['--no', 'rerun', 'dev', '--once', '--no-demo', '--handler', 'typed.ts'], {
      cwd: scratch,
      env: userEnv({ RERUN_PYTHON: python }),
      encoding: 'utf8',
      timeout: 90_000,
    });
    if ((process.features as { typescript?: unknown }).typescript) {
      // A Node that strips types loads it as it is.
      expect(result.status, result.stderr).toBe(0);
    } else {
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/compile the handler to \.js\/\.mjs, or run rerun under tsx/);
    }
  }, 120_000);

  it('`rerun --version` and `rerun --help` answer on stdout; `--stack` without the optional CloudFormation client names the package to install', () => {
    // The bin itself: `npx rerun --version` would be npx's own --version.
    const bin = join(scratch, 'node_modules', '.bin', 'rerun');
    const manifest = JSON.parse(
      readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'),
    ) as {
      version: string;
    };
    const version = spawnSync(bin, ['--version'], { cwd: scratch, env: userEnv(), encoding: 'utf8' });
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout).toBe(`${manifest.version}\n`);
    const help = spawnSync(bin, ['--help'], { cwd: scratch, env: userEnv(), encoding: 'utf8' });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Commands:\n(?:.*\n)*\s+status\s+Show each window of a window stage/m);
    expect(help.stderr).toBe('');

    expect(existsSync(join(scratch, 'node_modules', '@aws-sdk', 'client-cloudformation'))).toBe(false);
    const stack = spawnSync(bin, ['status', '--from', '2026-01-01', '--to', '2026-01-01', '--stack', 'rerun'], {
      cwd: scratch,
      env: userEnv({ AWS_REGION: 'us-east-1' }),
      encoding: 'utf8',
    });
    expect(stack.status).toBe(1);
    expect(stack.stderr).toMatch(
      /--stack reads the stack's outputs with @aws-sdk\/client-cloudformation, which is not installed: npm install @aws-sdk\/client-cloudformation/,
    );
  });

  it('`--runtime lambda` from the package fails at once, saying it needs a checkout', () => {
    const result = spawnSync('npx', ['--no', 'rerun', 'dev', '--once', '--runtime', 'lambda'], {
      cwd: scratch,
      env: userEnv(),
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/--runtime lambda .* only a checkout of the rerun repository has/);
  });

  it('a user CDK app with `new RerunPipeline(...)` from rerun/cdk synthesizes with cdk-nag AwsSolutions clean', () => {
    const report = JSON.parse(
      run(process.execPath, ['app.mjs'], scratch).trim().split('\n').at(-1) ?? '{}',
    ) as CdkAppReport;
    expect(report.violations).toEqual([]);
    expect(report.messages).toEqual([]);
    expect(report.types).toContain('AWS::Lambda::Function');
    expect(report.types).toContain('AWS::SQS::Queue');
    expect(report.types).toContain('AWS::S3::Bucket');
    // The README's pipeline.mjs, published for the tools' --stack as it was defined.
    expect(JSON.parse(report.outputs.PipelineDescription as string)).toMatchObject({
      version: 1,
      name: 'uploads',
      stages: { upper: { outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' }, codeVersion: 'upper@1' } },
    });
    expect(report.outputs.PipelineStage).toBe('upper');
  }, 180_000);

  it("a user CDK app with `referenceWorker('normalize')` synthesizes the prebuilt bundle with neither esbuild nor a lockfile, cdk-nag clean", () => {
    // Out of reach for this synth: esbuild (which only `{ entry }` needs) and the project's lockfile.
    const aside = ['node_modules/esbuild', 'node_modules/.bin/esbuild', 'package-lock.json'].filter((p) =>
      existsSync(join(scratch, p)),
    );
    expect(aside).toContain('node_modules/esbuild');
    for (const p of aside) renameSync(join(scratch, p), join(scratch, `${p}.aside`));
    let stdout: string;
    try {
      stdout = run(process.execPath, ['prebuilt.mjs'], scratch);
    } finally {
      for (const p of aside) renameSync(join(scratch, `${p}.aside`), join(scratch, p));
    }
    const report = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as CdkAppReport;
    expect(report.violations).toEqual([]);
    expect(report.messages).toEqual([]);
    expect(report.workers).toHaveLength(1);
    const [worker] = report.workers;
    expect(worker?.runtime).toBe('nodejs24.x');
    // The asset is the installed package's prebuilt folder as it is: the split bundle (index.mjs and
    // its chunks) and their maps.
    const asset = resolve(scratch, worker?.asset ?? '');
    const shipped = join(scratch, 'node_modules', 'rerun-pipeline', 'dist', 'workers', 'normalize');
    const files = readdirSync(asset).sort();
    expect(files).toEqual(readdirSync(shipped).sort());
    expect(files).toContain('index.mjs');
    for (const file of files.filter((f) => f.endsWith('.mjs'))) {
      const bundle = readFileSync(join(asset, file));
      expect(externalSdkImports(bundle.toString('utf8'))).toEqual([]);
      expect(bundle.equals(readFileSync(join(shipped, file)))).toBe(true);
    }
  }, 180_000);

  it('the prebuilt normalize bundle runs under `rerun dev --once --demo` on the shipped samples', async () => {
    const python = await ensurePythonTool(PythonTool.MOTO, { progress: () => {} });
    const handler = join('node_modules', 'rerun-pipeline', 'dist', 'workers', 'normalize', 'index.mjs');
    const result = spawnSync('npx', ['--no', 'rerun', 'dev', '--once', '--demo', '--handler', handler], {
      cwd: scratch,
      env: userEnv({ RERUN_PYTHON: python, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' }),
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(result.status, result.stderr).toBe(0);
    const summaryLine = result.stdout.split('\n').find((l) => l.startsWith('SUMMARY ')) ?? 'SUMMARY {}';
    const summary = JSON.parse(summaryLine.slice('SUMMARY '.length)) as DevSummary;
    // The bundle carries its own copy of the library; every copy reports to the same process-wide
    // channel (src/worker/outcomes.ts), so rerun dev's table and SUMMARY count its objects as for
    // the sources: the demo's 12 normalized files and 2 skips, and one notification per output
    // (NOTIFY_URL through the ledger, sent only after the output is published).
    expect(summary).toMatchObject({
      records: 14,
      outcomesSeen: true,
      processed: 12,
      skipped: 2,
      failed: 0,
      deadLettered: 0,
      sinkApplied: 12,
      ended: 'drained',
    });
    // Every invocation's records were deleted: none retained, none failed.
    const invocations = [...result.stderr.matchAll(/(\d+) record\(s\), (\d+) deleted, (\d+) retained/g)];
    expect(invocations.map((m) => Number(m[1])).reduce((a, b) => a + b, 0)).toBe(14);
    expect(invocations.every((m) => m[1] === m[2] && m[3] === '0')).toBe(true);
    expect(result.stderr).toMatch(/processed\s+s3:\/\/rerun-input\/incoming\/orders\.csv/);
    expect(result.stderr).not.toContain('No records reached the handler.');
  }, 120_000);
});
