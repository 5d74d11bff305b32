import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { codeBlocks } from '../../../scripts/docPages.js';

/** The README's own pipeline, as files a user would have. */
export interface ReadmeApp {
  /** The folder holding `worker.mjs` and `app.mjs` (the CDK app runs here, as a user's would). */
  readonly dir: string;
  /** The stack the README's CDK app defines. */
  readonly stackName: string;
}

/**
 * Writes the README's "Usage" pipeline (`pipeline.mjs`) and worker (`worker.mjs`) and its "In your CDK
 * app" app (`app.mjs`), all taken verbatim from the documentation pages (scripts/docPages.ts: the
 * README holds all three today; a block moved into a guide is found there), into `<root>/.rerun/readme-app/`. A `tsconfig.json` there maps
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
  const app = blocks.find((b) => b.includes("new RerunPipeline(stack, 'Pipeline', { worker: { entry: 'worker.mjs' }"));
  const stackName = /new Stack\(app, '([^']+)'\)/.exec(app ?? '')?.[1];
  if (!pipeline || !worker || !app || !stackName) {
    throw new Error(
      'the README and the guides have no pipeline.mjs block, no worker.mjs block or no `new RerunPipeline(...)` CDK app block: the ' +
        'deployed tier deploys them',
    );
  }
  const dir = join(root, '.rerun', 'readme-app');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'pipeline.mjs'), pipeline);
  writeFileSync(join(dir, 'worker.mjs'), worker);
  writeFileSync(join(dir, 'app.mjs'), app);
  const sources = (path: string) => join(root, path);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    `${JSON.stringify(
      {
        compilerOptions: {
          paths: {
            'rerun-pipeline': [sources('src/index.ts')],
            'rerun-pipeline/cdk': [sources('src/cdk/index.ts')],
            'rerun-pipeline/pipeline': [sources('src/pipeline/index.ts')],
          },
        },
      },
      null,
      2,
    )}\n`,
  );
  return { dir, stackName };
}
