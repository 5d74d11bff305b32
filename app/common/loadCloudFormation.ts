import { RerunError } from '../../src/errors.js';

/** The SDK package `--stack` reads a stack's outputs with: an optional peer dependency of rerun-pipeline. */
export const CLOUDFORMATION_PACKAGE = '@aws-sdk/client-cloudformation';

/**
 * A command needs an optional peer dependency that is not installed: `@aws-sdk/client-cloudformation`
 * for `--stack`, `@aws-sdk/client-dynamodb` for `rerun dev` (its ledger), `@aws-sdk/client-s3-control`
 * for a Batch Operations job.
 */
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
    if (missingPackageOf(error) === CLOUDFORMATION_PACKAGE) {
      throw new OptionalPackageMissingError(
        `--stack reads the stack's outputs with ${CLOUDFORMATION_PACKAGE}, which is not installed: ` +
          `npm install ${CLOUDFORMATION_PACKAGE} (or name the resources with --input-bucket, --output-bucket and RERUN_* variables).`,
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * The package a failed import could not find (`@aws-sdk/client-dynamodb`, from Node's
 * ERR_MODULE_NOT_FOUND "Cannot find package '...'"), or undefined for any other failure (a missing
 * file of a package that is there is not a missing package).
 *
 * @example
 * missingPackageOf(await import('left-pad').catch((e) => e)); // 'left-pad' when it is not installed
 */
export function missingPackageOf(error: unknown): string | undefined {
  const e = error as { code?: string; message?: string } | undefined;
  if (e?.code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  return /Cannot find package '((?:@[^/']+\/)?[^/']+)'/.exec(e.message ?? '')?.[1];
}
