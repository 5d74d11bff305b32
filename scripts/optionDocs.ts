/**
 * The option reference of the documentation, generated from the TSDoc of the options interfaces, so
 * that the documented types and defaults are the code's. Each interface's section sits between
 * `<!-- options: NAME -->` and `<!-- /options -->` on a documentation page (scripts/docPages.ts lists
 * them: `RerunPipelineProps` on docs/CONSTRUCTS.md, `SqsBatchHandlerOptions` in the worker guide);
 * test/unit/readmeOptions.test.ts fails when a page differs from what this writes.
 *
 * Usage: npx tsx scripts/optionDocs.ts [--write]   (without --write: print the sections)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { documentationPages, ROOT } from './docPages.js';

/** The documented options interfaces, by the name used in the pages' markers. */
export const OPTION_SOURCES: Readonly<Record<string, string>> = {
  SqsBatchHandlerOptions: 'src/batch/createSqsBatchHandler.ts',
  RerunPipelineProps: 'src/cdk/RerunPipelineProps.ts',
};

/** One property of an options interface. */
export interface OptionDoc {
  readonly name: string;
  readonly type: string;
  readonly optional: boolean;
  readonly description: string;
  readonly defaultValue: string | undefined;
}

/** The properties of `export interface NAME { ... }` in `source`, with their TSDoc. */
export function parseOptions(source: string, name: string): OptionDoc[] {
  const start = source.indexOf(`export interface ${name} {`);
  if (start < 0) throw new Error(`interface ${name} not found`);
  const body = source.slice(source.indexOf('{', start) + 1, source.indexOf('\n}', start));
  const options: OptionDoc[] = [];
  // Members sit at two spaces of indentation; a member's type runs to the first `;` outside braces,
  // so an inline object type (`{ readonly bucket: string; readonly prefix: string }`) stays whole.
  const member = /(?:^ {2}\/\*\*([\s\S]*?)\*\/\n)?^ {2}readonly (\w+)(\??): /gm;
  for (const match of body.matchAll(member)) {
    let depth = 0;
    let end = (match.index ?? 0) + match[0].length;
    for (; end < body.length; end++) {
      const char = body[end];
      if (char === '{' || char === '(' || char === '<' || char === '[') depth++;
      else if (char === '}' || char === ')' || char === ']' || (char === '>' && body[end - 1] !== '=')) depth--;
      else if (char === ';' && depth === 0) break;
    }
    const type = body.slice((match.index ?? 0) + match[0].length, end);
    const comment = (match[1] ?? '')
      .split('\n')
      .map((line) => line.replace(/^\s*\* ?/, '').trimEnd())
      .join('\n')
      .trim();
    const defaultAt = comment.search(/(^|\s)@default\b/);
    const description = (defaultAt >= 0 ? comment.slice(0, defaultAt) : comment).replace(/\s+/g, ' ').trim();
    const defaultValue =
      defaultAt >= 0
        ? comment
            .slice(defaultAt)
            .replace(/^\s*@default\s*/, '')
            .replace(/\s+/g, ' ')
            .trim()
        : undefined;
    options.push({
      name: match[2] ?? '',
      optional: match[3] === '?',
      type: type.replace(/\s+/g, ' ').trim(),
      description: description.replace(/\{@link (\w+)\}/g, '`$1`'),
      defaultValue,
    });
  }
  return options;
}

/** The documentation section of one interface: a `####` heading per option with Type and Default. */
export function formatOptions(options: readonly OptionDoc[]): string {
  return options
    .map((o) => {
      const lines = [`#### ${o.name}`, '', `Type: \`${o.type}\`${o.optional ? '' : ' (required)'}`];
      if (o.optional) lines.push('', `Default: ${o.defaultValue ?? 'none'}`);
      if (o.description) lines.push('', o.description);
      return lines.join('\n');
    })
    .join('\n\n');
}

/** A documentation page's text with every options section replaced by what the code documents. */
export function renderOptionSections(page: string): string {
  return page.replace(
    /<!-- options: (\w+) -->\n(?:(?!<!-- options: )[\s\S])*?<!-- \/options -->/g,
    (_all, name: string) => {
      const file = OPTION_SOURCES[name];
      if (!file) throw new Error(`a documentation page names options ${name}, which OPTION_SOURCES does not list`);
      const section = formatOptions(parseOptions(readFileSync(`${ROOT}${file}`, 'utf8'), name));
      return `<!-- options: ${name} -->\n\n${section}\n\n<!-- /options -->`;
    },
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const page of documentationPages()) {
    const path = `${ROOT}${page}`;
    const rendered = renderOptionSections(readFileSync(path, 'utf8'));
    if (process.argv.includes('--write')) writeFileSync(path, rendered);
    else process.stdout.write(rendered);
  }
}
