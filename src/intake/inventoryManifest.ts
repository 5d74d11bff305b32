import { RerunError } from '../errors.js';

/**
 * The parts of an S3 Inventory `manifest.json` planning reads (Amazon S3 User Guide, "Inventory
 * manifest": `sourceBucket`, `destinationBucket` as an ARN, `fileFormat`, `fileSchema` naming the
 * CSV columns in order, and `files` with each data file's key, size and MD5 checksum).
 */
export interface InventoryManifest {
  readonly sourceBucket: string;
  /** Bucket name of the data files (from the `arn:aws:s3:::name` ARN). */
  readonly destinationBucket: string;
  /** Epoch milliseconds when the inventory began scanning: objects changed after it are not in it. */
  readonly creationTimestamp: number;
  readonly columns: readonly string[];
  readonly files: readonly { readonly key: string; readonly md5: string }[];
}

/** The columns planning reads from an inventory (`--manifest` of the SQS engine). */
export const PLANNING_INVENTORY_COLUMNS = ['Key', 'Size', 'LastModifiedDate', 'ETag'] as const;

/**
 * Reads and checks a manifest: CSV format, and the `required` columns (by default those planning
 * needs; a Batch Operations job needs only Bucket and Key). Pure.
 *
 * @example
 * const manifest = parseInventoryManifest(text);
 * manifest.files.map((f) => f.key);
 */
export function parseInventoryManifest(
  text: string,
  required: readonly string[] = PLANNING_INVENTORY_COLUMNS,
): InventoryManifest {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw unusable('the inventory manifest is not JSON: pass the manifest.json of an S3 Inventory.');
  }
  if (raw.fileFormat !== 'CSV') {
    throw unusable(
      `the inventory's fileFormat is ${JSON.stringify(raw.fileFormat)}: only CSV inventories are read. ` +
        'Configure the inventory with the CSV output format.',
    );
  }
  const columns = String(raw.fileSchema ?? '')
    .split(',')
    .map((c) => c.trim());
  const missing = required.filter((c) => !columns.includes(c));
  if (missing.length > 0) {
    throw unusable(
      `the inventory has no ${missing.join(', ')} column(s) (fileSchema ${JSON.stringify(raw.fileSchema)}): ` +
        `add ${missing.join(', ')} to the inventory configuration.`,
    );
  }
  const destination = String(raw.destinationBucket ?? '').replace(/^arn:aws[a-z-]*:s3:::/, '');
  const files = Array.isArray(raw.files) ? raw.files : [];
  return {
    sourceBucket: String(raw.sourceBucket ?? ''),
    destinationBucket: destination,
    creationTimestamp: Number(raw.creationTimestamp ?? 0),
    columns,
    files: files.map((f: { key?: unknown; MD5checksum?: unknown }) => ({
      key: String(f.key ?? ''),
      md5: String(f.MD5checksum ?? ''),
    })),
  };
}

/** What is wrong with a manifest and what to do: not retryable (app/ names it InventoryManifestError). */
function unusable(message: string): RerunError {
  return new RerunError(message, { retryable: false });
}
