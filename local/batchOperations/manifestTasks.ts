import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { RerunError } from '../../src/errors.js';
import { parseInventoryManifest } from '../../src/intake/inventoryManifest.js';
import { boundedLines, boundedText } from '../../src/intake/manifestLines.js';
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
  const rows: ManifestRow[] = [];
  const lines = boundedLines(await readBody(s3, manifest.bucket, manifest.key), {
    file: `s3://${manifest.bucket}/${manifest.key}`,
  });
  let n = 0;
  for await (const line of lines) {
    n++;
    const row = manifestCsvRow(line, n);
    if (row) rows.push(row);
  }
  return rows;
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
    const row = manifestCsvRow(line, n + 1);
    if (row) rows.push(row);
  }
  return rows;
}

/** One line of a CSV manifest as a row; undefined for a blank line. */
function manifestCsvRow(line: string, n: number): ManifestRow | undefined {
  if (line.trim() === '') return undefined;
  const fields = splitCsvLine(line);
  const [bucket, key, versionId] = fields;
  if (!bucket || !key || fields.length > 3) {
    throw new LocalSetupError(`manifest line ${n} is not "bucket,key[,versionId]": ${JSON.stringify(line)}`);
  }
  return { bucket, key, ...(versionId ? { versionId } : {}) };
}

/** The rows of an S3 Inventory report: Bucket and Key (URL-encoded already), VersionId when listed. */
async function inventoryTasks(s3: S3Client, bucket: string, key: string): Promise<ManifestRow[]> {
  let manifest: ReturnType<typeof parseInventoryManifest>;
  try {
    const text = await boundedText(await readBody(s3, bucket, key), { file: `s3://${bucket}/${key}` });
    manifest = parseInventoryManifest(text, ['Bucket', 'Key']);
  } catch (error) {
    if (RerunError.isRerunError(error) && error.name === 'ManifestTooLargeError') throw error;
    throw new LocalSetupError(`s3://${bucket}/${key}: ${(error as Error).message}`);
  }
  const column = (name: string) => manifest.columns.indexOf(name);
  const rows: ManifestRow[] = [];
  for (const file of manifest.files) {
    // Streamed, lines bounded: a data file of a few hundred KB of gzip can expand to one line of
    // 600 MiB, which a whole-file gunzip held at once (1.3 GB) before failing as a bug.
    const body = await readBody(s3, manifest.destinationBucket, file.key);
    const md5 = createHash('md5');
    body.on('data', (chunk: Buffer) => md5.update(chunk));
    const lines = boundedLines(body.pipe(createGunzip()), { file: `s3://${manifest.destinationBucket}/${file.key}` });
    for await (const line of lines) {
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
    if (file.md5 && md5.digest('hex') !== file.md5) {
      throw new LocalSetupError(
        `inventory data file s3://${manifest.destinationBucket}/${file.key} does not match its MD5 in the manifest`,
      );
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

/** The body of an object as a Node stream (the SDK's body in Node.js is one). */
async function readBody(s3: S3Client, bucket: string, key: string): Promise<Readable> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (out.Body as Readable | undefined) ?? Readable.from([]);
}
