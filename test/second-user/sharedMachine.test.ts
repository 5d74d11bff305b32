import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';

/**
 * A shared machine, for real: a second OS user (`nobody`) plants files in a temporary directory both
 * users share (mode 1777, as /tmp), and this user then runs the `rerun` CLI there as a person would
 * (a process of its own, TMPDIR pointing at that directory). Acting as another user needs root:
 * `npm run test:second-user` (CI runs it as root; elsewhere, `sudo npm run test:second-user`).
 */
const NOBODY = 65534;

/** Runs `script` with node as the user `nobody`, in `env`. */
function asNobody(script: string, env: NodeJS.ProcessEnv): void {
  const out = spawnSync(process.execPath, ['-e', script], { uid: NOBODY, gid: NOBODY, env, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`nobody's script failed (${out.status}): ${out.stderr}`);
}

/** A temporary directory shared by both users, as /tmp is: world-writable, sticky. */
function sharedTmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rerun-shared-'));
  chmodSync(dir, 0o1777);
  return dir;
}

/** `rerun <args>` run by this user in a terminal of its own whose TMPDIR is `tmp`. */
async function rerun(
  args: readonly string[],
  tmp: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/cli/rerun.ts', ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: tmp,
      AWS_EC2_METADATA_DISABLED: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { code, stdout, stderr };
}

