import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Folders that are not the repository's own text: installs, builds, caches, reports, the API reference. */
const SKIP = new Set([
  'node_modules',
  '.git',
  '.venv',
  'dist',
  'cdk.out',
  'coverage',
  '.tools',
  '.rerun',
  '.ci-report',
  'api-docs',
  // Stryker's copies of the project while `npm run test:mutation` runs, and its report.
  '.stryker-tmp',
  'reports',
]);

function repositoryFiles(dir = ''): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory())
      return SKIP.has(entry.name) || entry.name.startsWith('.readme-') ? [] : repositoryFiles(path);
    return [path];
  });
}

const FILES = repositoryFiles().filter((f) => !f.endsWith('package-lock.json'));
const NAMES = new Set(FILES.map((f) => basename(f)));
/**
 * Files whose paths are made up on purpose, left out of the scan: this one (its planted mistakes show
 * the checks can fail) and the layering test (its cycle finder is shown on `app/a.ts`, `src/c.ts`...).
 */
const MADE_UP_PATHS = new Set(['test/unit/docPaths.test.ts', 'test/unit/layering.test.ts']);
/** The text scanned. */
const TEXT = FILES.filter((f) => /\.(md|ts|mjs|js|sh|py|yml)$/.test(f) && !MADE_UP_PATHS.has(f));

/**
 * Paths that are meant not to exist, each for its reason: the README's own worker, which the reader
 * creates (test/e2e/readmeFromClone.test.ts creates it in a clone); a user's project in a TSDoc
 * example; a handler a test names to see it missing.
 */
const NOT_IN_THE_REPOSITORY = new Set([
  'functions/upper/handler.ts',
  'src/worker.ts',
  'test/fixtures/handlers/nope.ts',
]);
/**
 * File names that are not files of the repository, each for its reason: the reader's own pipeline, worker,
 * window task and CDK app (README), the bundles esbuild writes (`index.mjs`), moto's server module (`app.py`), a
 * declaration file's extension.
 */
const NOT_REPOSITORY_FILES = new Set([
  'worker.mjs',
  'pipeline.mjs',
  'daily.mjs',
  'app.mjs',
  'index.mjs',
  'app.py',
  '.d.ts',
]);

