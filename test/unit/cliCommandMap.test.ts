import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../app/cli/commandMap.js';
import { globalHelp, runCli } from '../../app/cli/dispatch.js';
import type { CliIo } from '../../app/common/command.js';

const COMMANDS_DIR = fileURLToPath(new URL('../../app/cli/commands/', import.meta.url));

function io() {
  const out: string[] = [];
  let err = '';
  const value: CliIo = {
    stdout: (line) => void out.push(line),
    stderr: (text) => {
      err += text;
    },
    env: {},
    isTTY: false,
    signal: new AbortController().signal,
  };
  return { value, out, err: () => err };
}

describe('the command map: every command, its summary, loaded only when it runs', () => {
  it('names every file of app/cli/commands/, and each entry loads the command of its name and summary', async () => {
    const files = readdirSync(COMMANDS_DIR)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(Object.keys(COMMANDS).sort()).toEqual(files);
    for (const [name, entry] of Object.entries(COMMANDS)) {
      const { command } = await entry.load();
      expect(command.name).toBe(name);
      expect(command.summary, name).toBe(entry.summary);
    }
  }, 60_000);

  it('--help lists every command from the map, on stdout, loading none', async () => {
    let loaded = 0;
    const lazy = Object.fromEntries(
      Object.entries(COMMANDS).map(([name, entry]) => [
        name,
        {
          summary: entry.summary,
          load: () => {
            loaded += 1;
            return entry.load();
          },
        },
      ]),
    );
    const help = io();
    expect(await runCli(['--help'], help.value, lazy)).toBe(0);
    expect(loaded).toBe(0);
    expect(help.err()).toBe('');
    expect(help.out.join('\n')).toBe(globalHelp().trimEnd());
    for (const name of Object.keys(COMMANDS)) expect(help.out.join('\n')).toMatch(new RegExp(`^  ${name}\\s`, 'm'));
  });

  it("--version prints the package's version on stdout", async () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-v']) {
      const run = io();
      expect(await runCli([flag], run.value)).toBe(0);
      expect(run.out).toEqual([manifest.version]);
      expect(run.err()).toBe('');
    }
  });

  it('no command is a usage error: the help on stderr, exit 2', async () => {
    const run = io();
    expect(await runCli([], run.value)).toBe(2);
    expect(run.out).toEqual([]);
    expect(run.err()).toMatch(/^rerun: /);
  });

  it('a command whose module needs a package that is not installed names it and how to install it', async () => {
    const absent = '@aws-sdk/client-absent-for-this-test';
    const broken = {
      dev: { summary: 'x', load: () => import(/* @vite-ignore */ absent) as Promise<never> },
    };
    const run = io();
    await expect(runCli(['dev'], run.value, broken)).rejects.toThrow(
      `rerun dev needs ${absent}, which is not installed: npm install ${absent}`,
    );
  });
});
