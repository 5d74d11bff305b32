import { fileURLToPath } from 'node:url';

/**
 * Absolute path of the project root (package.json, package-lock.json, tsconfig.json), found from
 * this file's location so `cdk synth` and the tests bundle the same files from any working directory.
 *
 * @example
 * join(projectRoot, 'functions/normalize/handler.ts');
 */
export const projectRoot: string = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
