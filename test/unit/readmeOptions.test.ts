import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT, readDocumentationPages } from '../../scripts/docPages.js';
import { OPTION_SOURCES, parseOptions, renderOptionSections } from '../../scripts/optionDocs.js';

const PAGES = readDocumentationPages();

describe("the documentation's option reference is the code's TSDoc", () => {
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
    // Each reference is on exactly one page.
    expect(PAGES.filter((p) => p.text.includes(`<!-- options: ${name} -->`)).map((p) => p.path)).toHaveLength(1);
  });

  it("the construct's props are on its own page, the handler's options in the worker guide", () => {
    const pageOf = (name: string) => PAGES.find((p) => p.text.includes(`<!-- options: ${name} -->`))?.path;
    expect(pageOf('RerunPipelineProps')).toBe('docs/CONSTRUCTS.md');
    expect(pageOf('SqsBatchHandlerOptions')).toBe('docs/guides/05-writing-and-testing-a-worker.md');
  });

  it.each(PAGES.map((p) => [p.path, p.text] as const))(
    '%s is what `npx tsx scripts/optionDocs.ts --write` writes',
    (_path, text) => {
      expect(text).toBe(renderOptionSections(text));
    },
  );

  it('a default changed in the code shows as a difference', () => {
    const page = PAGES.find((p) => p.text.includes('Default: false'))?.text ?? '';
    const stale = page.replace('Default: false', 'Default: true');
    expect(stale).not.toBe(page);
    expect(renderOptionSections(stale)).toBe(page);
  });
});
