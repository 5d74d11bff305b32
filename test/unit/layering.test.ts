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
  app: ['test', 'bench', 'scripts'],
  functions: ['local', 'test', 'bench', 'scripts'],
  infra: ['test', 'bench', 'scripts'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => path.join(dir, file));
}

const SPECIFIER = /(?:from\s+|import\(\s*|^import\s+)'(\.{1,2}\/[^']+)'/gm;

/** Every relative import of `file`, as the repository-relative path it resolves to. */
function relativeImports(file: string, text: string): string[] {
  return [...text.matchAll(SPECIFIER)].map((match) =>
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

describe('layering: no import runs back up the wings', () => {
  it('finds an import that runs back up, so the checks below can fail', () => {
    const text = "import { topology } from '../../app/topology.js';\n";
    expect(relativeImports('src/normalize/normalizeWorker.ts', text)).toEqual(['app/topology.js']);
  });

  it.each(Object.keys(MAY_NOT_IMPORT))('%s/ imports nothing from the wings above it', (wing) => {
    expect(violations(wing)).toEqual([]);
  });
});
