import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The three wings: the library (`src/`), the local tooling (`local/`) and the reference application
 * (`app/`, with its stack in `infra/` and its handlers in `functions/`). Imports run from the
 * application to the tooling and the library, and from the tooling to the library, never back.
 */
const MAY_NOT_IMPORT: Record<string, readonly string[]> = {
  src: ['local', 'app', 'infra', 'functions', 'test', 'bench', 'scripts'],
  local: ['app', 'infra', 'functions', 'test', 'bench', 'scripts'],
  // The stack (infra/) imports the application's topology: the application reaches the stack only
  // through what its composer passes in (app/dev/StackWorkerSynthesizer.ts).
  app: ['infra', 'test', 'bench', 'scripts'],
  functions: ['local', 'test', 'bench', 'scripts'],
  infra: ['test', 'bench', 'scripts'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => path.join(dir, file));
}

const SPECIFIER = /(?:from\s+|import\(\s*|^import\s+)'(\.{1,2}\/[^']+)'/gm;

/** A line of a comment (a TSDoc example shows imports that are not the module's own). */
const COMMENT_LINE = /^\s*(\*|\/\/|\/\*)/;

/** Every relative import of `file`, as the repository-relative path it resolves to. */
function relativeImports(file: string, text: string): string[] {
  const code = text
    .split('\n')
    .filter((line) => !COMMENT_LINE.test(line))
    .join('\n');
  return [...code.matchAll(SPECIFIER)].map((match) =>
    path.relative(ROOT, path.resolve(ROOT, path.dirname(file), match[1] ?? '')),
  );
}

function violations(wing: string): string[] {
  const forbidden = MAY_NOT_IMPORT[wing] ?? [];
  return sourceFiles(wing).flatMap((file) =>
    relativeImports(file, readFileSync(path.join(ROOT, file), 'utf8'))
      .filter((target) => forbidden.includes(target.split(path.sep)[0] ?? ''))
      .map((target) => `${file} imports ${target}`),
  );
}

/** The wings whose modules must form no import cycle. */
const CYCLE_CHECKED = ['src', 'local', 'app'];

/** Every checked module's relative imports (type-only ones too: a cycle of types is still a tangle). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of CYCLE_CHECKED.flatMap(sourceFiles)) {
    const targets = relativeImports(file, readFileSync(path.join(ROOT, file), 'utf8')).map((t) =>
      t.replace(/\.js$/, '.ts'),
    );
    graph.set(file, targets);
  }
  return graph;
}

/**
 * The import cycles of `graph`, each as the path that closes it (`a -> b -> a`): a depth-first
 * search that reports every edge back to a module still on the stack.
 */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const visit = (node: string) => {
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (onStack.has(next)) cycles.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
      else if (!done.has(next) && graph.has(next)) visit(next);
    }
    stack.pop();
    onStack.delete(node);
    done.add(node);
  };
  for (const node of [...graph.keys()].sort()) if (!done.has(node)) visit(node);
  return cycles;
}

describe('layering: no import cycle among the modules of src/, local/ and app/', () => {
  it('finds a cycle, so the check below can fail', () => {
    const graph = new Map([
      ['app/a.ts', ['app/b.ts']],
      ['app/b.ts', ['src/c.ts']],
      ['src/c.ts', ['app/a.ts']],
      ['src/d.ts', ['src/c.ts']],
    ]);
    expect(importCycles(graph)).toEqual(['app/a.ts -> app/b.ts -> src/c.ts -> app/a.ts']);
  });

  it('the scan resolves the .js specifiers of the sources to their .ts modules', () => {
    const graph = importGraph();
    expect(graph.get('app/dev/runDev.ts')).toContain('app/dev/devSession.ts');
    expect([...graph.values()].flat().every((target) => !target.endsWith('.js'))).toBe(true);
  });

  it('src/, local/ and app/ import in no cycle', () => {
    expect(importCycles(importGraph())).toEqual([]);
  });
});

describe('layering: no import runs back up the wings', () => {
  it('finds an import that runs back up, so the checks below can fail', () => {
    const text = "import { topology } from '../../app/topology.js';\n";
    expect(relativeImports('src/normalize/normalizeWorker.ts', text)).toEqual(['app/topology.js']);
  });

  it("reads imports, not a TSDoc example's", () => {
    const text = "/**\n * @example\n * import { topology } from './topology.js';\n */\nexport { a } from './a.js';\n";
    expect(relativeImports('app/topology.ts', text)).toEqual(['app/a.js']);
  });

  it.each(Object.keys(MAY_NOT_IMPORT))('%s/ imports nothing from the wings above it', (wing) => {
    expect(violations(wing)).toEqual([]);
  });
});