const PATH =
  /(?:^|[\s`'"([])((?:\.{1,2}\/)?(?:src|app|local|infra|functions|test|bench|docs|scripts|tools|examples|bin|requirements|\.ci)\/[\w./@+-]*[\w/])(\*?)/g;

function exists(path: string): boolean {
  return existsSync(join(ROOT, path));
}

/** Every repository path `file` mentions (`src/...`, `../app/...`) that does not exist. */
function missingPaths(file: string, text: string): string[] {
  const missing: string[] = [];
  for (const match of text.matchAll(PATH)) {
    const path = (match[1] ?? '').replace(/[.,:;)]+$/, '');
    // A glob (`test/sim/exhaustive*.test.ts`) or a pattern names no one file.
    if (match[2] === '*' || /[*{<]/.test(path) || NOT_IN_THE_REPOSITORY.has(path)) continue;
    // An install's path (`tools/typedoc/node_modules/.bin/typedoc`) exists only once it is installed:
    // npm test on a fresh clone runs before npm run docs has installed it.
    if (path.split('/').includes('node_modules')) continue;
    // Imports name the compiled `.js` of a `.ts` source.
    const forms = path.endsWith('.js') ? [path, path.replace(/\.js$/, '.ts')] : [path];
    if (!forms.some((p) => exists(p) || exists(join(dirname(file), p)))) missing.push(`${file}: ${path}`);
  }
  return missing;
}

/** Backticked file names (`OutputWriter.ts`) that no file of the repository has, and relative links that resolve nowhere. */
function missingNames(file: string, text: string): string[] {
  const missing: string[] = [];
  for (const match of text.matchAll(/`([\w.-]+\.(?:ts|md|mjs|py|sh))`/g)) {
    const name = match[1] ?? '';
    if (!NAMES.has(name) && !NOT_REPOSITORY_FILES.has(name)) missing.push(`${file}: ${name}`);
  }
  if (file.endsWith('.md')) {
    for (const match of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      const target = match[1] ?? '';
      if (/^[a-z]+:/.test(target)) continue;
      if (!exists(normalize(join(dirname(file), target)))) missing.push(`${file}: link ${target}`);
    }
  }
  return missing;
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');
}

/** The anchors of a markdown text's headings (outside fenced blocks). */
function anchorsOf(markdown: string): Set<string> {
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, '');
  return new Set([...prose.matchAll(/^#{1,6} (.+)$/gm)].map((m) => headingAnchor(m[1] ?? '')));
}

/**
 * Links of a *.md to a heading (`#anchor`, `page.md#anchor`) whose page has no such heading: a
 * section moved to another page, or renamed, leaves its links pointing nowhere.
 */
function missingAnchors(file: string, text: string, read: (path: string) => string): string[] {
  const missing: string[] = [];
  for (const match of text.matchAll(/\]\(([^)#\s]*)#([^)\s]+)\)/g)) {
    const target = match[1] ?? '';
    const anchor = match[2] ?? '';
    if (/^[a-z]+:/.test(target) || (target !== '' && !target.endsWith('.md'))) continue;
    const page = target === '' ? file : normalize(join(dirname(file), target));
    if (!anchorsOf(read(page)).has(anchor)) missing.push(`${file}: link ${target}#${anchor}`);
  }
  return missing;
}

/** The repository's top-level names, and the folders its installs and builds make (`dist`...). */
const TOP_LEVEL = new Set([...FILES.map((f) => f.split('/')[0] ?? ''), ...SKIP]);
/**
 * Relative paths that lead elsewhere from a file's own place, each for its reason: they are meant
 * from the compiled `dist/` (the package's own package.json from `dist/app/cli/`, the bundles
 * from `dist/src/cdk/`), or they are a dependency's path in a CPU profile, shown in an example.
 */
const LEADING_OUT = new Set([
  'app/cli/dispatch.ts: ../../../package.json',
  'src/cdk/referenceWorker.ts: ../../workers',
  'bench/cpuProfile.ts: ../../node_modules',
]);

/**
 * What `file` cites outside the repository: a relative path (`../x`) that resolves above its root or
 * into a folder it does not have, and a notes file in capitals (`HANDBOOK.md`, in backticks or not)
 * that no file of it is named.
 */
function outsideReferences(file: string, text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?<![\w.])((?:\.\.\/)+)([\w@-][\w.@-]*)/g)) {
    const path = `${match[1]}${match[2]}`;
    const resolved = normalize(join(dirname(file), path));
    const outside = resolved.startsWith('..') || !TOP_LEVEL.has(resolved.split('/')[0] ?? '');
    if (outside && !LEADING_OUT.has(`${file}: ${path}`)) {
      found.push(`${file}: ${path}`);
    }
  }
  for (const match of text.matchAll(/\b([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*\.md)\b/g)) {
    if (!NAMES.has(match[1] ?? '')) found.push(`${file}: ${match[1]}`);
  }
  return found;
}

describe('the docs, comments and tests refer only to what is in the repository', () => {
  it('finds a missing path, a missing file name and a broken link, so the checks below can fail', () => {
    expect(missingPaths('docs/X.md', 'see `src/publish/ConditionalWriter.ts`')).toEqual([
      'docs/X.md: src/publish/ConditionalWriter.ts',
    ]);
    expect(missingNames('docs/X.md', 'see `HANDBOOK.md` and [notes](../elsewhere/notes.md)')).toEqual([
      'docs/X.md: HANDBOOK.md',
      'docs/X.md: link ../elsewhere/notes.md',
    ]);
    const pages: Record<string, string> = {
      'docs/X.md':
        '# X\n\n## The done-check, and why it is a HEAD\n\nsee [there](Y.md#gone) and [here](#the-done-check-and-why-it-is-a-head)',
      'docs/Y.md': '# Y\n\n```sh\n# gone\n```\n',
    };
    expect(missingAnchors('docs/X.md', pages['docs/X.md'] ?? '', (p) => pages[p] ?? '')).toEqual([
      'docs/X.md: link Y.md#gone',
    ]);
    const notes = '// as ../elsewhere/HANDBOOK.md says, and ../../outside; see ../app/topology.ts';
    expect(outsideReferences('src/x.ts', notes)).toEqual([
      'src/x.ts: ../elsewhere',
      'src/x.ts: ../../outside',
      'src/x.ts: HANDBOOK.md',
    ]);
  });

  it('every repository path named in a doc, a comment or a test exists', () => {
    expect(TEXT.length).toBeGreaterThan(100);
    expect(TEXT.flatMap((f) => missingPaths(f, readFileSync(join(ROOT, f), 'utf8')))).toEqual([]);
  });

  it('every file name in backticks exists, and every relative link of a *.md resolves', () => {
    const scanned = TEXT.filter((f) => /\.(md|ts|mjs)$/.test(f));
    expect(scanned.flatMap((f) => missingNames(f, readFileSync(join(ROOT, f), 'utf8')))).toEqual([]);
  });

  it('every link of a *.md to a heading finds that heading on its page', () => {
    const pages = TEXT.filter((f) => f.endsWith('.md'));
    expect(pages).toContain('docs/guides/01-getting-started.md');
    const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
    expect(pages.flatMap((f) => missingAnchors(f, read(f), read))).toEqual([]);
  });

  it('nothing cites notes outside the repository: no path leads out of it, no notes file it lacks is named', () => {
    expect(TEXT.flatMap((f) => outsideReferences(f, readFileSync(join(ROOT, f), 'utf8')))).toEqual([]);
  });
});
