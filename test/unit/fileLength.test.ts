import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A module of the library, the local tooling or the application is at most this many lines. */
const MODULE_LIMIT = 400;
/** A command file is its options, one call into its wing and its rendering. */
const COMMAND_LIMIT = 200;

/**
 * Measured hot loops, kept whole so that a profile reads them in one place. Each is judged by a
 * benchmark target that judges it.
 */
const HOT_LOOPS: Record<string, string> = {
  // The CSV reader's state machine: the loop that `npm run bench` judges as `normalize-mib-per-core`
  // (MiB of CSV per CPU second), kept in one file so its profile and its code read side by side.
  'src/normalize/csvParser.ts': 'normalize-mib-per-core',
};

/** A module: TypeScript, and the JavaScript shipped as is (the console page's scripts, a loader hook). */
const MODULE_FILE = /\.(tsx?|m?js)$/;

function modules(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => MODULE_FILE.test(file))
    .map((file) => path.join(dir, file).split(path.sep).join('/'));
}

function lineCount(file: string): number {
  return readFileSync(path.join(ROOT, file), 'utf8').split('\n').length - 1;
}

/** The files over their limit, with their length. */
function overLimit(files: readonly string[], limit: number): string[] {
  return files
    .map((file) => ({ file, lines: lineCount(file) }))
    .filter(({ lines }) => lines > limit)
    .map(({ file, lines }) => `${file}: ${lines} lines`);
}

describe('file length: a newcomer reads each module whole', () => {
  it('finds a file over its limit, so the checks below can fail', () => {
    expect(overLimit(['src/normalize/csvParser.ts'], 100)).toEqual([
      `src/normalize/csvParser.ts: ${lineCount('src/normalize/csvParser.ts')} lines`,
    ]);
  });

  it('counts the JavaScript modules of app/ along with its TypeScript', () => {
    const files = modules('app');
    expect(files).toContain('app/ui/assets/console.js');
    expect(files).toContain('app/cli/checkoutResolveHook.mjs');
    expect(files).toContain('app/ui/consoleServer.ts');
    expect(files).not.toContain('app/ui/assets/console.css');
  });

  it(`no module of src/, app/ or local/ is over ${MODULE_LIMIT} lines, outside the measured hot loops`, () => {
    const files = ['src', 'app', 'local'].flatMap(modules).filter((file) => !(file in HOT_LOOPS));
    expect(overLimit(files, MODULE_LIMIT)).toEqual([]);
  });

  it(`no command file of app/cli/commands/ is over ${COMMAND_LIMIT} lines`, () => {
    expect(overLimit(modules('app/cli/commands'), COMMAND_LIMIT)).toEqual([]);
  });

  it('every hot loop named above exists and is judged by a benchmark target', () => {
    const targets = readFileSync(path.join(ROOT, 'bench/targets.ts'), 'utf8');
    for (const [file, target] of Object.entries(HOT_LOOPS)) {
      expect(lineCount(file)).toBeGreaterThan(0);
      expect(targets).toContain(`'${target}'`);
    }
  });
});