describe('a second OS user on the same machine cannot steer, fake or delete anything of this user', () => {
  const clients = testClients();
  /** Requests that reached the endpoint `nobody` planted, with the access key id they were signed with. */
  const planted: string[] = [];
  let trap: Server;
  let trapUrl: string;
  let inputBucket: string;
  let outputBucket: string;
  let queueUrl: string;
  const moto = () => ({
    RERUN_QUEUE_URL: queueUrl,
    AWS_ENDPOINT_URL: awsEndpoint(),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIAVICTIMKEY',
    AWS_SECRET_ACCESS_KEY: 'victim-secret',
  });

  beforeAll(async () => {
    expect(process.getuid?.(), 'acting as the user nobody needs root: run `sudo npm run test:second-user`').toBe(0);
    trap = createServer((req, res) => {
      planted.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
    inputBucket = await createBucket(clients.s3, uniqueName('victim-in'));
    outputBucket = await createBucket(clients.s3, uniqueName('victim-out'));
    queueUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('victim-q') })))
      .QueueUrl as string;
  });

  afterAll(async () => {
    await new Promise((resolve) => trap?.close(resolve));
  });

  /** A file of this user's that is more than a day old, in a folder only this user may write. */
  function victimFile(): string {
    const dir = mkdtempSync(join(tmpdir(), 'rerun-victim-'));
    chmodSync(dir, 0o755);
    const file = join(dir, 'thesis.txt');
    writeFileSync(file, 'three years of work\n');
    const old = new Date(Date.now() - 3 * 24 * 3600 * 1000);
    utimesSync(file, old, old);
    return file;
  }

  it("a symlink nobody plants where run files once lived makes reprocess delete nothing of this user's", async () => {
    const tmp = sharedTmp();
    const file = victimFile();
    // The names rerun used in the shared temporary directory before its private one.
    asNobody(
      `const fs = require('node:fs'); const p = require('node:path');
       fs.symlinkSync(${JSON.stringify(join(file, '..'))}, p.join(process.env.TMPDIR, 'rerun-runs'));
       fs.symlinkSync(${JSON.stringify(join(file, '..'))}, p.join(process.env.TMPDIR, 'runs'));`,
      { TMPDIR: tmp },
    );
    expect(lstatSync(join(tmp, 'rerun-runs')).uid).toBe(NOBODY);
    const run = await rerun(
      ['reprocess', '--dry-run', '--input-bucket', inputBucket, '--output-bucket', outputBucket],
      tmp,
      moto(),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('three years of work\n');
    // Its run file went to its own private directory, 0700.
    const own = join(tmp, 'rerun-0');
    expect(lstatSync(own).isDirectory()).toBe(true);
    expect(lstatSync(own).mode & 0o777).toBe(0o700);
    expect(lstatSync(own).uid).toBe(0);
  });

  it("a dev session file nobody plants is never used: no request, no key id reaches nobody's endpoint", async () => {
    const tmp = sharedTmp();
    const session = {
      appName: 'rerun',
      pid: 1,
      startedAt: new Date().toISOString(),
      endpoint: trapUrl,
      region: 'us-east-1',
      emulator: 'external',
      inputBucket,
      outputBucket,
      queueUrl: `${trapUrl}/000000000000/q`,
      dlqUrl: `${trapUrl}/000000000000/dlq`,
      summaryQueueUrl: `${trapUrl}/000000000000/s.fifo`,
      summaryDlqUrl: `${trapUrl}/000000000000/sdlq.fifo`,
      journal: join(tmp, 'journal.jsonl'),
    };
    // Where rerun dev published its session in the shared directory, and where it publishes it now.
    asNobody(
      `const fs = require('node:fs'); const p = require('node:path');
       const s = ${JSON.stringify(JSON.stringify(session))};
       fs.writeFileSync(p.join(process.env.TMPDIR, 'rerun-dev-rerun.json'), s);
       fs.mkdirSync(p.join(process.env.TMPDIR, 'rerun'), { mode: 0o777 });
       fs.writeFileSync(p.join(process.env.TMPDIR, 'rerun', 'dev-rerun-1.json'), s);`,
      { TMPDIR: tmp },
    );
    planted.length = 0;
    // With an endpoint of its own: the planted session never overrides it.
    const explicit = await rerun(['status', '--from', '2026-12-01', '--to', '2026-12-01', '--json'], tmp, {
      ...moto(),
      RERUN_INPUT_BUCKET: inputBucket,
      RERUN_OUTPUT_BUCKET: outputBucket,
    });
    expect(explicit.code, explicit.stderr).toBe(0);
    // With nothing set (a fresh terminal, no credentials): still not the planted endpoint.
    const bare = await rerun(['status', '--from', '2026-12-01', '--to', '2026-12-01'], tmp, {});
    expect(bare.code).not.toBe(0);
    expect(`${bare.stdout}${bare.stderr}`).not.toContain(trapUrl);
    expect(planted).toEqual([]);
  });

  it("a private directory nobody creates under this user's name is refused, never read or written through", async () => {
    const tmp = sharedTmp();
    const file = victimFile();
    asNobody(
      `const fs = require('node:fs'); const p = require('node:path');
       const d = p.join(process.env.TMPDIR, 'rerun-0');
       fs.mkdirSync(d, { mode: 0o700 });
       fs.mkdirSync(p.join(d, 'runs'), { mode: 0o700 });
       fs.symlinkSync(${JSON.stringify(file)}, p.join(d, 'runs', 'reprocess-1-1-1.json'));`,
      { TMPDIR: tmp },
    );
    const run = await rerun(
      ['reprocess', '--dry-run', '--input-bucket', inputBucket, '--output-bucket', outputBucket],
      tmp,
      moto(),
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/rerun-0, but it belongs to uid 65534, not to you \(uid 0\)/);
    expect(run.stderr).toMatch(/XDG_RUNTIME_DIR/);
    expect(readFileSync(file, 'utf8')).toBe('three years of work\n');
    expect(existsSync(join(tmp, 'rerun-0', 'runs', 'reprocess-1-1-1.json'))).toBe(true);
  });

  it("runs nobody plants where run files once lived never show in this user's console", async () => {
    const tmp = sharedTmp();
    // nobody's fake, planted before this user's first run: this user's pipeline, a label of nobody's
    // choosing, still running (a live process), where rerun once kept its run files.
    const now = Date.now();
    const fake = {
      command: 'reprocess',
      label: 'FAKE run planted by nobody',
      pid: 1,
      startedAt: now,
      updatedAt: now,
      target: { where: awsEndpoint(), inputBucket, outputBucket },
    };
    asNobody(
      `const fs = require('node:fs'); const p = require('node:path');
       fs.mkdirSync(p.join(process.env.TMPDIR, 'rerun-runs'), { mode: 0o777 });
       fs.chmodSync(p.join(process.env.TMPDIR, 'rerun-runs'), 0o777);
       fs.writeFileSync(p.join(process.env.TMPDIR, 'rerun-runs', 'reprocess-1-1-1.json'), ${JSON.stringify(JSON.stringify(fake))});`,
      { TMPDIR: tmp },
    );
    // This user's own run, on its pipeline: the console must list it (the control).
    const own = await rerun(
      ['reprocess', '--dry-run', '--input-bucket', inputBucket, '--output-bucket', outputBucket],
      tmp,
      moto(),
    );
    expect(own.code, own.stderr).toBe(0);
    const ui = spawn(
      process.execPath,
      ['--import', 'tsx', 'app/cli/rerun.ts', 'ui', '--input-bucket', inputBucket, '--output-bucket', outputBucket],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TMPDIR: tmp,
          AWS_EC2_METADATA_DISABLED: 'true',
          ...moto(),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      let out = '';
      let err = '';
      ui.stderr.on('data', (c: Buffer) => {
        err += c.toString();
      });
      const url = await new Promise<URL>((resolve, reject) => {
        ui.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          const line = /^URL (\S+)$/m.exec(out);
          if (line?.[1]) resolve(new URL(line[1]));
        });
        ui.once('exit', (code) => reject(new Error(`rerun ui exited ${code}: ${err}`)));
      });
      const token = url.searchParams.get('token') ?? '';
      const runs = async () => {
        const live = await fetch(new URL('/api/live', url), { headers: { 'x-rerun-token': token } });
        expect(live.status).toBe(200);
        return ((await live.json()) as { runs: Record<string, unknown>[] }).runs;
      };
      const shown = await runs();
      const labels = shown.map((r) => r.label);
      // The control: this user's own dry run is listed.
      expect(shown.some((r) => r.command === 'reprocess' && r.label !== fake.label)).toBe(true);
      expect(labels).not.toContain(fake.label);
    } finally {
      ui.kill('SIGINT');
      await new Promise((resolve) => ui.once('exit', resolve));
    }
  });

  it("links nobody plants at rerun dev's old session and journal names are never written through", async () => {
    const tmp = sharedTmp();
    const session = victimFile();
    const journal = victimFile();
    const appName = uniqueName('dev');
    // Where rerun dev once published its session and its outcomes journal, in the shared directory.
    asNobody(
      `const fs = require('node:fs'); const p = require('node:path');
       fs.symlinkSync(${JSON.stringify(session)}, p.join(process.env.TMPDIR, ${JSON.stringify(`rerun-dev-${appName}.json`)}));
       fs.symlinkSync(${JSON.stringify(journal)}, p.join(process.env.TMPDIR, ${JSON.stringify(`rerun-dev-${appName}.outcomes.jsonl`)}));`,
      { TMPDIR: tmp },
    );
    const dev = await rerun(
      ['dev', '--once', '--no-demo', '--handler', 'test/fixtures/handlers/s3Copy.ts', '--app-name', appName],
      tmp,
      {
        AWS_ENDPOINT_URL: awsEndpoint(),
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'AKIAVICTIMKEY',
        AWS_SECRET_ACCESS_KEY: 'victim-secret',
      },
    );
    expect(dev.code, dev.stderr).toBe(0);
    expect(dev.stdout).toMatch(/^READY /m);
    expect(readFileSync(session, 'utf8')).toBe('three years of work\n');
    expect(readFileSync(journal, 'utf8')).toBe('three years of work\n');
  });

  it('nobody cannot read what this user publishes: its private directory and files are 0700 and 0600', async () => {
    const tmp = sharedTmp();
    const run = await rerun(
      ['reprocess', '--dry-run', '--input-bucket', inputBucket, '--output-bucket', outputBucket],
      tmp,
      moto(),
    );
    expect(run.code, run.stderr).toBe(0);
    const probe = spawnSync(
      process.execPath,
      ['-e', `require('node:fs').readdirSync(${JSON.stringify(join(tmp, 'rerun-0'))})`],
      { uid: NOBODY, gid: NOBODY, encoding: 'utf8' },
    );
    expect(probe.status).not.toBe(0);
    expect(probe.stderr).toMatch(/EACCES/);
  });
});
