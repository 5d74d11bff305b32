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
