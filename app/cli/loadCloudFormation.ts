import { RerunError } from '../../src/errors.js';

/** The SDK package `--stack` reads a stack's outputs with: an optional peer dependency of rerun-pipeline. */
export const CLOUDFORMATION_PACKAGE = '@aws-sdk/client-cloudformation';

/** `--stack` was given, and `@aws-sdk/client-cloudformation` (an optional peer) is not installed. */
export class OptionalPackageMissingError extends RerunError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OptionalPackageMissingError';
  }
}

/**
 * The CloudFormation client module, imported on first use: only `--stack` needs it, so it is an
 * optional peer dependency and every other command starts without it. A missing package fails with
 * an error that names it and the command that installs it.
 *
 * @example
 * const { CloudFormationClient, DescribeStacksCommand } = await loadCloudFormation();
 */
export async function loadCloudFormation(
  load: () => Promise<typeof import('@aws-sdk/client-cloudformation')> = () => import('@aws-sdk/client-cloudformation'),
): Promise<typeof import('@aws-sdk/client-cloudformation')> {
  try {
    return await load();
  } catch (error) {
    const e = error as { code?: string; message?: string };
    if (e?.code === 'ERR_MODULE_NOT_FOUND' && (e.message ?? '').includes(CLOUDFORMATION_PACKAGE)) {
      throw new OptionalPackageMissingError(
        `--stack reads the stack's outputs with ${CLOUDFORMATION_PACKAGE}, which is not installed: ` +
          `npm install ${CLOUDFORMATION_PACKAGE} (or name the resources with --input-bucket, --output-bucket and RERUN_* variables).`,
        { cause: error },
      );
    }
    throw error;
  }
}
