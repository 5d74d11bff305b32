import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeCliFailure } from '../../app/common/reportFailure.js';
import { freeLoopbackPort } from '../../local/runner/freeLoopbackPort.js';
import { testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';
import { rerunCli } from '../support/summaryPipeline.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every command that talks to AWS, with arguments that would otherwise run. */
const COMMANDS: Record<string, string[]> = {
  status: ['status', '--from', '2026-01-01', '--to', '2026-01-02'],
  backfill: ['backfill', '--from', '2026-01-01', '--to', '2026-01-02', '--dry-run'],
  reprocess: ['reprocess', '--dry-run'],
  redrive: ['redrive', '--dry-run'],
  ls: ['ls', 's3://rerun-output/'],
  cat: ['cat', 's3://rerun-output/some/key'],
  dev: ['dev', '--once'],
};
/** The commands that take --json. */
const JSON_COMMANDS = ['status', 'backfill', 'reprocess', 'redrive', 'ls'];

describe('every CLI failure names the cause, what was looked at and what to do, within 10 s', () => {
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  const endpoints: Record<string, { url: string; says: RegExp }> = {};
  beforeAll(async () => {
    const listen = async (server: Server) => {
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const address = server.address();
      return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    };
    // Accepts the connection and never answers.
    const silent = await listen(createTcpServer((socket) => sockets.push(socket)));
    // A web server, not an AWS API.
    const web = await listen(
      createHttpServer((_req, res) => {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<html>not here</html>');
      }) as unknown as Server,
    );
    const port = await freeLoopbackPort();
    endpoints['no scheme'] = {
      url: `127.0.0.1:${port}`,
      says: new RegExp(`AWS_ENDPOINT_URL=127\\.0\\.0\\.1:${port} has no scheme: write http://127\\.0\\.0\\.1:${port}`),
    };
    endpoints['nothing listening'] = {
      url: `http://127.0.0.1:${port}`,
      says: /Nothing listens at AWS_ENDPOINT_URL=http:\/\/127\.0\.0\.1:\d+ \(connection refused\)\. Start that emulator, or fix or unset the variable\./,
    };
    endpoints['a silent port'] = {
      url: silent,
      says: /AWS_ENDPOINT_URL=http:\/\/127\.0\.0\.1:\d+ did not answer within 5 s\. Is something else listening on that port\?/,
    };
    endpoints['a web server'] = {
      url: web,
      says: /The server at AWS_ENDPOINT_URL=http:\/\/127\.0\.0\.1:\d+ is not an AWS API: it answered HTTP 404 \(text\/html\)/,
    };
  });
  afterAll(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it.each(['no scheme', 'nothing listening', 'a silent port', 'a web server'])(
    'AWS_ENDPOINT_URL at %s: every command exits 1 with the same sentence, --json keeps stdout one JSON document',
    async (which) => {
      const endpoint = endpoints[which] as { url: string; says: RegExp };
      const runs = await Promise.all(
        Object.entries(COMMANDS).map(async ([name, args]) => {
          const started = Date.now();
          const json = JSON_COMMANDS.includes(name);
          const run = await rerunCli(json ? [...args, '--json'] : args, { env: { AWS_ENDPOINT_URL: endpoint.url } });
          return { name, json, run, ms: Date.now() - started };
        }),
      );
      for (const { name, json, run, ms } of runs) {
        expect(run.code, `${name}: ${run.stderr}`).toBe(1);
        expect(run.stderr, name).toMatch(new RegExp(`^rerun ${name}: ${endpoint.says.source}`, 'm'));
        expect(ms, name).toBeLessThan(10_000);
        if (json) {
          expect(run.json(), name).toEqual({
            error: { name: 'EndpointUnusableError', message: expect.stringMatching(endpoint.says) },
          });
        } else {
          expect(run.stdout, name).toEqual([]);
        }
      }
    },
    30_000,
  );

  it('a usage error found while a command runs exits 2 with the pointer to --help, never "a bug of rerun"', async () => {
    const clients = testClients();
    const outputBucket = await createBucket(clients.s3, uniqueName('usage-out'));
    const run = await rerunCli([
      'redrive',
      '--queue',
      'nonsense',
      '--dry-run',
      '--input-bucket',
      uniqueName('usage-in'),
      '--output-bucket',
      outputBucket,
    ]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/^rerun redrive: --queue "nonsense" is neither a worker/m);
    expect(run.stderr).toContain('Run "rerun redrive --help" for the options.');
    expect(run.stderr).not.toContain('bug of rerun');
  });

  it('an AWS or network error that reaches the CLI is named with what to do; anything else is called a bug', () => {
    const where = 'AWS (eu-west-1)';
    expect(
      describeCliFailure(
        Object.assign(new Error('Could not load credentials'), { name: 'CredentialsProviderError' }),
        where,
      ).message,
    ).toMatch(
      /^No AWS credentials to talk to AWS \(eu-west-1\): the default credential chain .* export AWS_ACCESS_KEY_ID=test/,
    );
    expect(
      describeCliFailure(
        Object.assign(new Error('The security token included in the request is expired'), { name: 'ExpiredToken' }),
        where,
      ).message,
    ).toBe(
      'The AWS credentials have expired (The security token included in the request is expired): renew them (aws sso login, or new keys).',
    );
    expect(
      describeCliFailure(
        Object.assign(new Error('socket timed out'), { name: 'TimeoutError', $metadata: {} }),
        'http://127.0.0.1:4566',
      ).message,
    ).toMatch(/^http:\/\/127\.0\.0\.1:4566 stopped answering \(socket timed out\)\. Check the network/);
    expect(
      describeCliFailure(
        Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }),
        where,
      ).message,
    ).toMatch(/^AWS \(eu-west-1\) answered ThrottlingException \(HTTP 400\) \(Rate exceeded\)\. Check/);
    expect(describeCliFailure(new TypeError('Invalid URL'), where)).toEqual({
      name: 'TypeError',
      message: expect.stringMatching(
        /^unexpected TypeError: Invalid URL\. This is a bug of rerun, not of your setup: .*RERUN_DEBUG=1/,
      ),
    });
  });
});

