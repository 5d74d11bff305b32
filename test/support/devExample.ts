import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { command as dev } from '../../app/cli/commands/dev.js';
import { codeBlocks } from '../../scripts/docPages.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = fileURLToPath(new URL('../../app/cli/rerun.ts', import.meta.url));

/** Every `rerun dev` command line of `rerun dev --help` (its details) and of the shell blocks of the README and the guides. */
export function documentedExamples(): string[] {
  const help = (dev.details ?? '')
    // A line ending in a backslash goes on in the next one, as in a shell.
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => /^(rerun dev|npm start)\b/.test(line));
  const fromReadme = codeBlocks('sh')
    .flatMap((block) => block.code.split('\n'))
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => /^(npx )?rerun dev\b/.test(line) || line === 'npm start');
  return [...new Set([...help, ...fromReadme])];
}

/** The arguments an example gives `rerun` (`npx rerun` runs the same bin). */
export function exampleArgs(example: string): string[] {
  return example.replace(/^(npx )?rerun /, '').split(/\s+/);
}

/**
 * Runs an example exactly as written, from `cwd`, with no AWS_ENDPOINT_URL: rerun dev starts its
 * embedded emulator, so the example needs nothing but itself. `rerun` is this project's CLI.
 */
export function runExample(
  example: string,
  cwd = ROOT,
): Promise<{ code: number | null; stdout: string[]; stderr: string }> {
  const env = { ...process.env };
  delete env.AWS_ENDPOINT_URL;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...exampleArgs(example)], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.once('exit', (code) => resolve({ code, stdout: out.split('\n').filter(Boolean), stderr: err }));
  });
}

/** The counts of an example's `SUMMARY` line, if it printed one. */
export const summaryOf = (stdout: string[]) => {
  const line = stdout.find((l) => l.startsWith('SUMMARY '));
  return line ? (JSON.parse(line.slice('SUMMARY '.length)) as Record<string, number>) : undefined;
};
