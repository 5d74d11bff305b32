/**
 * The documentation pages whose code blocks and commands the tests check: the README (the front
 * door), the guides of docs/guides/ in reading order, and the construct's page. Every test that
 * reads the documentation's examples (test/unit/readmeExamples.test.ts, readmeTypes.test.ts,
 * readmeOptions.test.ts, test/e2e/readmeFromClone.test.ts, test/package/consumer.test.ts,
 * test/support/devExample.ts, test/deployed/support/readmeApp.ts) and scripts/optionDocs.ts take
 * the list from here, so a guide added to docs/guides/ is checked without naming it anywhere else.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder (this file's parent's parent). */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The folder of the guides a person reads in order (`01-getting-started.md`, ...). */
export const GUIDES_DIR = 'docs/guides';

/** The page of the `RerunPipeline` construct: its picture and its generated props. */
export const CONSTRUCT_PAGE = 'docs/CONSTRUCTS.md';

/**
 * The documentation pages, relative to `root`: README.md, then every `*.md` of docs/guides/ by name
 * (their numbers give the reading order), then docs/CONSTRUCTS.md.
 *
 * @example
 * documentationPages(); // ['README.md', 'docs/guides/01-getting-started.md', ..., 'docs/CONSTRUCTS.md']
 */
export function documentationPages(root: string = ROOT): string[] {
  const guides = readdirSync(join(root, GUIDES_DIR))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `${GUIDES_DIR}/${name}`);
  return ['README.md', ...guides, CONSTRUCT_PAGE];
}

/** One documentation page and its text. */
export interface DocumentationPage {
  readonly path: string;
  readonly text: string;
}

/** The pages of {@link documentationPages} with their text, in the same order. */
export function readDocumentationPages(root: string = ROOT): DocumentationPage[] {
  return documentationPages(root).map((path) => ({ path, text: readFileSync(join(root, path), 'utf8') }));
}

/** One fenced code block of a page. */
export interface CodeBlock {
  /** The page it is on, relative to the root. */
  readonly page: string;
  readonly code: string;
}

/**
 * Every fenced block of `language` (```ts, ```js, ```sh) of the documentation pages, page by page
 * in order, each block in the order it appears.
 *
 * @example
 * codeBlocks('ts').map((b) => b.code); // the TypeScript examples
 */
export function codeBlocks(language: string, root: string = ROOT): CodeBlock[] {
  const fence = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  return readDocumentationPages(root).flatMap(({ path, text }) =>
    [...text.matchAll(fence)].map((match) => ({ page: path, code: match[1] ?? '' })),
  );
}
