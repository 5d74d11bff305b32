import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../app/cli/dispatch.js';
import type { CliIo } from '../../app/common/command.js';
import { LambdaRuntimeToolsMissingError, RunnerConfigurationError } from '../../local/runner/errors.js';
import { LocalRunner } from '../../local/runner/LocalRunner.js';
import { locateLambdaRuntimeTools } from '../../local/runner/lambdaRuntimeTools.js';

function io(): { value: CliIo; err: () => string; out: string[] } {
  const out: string[] = [];
  let err = '';
  const value: CliIo = {
    stdout: (l) => void out.push(l),
    stderr: (t) => {
      err += t;
    },
    env: {},
    isTTY: false,
    signal: new AbortController().signal,
  };
  return { value, out, err: () => err };
}

describe('the Lambda runtime mode, before it starts anything', () => {
  it('names what is missing and the script that installs it when the runtime tools are absent', () => {
    const root = mkdtempSync(join(tmpdir(), 'rerun-no-tools-'));
    try {
      expect(() => locateLambdaRuntimeTools(root)).toThrow(LambdaRuntimeToolsMissingError);
      expect(() => locateLambdaRuntimeTools(root)).toThrow(
        /aws-lambda-rie.*Run: bash scripts\/install-lambda-runtime\.sh .*or use --runtime in-process/,
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('rerun dev refuses an unknown --runtime, and --handler with --runtime lambda (which runs the stack bundles)', async () => {
    const unknown = io();
    expect(await runCli(['dev', '--once', '--runtime', 'docker'], unknown.value)).toBe(2);
    expect(unknown.err()).toMatch(/--runtime must be in-process or lambda \(got docker\)/);
    const contradictory = io();
    expect(await runCli(['dev', '--once', '--runtime', 'lambda', '--handler', 'x.ts'], contradictory.value)).toBe(2);
    expect(contradictory.err()).toMatch(/--handler and --handler-export apply to --runtime in-process only/);
    expect(contradictory.out).toEqual([]);
  });

  it('LocalRunner takes exactly one of an in-process handler and an invoker', () => {
    const base = {
      sqs: new SQSClient({}),
      queueUrl: 'http://unused',
      timeoutSeconds: 1,
      batchSize: 1,
      maxBatchingWindowSeconds: 0,
      maxConcurrency: 1,
    };
    const message = /give exactly one of handler \(in this process\) and invoker/;
    expect(() => new LocalRunner(base)).toThrow(RunnerConfigurationError);
    expect(() => new LocalRunner(base)).toThrow(message);
    const both = {
      ...base,
      handler: async () => {},
      invoker: { invoke: async () => ({ kind: 'returned' as const, value: null }) },
    };
    expect(() => new LocalRunner(both)).toThrow(message);
  });
});