/**
 * The rooms of the application, lowest first. A module may import its own room and the rooms of the
 * levels below its own, never a room of its level (sideways) or above. The command line sits on top
 * and calls every wing; the wings (reprocess, redrive, status, backfill, dev, ui) share what they all
 * need through `app/common/` (the command-line vocabulary, the target a tool runs on, the queue
 * plumbing) and `app/runs/` (the events a run tells, their renderers and the run files), never
 * through each other's rooms.
 */
const APP_LEVELS: readonly (readonly string[])[] = [
  ['app/localState', 'app/topology.ts', 'app/stackOutputs.ts', 'app/alignColumns.ts'],
  ['app/partition'],
  ['app/referencePipeline.ts'],
  ['app/common'],
  ['app/runs'],
  ['app/reprocess', 'app/redrive'],
  ['app/status'],
  ['app/backfill'],
  ['app/dev', 'app/ui'],
  ['app/cli'],
];

/** Rooms of the library that stay apart: the key is never imported by the rooms listed. */
const SRC_APART: Record<string, readonly string[]> = {
  // The ledger builds on the AWS clients (its DynamoDB client shares their options); the clients
  // know nothing of the ledger.
  'src/aws': ['src/ledger'],
};

/** The room of a repository-relative module: `app/<room>` for a folder, the file itself at the top. */
function roomOf(file: string): string {
  const parts = file.split(path.sep);
  return parts.length > 2 ? parts.slice(0, 2).join('/') : parts.join('/').replace(/\.js$/, '.ts');
}

function levelOf(room: string): number {
  return APP_LEVELS.findIndex((level) => level.includes(room));
}

/** Every import of `file` that reaches a room of its level or above (other than its own). */
function appLevelViolations(file: string, imports: readonly string[]): string[] {
  const room = roomOf(file);
  const level = levelOf(room);
  return imports
    .filter((target) => target.startsWith(`app${path.sep}`))
    .map((target) => ({ target, room: roomOf(target) }))
    .filter((t) => t.room !== room && levelOf(t.room) >= level)
    .map((t) => `${file} imports ${t.target} (${t.room} is ${levelOf(t.room) === level ? 'beside' : 'above'} ${room})`);
}

describe('layering: the rooms of app/ do not lean sideways', () => {
  it('finds a sideways import and one that runs up, so the check below can fail', () => {
    const ui = relativeImports(
      'app/ui/runConsole.ts',
      "import { a } from '../cli/x.js';\nimport { b } from '../dev/y.js';\n",
    );
    expect(appLevelViolations('app/ui/runConsole.ts', ui)).toEqual([
      'app/ui/runConsole.ts imports app/cli/x.js (app/cli is above app/ui)',
      'app/ui/runConsole.ts imports app/dev/y.js (app/dev is beside app/ui)',
    ]);
    const fine = relativeImports(
      'app/ui/runConsole.ts',
      "import { a } from '../common/x.js';\nimport { b } from './y.js';\n",
    );
    expect(appLevelViolations('app/ui/runConsole.ts', fine)).toEqual([]);
  });

  it('names every room of app/ in a level', () => {
    const rooms = new Set(sourceFiles('app').map(roomOf));
    expect([...rooms].filter((room) => levelOf(room) < 0)).toEqual([]);
  });

  it('every module of app/ imports only its own room and the levels below it', () => {
    const found = sourceFiles('app').flatMap((file) =>
      appLevelViolations(file, relativeImports(file, readFileSync(path.join(ROOT, file), 'utf8'))),
    );
    expect(found).toEqual([]);
  });

  it('the AWS clients and the ledger stay apart: src/aws imports nothing of src/ledger', () => {
    const found = Object.entries(SRC_APART).flatMap(([room, apart]) =>
      sourceFiles(room).flatMap((file) =>
        relativeImports(file, readFileSync(path.join(ROOT, file), 'utf8'))
          .filter((target) => apart.includes(roomOf(target)))
          .map((target) => `${file} imports ${target}`),
      ),
    );
    expect(found).toEqual([]);
    expect(relativeImports('src/aws/x.ts', "import { a } from '../ledger/y.js';\n").map(roomOf)).toEqual([
      'src/ledger',
    ]);
  });
});
