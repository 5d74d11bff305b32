import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { parseInventoryManifest } from '../../src/intake/inventoryManifest.js';
import { encodeManifestKey } from '../../src/intake/parseBatchOperationsEvent.js';
import { splitCsvLine } from '../../src/intake/splitCsvLine.js';
import { LocalSetupError } from '../errors.js';

/** One task of a job: a manifest row. */
export interface ManifestRow {
  readonly bucket: string;
  /** URL-encoded, as written in the manifest. */
  readonly key: string;
  readonly versionId?: string;
}

/**
 * Where a local job's tasks come from, as CreateJob names them: a manifest object (a
 * `S3BatchOperations_CSV_20180820` CSV, or a `S3InventoryReport_CSV_20161130` report's
 * manifest.json), or the manifest generator's filters over a bucket.
 */
export type LocalJobManifest =
  | {
      readonly bucket: string;
      readonly key: string;
      /** @default 'S3BatchOperations_CSV_20180820' */
      readonly format?: 'S3BatchOperations_CSV_20180820' | 'S3InventoryReport_CSV_20161130';
    }
  | {
      readonly generator: {
        readonly sourceBucket: string;
        /** Only keys under this prefix (KeyNameConstraint.MatchAnyPrefix). */
        readonly prefix?: string;
        /** Only objects created after this instant (Filter.CreatedAfter). */
        readonly createdAfter?: Date | undefined;
        /** Only objects created before this instant (Filter.CreatedBefore). */
        readonly createdBefore?: Date | undefined;
      };
    };

/**
 * The tasks of a job, in manifest order: the CSV's rows, the inventory's rows (every data file the
 * manifest.json lists, gzip CSV, each checked against its MD5), or, for the generator, the objects
 * of the source bucket that pass its filters (listed here, as S3 lists them for a generated
 * manifest: S3 API Reference, JobManifestGeneratorFilter; "created" is LastModified, the creation
 * time of an object's current version).
 *
 * @example
 * const rows = await readManifestTasks(s3, { generator: { sourceBucket: 'in', prefix: 'incoming/' } });
 */
export async function readManifestTasks(s3: S3Client, manifest: LocalJobManifest): Promise<ManifestRow[]> {
  if ('generator' in manifest) return generatedTasks(s3, manifest.generator);
  if (manifest.format === 'S3InventoryReport_CSV_20161130') return inventoryTasks(s3, manifest.bucket, manifest.key);
  return parseManifestCsv(await readText(s3, manifest.bucket, manifest.key));
}

/**
 * Reads an `S3BatchOperations_CSV_20180820` manifest: `bucket,key` or `bucket,key,versionId` per
 * line (S3 User Guide, "Specifying a manifest"; keys URL-encoded). Blank lines are skipped.
 *
 * @example
 * parseManifestCsv('in,incoming/a%20b.csv\n'); // [{ bucket: 'in', key: 'incoming/a%20b.csv' }]
 */
export function parseManifestCsv(text: string): ManifestRow[] {
  const rows: ManifestRow[] = [];
  for (const [n, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === '') continue;
    const fields = splitCsvLine(line);
    const [bucket, key, versionId] = fields;
    if (!bucket || !key || fields.length > 3) {
      throw new LocalSetupError(`manifest line ${n + 1} is not "bucket,key[,versionId]": ${JSON.stringify(line)}`);
    }
    rows.push({ bucket, key, ...(versionId ? { versionId } : {}) });
  }
  return rows;
}

/** The rows of an S3 Inventory report: Bucket and Key (URL-encoded already), VersionId when listed. */
async function inventoryTasks(s3: S3Client, bucket: string, key: string): Promise<ManifestRow[]> {
  let manifest: ReturnType<typeof parseInventoryManifest>;
  try {
    manifest = parseInventoryManifest(await readText(s3, bucket, key), ['Bucket', 'Key']);
  } catch (error) {
    throw new LocalSetupError(`s3://${bucket}/${key}: ${(error as Error).message}`);
  }
  const column = (name: string) => manifest.columns.indexOf(name);
  const rows: ManifestRow[] = [];
  for (const file of manifest.files) {
    const out = await s3.send(new GetObjectCommand({ Bucket: manifest.destinationBucket, Key: file.key }));
    const bytes = Buffer.from((await out.Body?.transformToByteArray()) ?? new Uint8Array());
    if (file.md5 && createHash('md5').update(bytes).digest('hex') !== file.md5) {
      throw new LocalSetupError(
        `inventory data file s3://${manifest.destinationBucket}/${file.key} does not match its MD5 in the manifest`,
      );
    }
    for (const line of gunzipSync(bytes).toString('utf8').split(/\r?\n/)) {
      if (line === '') continue;
      const fields = splitCsvLine(line);
      // A delete marker or a noncurrent version is no object to run (S3 runs them by version id).
      if (fields[column('IsDeleteMarker')] === 'true') continue;
      const versionId = column('VersionId') >= 0 ? fields[column('VersionId')] : undefined;
      rows.push({
        bucket: fields[column('Bucket')] ?? '',
        key: fields[column('Key')] ?? '',
        ...(versionId ? { versionId } : {}),
      });
    }
  }
  return rows;
}

/** The objects of the source bucket that pass the generator's filters, in key order. */
async function generatedTasks(
  s3: S3Client,
  generator: Extract<LocalJobManifest, { generator: unknown }>['generator'],
): Promise<ManifestRow[]> {
  const after = generator.createdAfter?.getTime();
  const before = generator.createdBefore?.getTime();
  const rows: ManifestRow[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: generator.sourceBucket,
        ...(generator.prefix ? { Prefix: generator.prefix } : {}),
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const object of page.Contents ?? []) {
      const created = object.LastModified?.getTime() ?? 0;
      if (!object.Key || (after !== undefined && created <= after) || (before !== undefined && created >= before)) {
        continue;
      }
      rows.push({ bucket: generator.sourceBucket, key: encodeManifestKey(object.Key) });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return rows;
}

async function readText(s3: S3Client, bucket: string, key: string): Promise<string> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await out.Body?.transformToString('utf8')) ?? '';
}
