import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OPTION_SOURCES, parseOptions, renderReadme } from '../../scripts/optionDocs.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(`${ROOT}README.md`, 'utf8');

describe("the README's option reference is the code's TSDoc", () => {
  it.each(Object.entries(OPTION_SOURCES))('%s: every member is parsed, with its type and default', (name, file) => {
    const source = readFileSync(`${ROOT}${file}`, 'utf8');
    const body = source.slice(
      source.indexOf(`export interface ${name} {`),
      source.indexOf('\n}', source.indexOf(`export interface ${name} {`)),
    );
    const members = [...body.matchAll(/^ {2}readonly (\w+)/gm)].map((m) => m[1]);
    const options = parseOptions(source, name);
    expect(options.map((o) => o.name)).toEqual(members);
    for (const option of options.filter((o) => o.optional)) expect(option.defaultValue, option.name).toBeTruthy();
    // A type that ran into the next member's comment would hold its TSDoc.
    for (const option of options) expect(option.type, option.name).not.toContain('/**');
    expect(README).toContain(`<!-- options: ${name} -->`);
  });

  it('README.md is what `npx tsx scripts/optionDocs.ts --write` writes', () => {
    expect(README).toBe(renderReadme(README));
  });

  it('a default changed in the code shows as a difference', () => {
    const stale = README.replace('Default: false', 'Default: true');
    expect(stale).not.toBe(README);
    expect(renderReadme(stale)).toBe(README);
  });
});
