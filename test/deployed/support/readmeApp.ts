import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { codeBlocks } from '../../../scripts/docPages.js';

/** The README's own pipeline, as files a user would have. */
export interface ReadmeApp {
  /** The folder holding `pipeline.mjs`, `worker.mjs`, `daily.mjs` and `app.mjs` (the CDK app runs here, as a user's would). */
  readonly dir: string;
  /** The stack the README's CDK app defines. */
  readonly stackName: string;
}

/**
 * Writes the README's "Usage" pipeline (`pipeline.mjs`), worker (`worker.mjs`) and window task
 * (`daily.mjs`, under the entry its RerunWindowStage names) and its "In your CDK app" app
 * (`app.mjs`), all taken verbatim from the documentation pages (scripts/docPages.ts: the README holds
 * them today; a block moved into a guide is found there), into `<root>/.rerun/readme-app/`. A `tsconfig.json` there maps
 * the package name `rerun-pipeline` to this checkout's sources, so tsx (the app) and esbuild (the
 * worker's bundle, through RerunPipeline's NodejsFunction) resolve the imports as an installed
 * package would, without a build. Nothing else differs from a user's folder.
 *
 * @example
 * const app = writeReadmeApp(process.cwd()); // then: cdklocal deploy --app 'tsx app.mjs' in app.dir
 */
export function writeReadmeApp(root: string): ReadmeApp {
  const blocks = codeBlocks('js', root).map((block) => block.code);
  const pipeline = blocks.find((b) => b.includes('export const pipeline = definePipeline('));
  const worker = blocks.find((b) => b.includes('defineWorker({') && b.includes('export const handler'));
  const windowTask = blocks.find((b) => b.includes('defineWindowTask({') && b.includes('export const handler'));
  const app = blocks.find((b) => b.includes("new RerunPipeline(stack, 'Pipeline', { worker: { entry: 'worker.mjs' }"));
  const stackName = /new Stack\(app, '([^']+)'\)/.exec(app ?? '')?.[1];
  const windowEntry = /handler: \{ entry: '([^']+)' \}/.exec(app ?? '')?.[1];
  if (!pipeline || !worker || !windowTask || !app || !stackName || !windowEntry) {
    throw new Error(
      'the README and the guides have no pipeline.mjs block, no worker.mjs block, no window task block (defineWindowTask) ' +
        'or no CDK app block with `new RerunPipeline(...)` and a RerunWindowStage handler entry: the deployed tier deploys them',
    );
  }
  const dir = join(root, '.rerun', 'readme-app');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'pipeline.mjs'), pipeline);
  writeFileSync(join(dir, 'worker.mjs'), worker);
  writeFileSync(join(dir, windowEntry), windowTask);
  writeFileSync(join(dir, 'app.mjs'), app);
  // Every subpath the package exports, mapped to its source (the dist/ path of each, as .ts): the README's
  // files import several (rerun-pipeline/observability, /pipeline, /window, /cdk).
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, { default?: string }>;
  };
  const paths = Object.fromEntries(
    Object.entries(exports)
      .filter(([, target]) => target.default?.startsWith('./dist/') && target.default.endsWith('.js'))
      .map(([subpath, target]) => [
        `rerun-pipeline${subpath.slice(1)}`,
        [join(root, (target.default as string).slice('./dist/'.length).replace(/\.js$/, '.ts'))],
      ]),
  );
  writeFileSync(join(dir, 'tsconfig.json'), `${JSON.stringify({ compilerOptions: { paths } }, null, 2)}\n`);
  return { dir, stackName };
}
