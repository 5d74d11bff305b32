import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/*
 * The README is the front door: it stays short enough to read at once, and its first worker is small
 * enough to take in at a glance. Both limits were measured on the README as it is (210 lines, a
 * 15-line worker); a longer page or a bigger first example belongs in the guides.
 */

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The most lines the README may have. */
const MAX_README_LINES = 300;
/** The most lines of code (between the fences) of the README's first worker example. */
const MAX_FIRST_WORKER_LINES = 15;

/** The text of the README's `## Usage` section, up to the next second-level heading. */
function usageSection(text: string): string {
  const start = text.search(/^## Usage$/m);
  if (start < 0) throw new Error('README.md has no "## Usage" section');
  const rest = text.slice(start + '## Usage'.length);
  const end = rest.search(/^## /m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The code of the first fenced block of `section` that defines a worker (`defineWorker(`). */
function firstWorkerBlock(section: string): string {
  const blocks = [...section.matchAll(/^```\w*\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
  const worker = blocks.find((code) => code.includes('defineWorker('));
  if (worker === undefined) throw new Error("README.md's Usage section has no worker example");
  return worker;
}

describe('the README stays short', () => {
  it(`is at most ${MAX_README_LINES} lines`, () => {
    const lines = README.endsWith('\n') ? README.split('\n').length - 1 : README.split('\n').length;
    expect(lines).toBeLessThanOrEqual(MAX_README_LINES);
  });

  it(`its first worker example, in Usage, is at most ${MAX_FIRST_WORKER_LINES} lines`, () => {
    const code = firstWorkerBlock(usageSection(README));
    expect(code).toContain('createSqsBatchHandler(');
    expect(code.trimEnd().split('\n').length).toBeLessThanOrEqual(MAX_FIRST_WORKER_LINES);
  });
});