describe('rerun dev with a RERUN_PYTHON that cannot run says so, not "reinstall .venv/moto"', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rerun-python-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** `rerun dev --once` as a person runs it, with RERUN_PYTHON set and no AWS_ENDPOINT_URL. */
  const devWith = (python: string) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, RERUN_PYTHON: python };
      delete env.AWS_ENDPOINT_URL;
      const child = spawn(process.execPath, [join(ROOT, 'bin', 'rerun.js'), 'dev', '--once'], { cwd: ROOT, env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
      });
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });

  it('a path that does not exist, a file that cannot be executed, a Python without moto', async () => {
    const notExecutable = join(dir, 'python3');
    writeFileSync(notExecutable, '');
    chmodSync(notExecutable, 0o644);
    const withoutMoto = join(dir, 'python-without-moto');
    writeFileSync(withoutMoto, '#!/bin/sh\necho "ModuleNotFoundError: No module named \'moto\'" >&2\nexit 1\n');
    chmodSync(withoutMoto, 0o755);
    const [missing, denied, bare] = await Promise.all([
      devWith(join(dir, 'no-such-python')),
      devWith(notExecutable),
      devWith(withoutMoto),
    ]);
    for (const run of [missing, denied, bare]) {
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).not.toMatch(/\.venv\/moto|Remove its virtual environment/);
      expect(run.stderr).toMatch(/Point RERUN_PYTHON at a Python 3 that has the packages of requirements\/moto\.txt/);
    }
    expect(missing.stderr).toContain(
      `rerun dev: RERUN_PYTHON=${join(dir, 'no-such-python')}: that interpreter does not exist, so the local AWS emulator (moto) cannot start.`,
    );
    expect(denied.stderr).toContain(`RERUN_PYTHON=${notExecutable}: that interpreter cannot be executed (EACCES)`);
    expect(bare.stderr).toContain(`RERUN_PYTHON=${withoutMoto} runs, but has no module "moto"`);
  }, 60_000);
});
