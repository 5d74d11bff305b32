import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** Options for {@link cdkLocalDeploy}. */
export interface CdkLocalDeployOptions {
  /** The emulator's endpoint, e.g. `http://127.0.0.1:40123`. */
  readonly endpoint: string;
  /** Where the CDK toolkit runs: the project root (where cdk.json is), or the folder of `app`. */
  readonly cwd: string;
  /**
   * The checkout whose `node_modules/.bin/cdklocal` runs, and whose `.rerun/` holds the cloud assembly.
   * @default cwd
   */
  readonly projectRoot?: string;
  /**
   * Bootstrap the environment first (once per emulator run is enough).
   * @default true
   */
  readonly bootstrap?: boolean;
  /** Stack name (the `rerun:stackName` context). */
  readonly stackName: string;
  /**
   * Give up on a step after this long: a custom resource whose function fails without answering
   * makes CloudFormation (and so the deploy) wait for an hour.
   * @default 240_000
   */
  readonly stepTimeoutMs?: number;
  /** Where each step's output goes (progress for people). @default discarded */
  readonly log?: (text: string) => void;
  /**
   * The certificate to trust for an HTTPS endpoint (MiniStack with IAM enforced). The CDK toolkit
   * takes it from AWS_CA_BUNDLE (or REQUESTS_CA_BUNDLE, which it reads first), in place of the
   * system's roots; Node from NODE_EXTRA_CA_CERTS.
   * @default the system's roots
   */
  readonly caBundle?: string;
  /**
   * The app to deploy (`cdk --app`).
   * @default cdk.json's app (the reference stack)
   */
  readonly app?: string;
}

/**
 * Deploys the project's real CDK app to an emulator, as `npm run deploy:local` does:
 * `cdklocal bootstrap`, then `cdklocal deploy --require-approval never`. Nothing is created by
 * hand: every resource comes from the app's own template.
 *
 * The CDK toolkit for LocalStack (`aws-cdk-local`) reads `AWS_ENDPOINT_URL` and, with it,
 * requires `AWS_ENDPOINT_URL_S3` (for the asset uploads); `AWS_S3_FORCE_PATH_STYLE=1` because
 * bucket subdomains of 127.0.0.1 do not resolve. Fake credentials, region us-east-1.
 *
 * @example
 * await cdkLocalDeploy({ endpoint: ministack.endpoint, cwd: process.cwd(), stackName: 'rerun' });
 */
export async function cdkLocalDeploy(options: CdkLocalDeployOptions): Promise<void> {
  const projectRoot = options.projectRoot ?? options.cwd;
  const cdklocal = join(projectRoot, 'node_modules', '.bin', 'cdklocal');
  const env: NodeJS.ProcessEnv = {
    ...withoutAwsVariables(process.env),
    AWS_ENDPOINT_URL: options.endpoint,
    AWS_ENDPOINT_URL_S3: options.endpoint,
    AWS_S3_FORCE_PATH_STYLE: '1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...(options.caBundle
      ? {
          NODE_EXTRA_CA_CERTS: options.caBundle,
          AWS_CA_BUNDLE: options.caBundle,
          REQUESTS_CA_BUNDLE: options.caBundle,
        }
      : {}),
  };
  // The deployed tier's own cloud assembly, so it never races `cdk synth` or the stack tests for cdk.out.
  const common = [
    '--ci',
    '--no-notices',
    '--output',
    join(projectRoot, '.rerun', `cdk.out.deployed${options.app ? `-${options.stackName}` : ''}`),
    ...(options.app ? ['--app', options.app] : []),
  ];
  const context = ['-c', `rerun:stackName=${options.stackName}`];
  // The environment named explicitly: the toolkit then bootstraps it without synthesizing (and
  // bundling) the app a second time. MiniStack's account for the fake credentials is 000000000000.
  if (options.bootstrap ?? true) {
    await run(cdklocal, ['bootstrap', 'aws://000000000000/us-east-1', ...common, ...context], env, options);
  }
  await run(
    cdklocal,
    ['deploy', options.stackName, ...common, ...context, '--require-approval', 'never', '--progress', 'events'],
    env,
    options,
  );
}

function withoutAwsVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  // A developer's AWS_PROFILE or session token must never steer a deploy meant for the emulator.
  // REQUESTS_CA_BUNDLE too: the toolkit would trust those roots only (it reads it before AWS_CA_BUNDLE).
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !name.startsWith('AWS_') && name !== 'REQUESTS_CA_BUNDLE'),
  );
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, options: CdkLocalDeployOptions): Promise<void> {
  const timeoutMs = options.stepTimeoutMs ?? 240_000;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    const keep = (chunk: Buffer) => {
      const text = chunk.toString();
      output = (output + text).slice(-12_000);
      options.log?.(text);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(
        new Error(`Could not run ${command}: ${error.message}. Run npm ci first (aws-cdk-local is a devDependency).`),
      );
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const why = signal ? `was stopped (${signal}) after ${timeoutMs} ms` : `exited with ${code}`;
      reject(new Error(`cdklocal ${args[0]} ${why}. Its last output:\n${output}`));
    });
  });
}
