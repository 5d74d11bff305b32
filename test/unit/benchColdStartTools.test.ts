import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BenchSectionNotRunnableError, ensureLambdaRuntimeTools } from '../../bench/coldStart.js';
import { ROOT } from '../support/devExample.js';

describe("the bench's cold-start section on a machine without the Lambda runtime tools", () => {
  const scratch: string[] = [];
  afterEach(() => {
    for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the pinned install script, and when it cannot install (no go) the section is not runnable, with the reason', () => {
    // A project root with the real install script and no .tools/: a fresh clone after npm ci.
    const root = mkdtempSync(join(tmpdir(), 'rerun-bench-tools-'));
    scratch.push(root);
    mkdirSync(join(root, 'scripts'));
    copyFileSync(join(ROOT, 'scripts/install-lambda-runtime.sh'), join(root, 'scripts/install-lambda-runtime.sh'));
    const said: string[] = [];
    // bash and coreutils, but no Go toolchain on the PATH.
    const env = { ...process.env, PATH: '/usr/bin:/bin' };
    let thrown: unknown;
    try {
      ensureLambdaRuntimeTools((line) => said.push(line), { root, env });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BenchSectionNotRunnableError);
    expect((thrown as Error).message).toMatch(/could not be installed .*go is needed to build aws-lambda-rie/);
    expect(said).toEqual([expect.stringMatching(/installing the Lambda runtime tools/)]);
  });

  it("keeps the install script's output off stdout, which holds the report (--json is one JSON document)", () => {
    const root = mkdtempSync(join(tmpdir(), 'rerun-bench-tools-'));
    scratch.push(root);
    mkdirSync(join(root, 'scripts'));
    // An install that prints to stdout as npm does ("added 102 packages"), then fails.
    writeFileSync(
      join(root, 'scripts/install-lambda-runtime.sh'),
      'echo "added 102 packages in 6s"\necho "no go here" >&2\nexit 1\n',
    );
    const script =
      "const { ensureLambdaRuntimeTools } = await import('./bench/coldStart.ts');" +
      `try { ensureLambdaRuntimeTools(() => {}, { root: ${JSON.stringify(root)} }); } catch (e) { console.error(e.message); }`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(child.stdout).toBe('');
    expect(child.stderr).toContain('added 102 packages in 6s');
    expect(child.stderr).toMatch(/could not be installed .*no go here/);
  });
});
