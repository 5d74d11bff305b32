import { describe, expect, it } from 'vitest';
import { entryFunctionProps, WORKER_BUNDLING } from '../../src/cdk/workerBundling.js';
import { splitBundleCommand } from '../../src/cdk/workerEsbuildOptions.js';

describe("entryFunctionProps: the split build after NodejsFunction's own", () => {
  it('adds an afterBundling hook that builds the entry again, split, into the asset folder', () => {
    const hooks = entryFunctionProps({ entry: '/project/worker.ts', tsconfig: '/project/tsconfig.json' }).bundling
      ?.commandHooks;
    const commands = hooks?.afterBundling('/project', '/asset-output') ?? [];
    expect(commands).toEqual([
      splitBundleCommand(WORKER_BUNDLING, {
        entry: '/project/worker.ts',
        outdir: '/asset-output',
        cwd: '/project',
        tsconfig: '/project/tsconfig.json',
      }),
    ]);
    expect(hooks?.beforeBundling('/project', '/asset-output')).toEqual([]);
    expect(hooks?.beforeInstall('/project', '/asset-output')).toEqual([]);
  });

  it("keeps NodejsFunction's one file when the caller brings bundling settings of its own (they are not translated)", () => {
    const bundling = entryFunctionProps({ entry: '/project/worker.ts' }, { externalModules: ['pg-native'] }).bundling;
    expect(bundling?.commandHooks).toBeUndefined();
    expect(bundling?.externalModules).toEqual(['pg-native']);
  });

  it("passes the options as one shell word each, the banner's quotes included", () => {
    const command = splitBundleCommand(WORKER_BUNDLING, { entry: '/p/w.ts', outdir: '/o', cwd: '/p' });
    const json = command.slice(command.lastIndexOf(" '{") + 2, -1).replaceAll("'\\''", "'");
    const options = JSON.parse(json) as { splitting: boolean; outdir: string; banner: { js: string } };
    expect(options.splitting).toBe(true);
    expect(options.outdir).toBe('/o');
    expect(options.banner.js).toBe(WORKER_BUNDLING.banner);
  });
});
