import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { RerunError } from '../../src/errors.js';
import {
  type InventoryManifest,
  PLANNING_INVENTORY_COLUMNS,
  parseInventoryManifest as parseManifestText,
} from '../../src/intake/inventoryManifest.js';
import { boundedLines } from '../../src/intake/manifestLines.js';
import { decodeS3EventKey } from '../../src/intake/parseS3Event.js';
import { splitCsvLine } from '../../src/intake/splitCsvLine.js';
import type { ListedObject } from './planReprocess.js';
import { compareS3Keys } from './s3KeyOrder.js';

export type { InventoryManifest };

/** An S3 Inventory manifest that cannot be used: what is wrong with it and what to do. */
export class InventoryManifestError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'InventoryManifestError';
  }
}

/**
 * Reads and checks a manifest (src/intake/inventoryManifest.ts): CSV format, and the columns
 * planning needs. Pure.
 *
 * @example
 * parseInventoryManifest(text).files.map((f) => f.key);
 */
export function parseInventoryManifest(text: string): InventoryManifest {
  try {
    return parseManifestText(text, PLANNING_INVENTORY_COLUMNS);
  } catch (error) {
    if (RerunError.isRerunError(error)) throw new InventoryManifestError(error.message);
    throw error;
  }
}

/**
 * One CSV line of an inventory data file as a listed object, or undefined for a row that is not a
 * current object (a delete marker, a noncurrent version). Every field is quoted; the key is
 * URL-encoded (S3 User Guide, "Inventory list": "the key name is URL-encoded and must be decoded"),
 * decoded here as event keys are (`+` is a space). Pure.
 *
 * @example
 * inventoryRow('"in","incoming/a+b.csv","12","2026-01-05T10:00:00.000Z","9b2c"', ['Bucket', 'Key', 'Size', 'LastModifiedDate', 'ETag']);
 * // { key: 'incoming/a b.csv', size: 12, lastModified: 1767607200000, etag: '9b2c' }
 */
export function inventoryRow(line: string, columns: readonly string[]): ListedObject | undefined {
  const fields = splitCsvLine(line);
  const field = (name: string) => fields[columns.indexOf(name)] ?? '';
  if (field('IsDeleteMarker') === 'true' || field('IsLatest') === 'false') return undefined;
  return {
    key: decodeS3EventKey(field('Key')),
    size: Number(field('Size') || 0),
    lastModified: Date.parse(field('LastModifiedDate')) || 0,
    etag: field('ETag').replace(/"/g, ''),
  };
}

/** Opens one inventory data file (gzip CSV) from S3 as a stream (checked against the manifest's MD5). */
export type InventoryFileReader = (bucket: string, key: string) => Promise<Readable>;

/** Options of {@link inventoryListing}. */
export interface InventoryListingOptions {
  readonly manifest: InventoryManifest;
  readonly read: InventoryFileReader;
  /** Only keys under this prefix. */
  readonly prefix: string;
  /** Rows sorted in memory at once before spilling a sorted run to a temporary file. @default 200000 */
  readonly runSize?: number;
}

/**
 * The objects of an inventory under a prefix, in ListObjectsV2 order, so the same merge-join plans
 * from it as from listings (`--manifest`). S3 Inventory does not promise any order across its data
 * files, so rows are sorted by an external merge sort: runs of `runSize` rows are sorted in memory
 * and written to temporary files, then merged; memory stays bounded by `runSize` whatever the count.
 *
 * @example
 * for await (const o of inventoryListing({ manifest, read, prefix: 'incoming/' })) console.log(o.key);
 */
export async function* inventoryListing(options: InventoryListingOptions): AsyncGenerator<ListedObject> {
  const runSize = options.runSize ?? 200_000;
  const dir = await mkdtemp(join(tmpdir(), 'rerun-inventory-'));
  const runs: string[] = [];
  try {
    let rows: ListedObject[] = [];
    const spill = async () => {
      rows.sort((a, b) => compareS3Keys(a.key, b.key));
      const path = join(dir, `run-${runs.length}.ndjson`);
      await writeFile(path, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
      runs.push(path);
      rows = [];
    };
    for (const file of options.manifest.files) {
      // Streamed: a data file is never held whole; its MD5 is computed as it passes.
      const body = await options.read(options.manifest.destinationBucket, file.key);
      const md5 = createHash('md5');
      body.on('data', (chunk: Buffer) => md5.update(chunk));
      // Bounded lines: a small gzip can expand to one line of hundreds of MiB (manifestLines.ts).
      const lines = boundedLines(body.pipe(createGunzip()), {
        file: `s3://${options.manifest.destinationBucket}/${file.key}`,
      });
      for await (const line of lines) {
        if (line === '') continue;
        const row = inventoryRow(line, options.manifest.columns);
        if (!row?.key.startsWith(options.prefix)) continue;
        rows.push(row);
        if (rows.length >= runSize) await spill();
      }
      if (file.md5 && md5.digest('hex') !== file.md5) {
        throw new InventoryManifestError(
          `inventory data file s3://${options.manifest.destinationBucket}/${file.key} does not match the MD5 in its ` +
            'manifest (truncated or replaced): use a complete inventory.',
        );
      }
    }
    if (runs.length === 0) {
      rows.sort((a, b) => compareS3Keys(a.key, b.key));
      yield* rows;
      return;
    }
    if (rows.length > 0) await spill();
    yield* mergeRuns(runs);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** k-way merge of sorted NDJSON runs (k is small: the count divided by the run size). */
async function* mergeRuns(paths: readonly string[]): AsyncGenerator<ListedObject> {
  const readers = paths.map((path) =>
    createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY })[Symbol.asyncIterator](),
  );
  const heads: (ListedObject | undefined)[] = await Promise.all(readers.map(nextRow));
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i];
      if (head && (best < 0 || compareS3Keys(head.key, (heads[best] as ListedObject).key) < 0)) best = i;
    }
    if (best < 0) return;
    yield heads[best] as ListedObject;
    heads[best] = await nextRow(readers[best] as AsyncIterator<string>);
  }
}

async function nextRow(reader: AsyncIterator<string>): Promise<ListedObject | undefined> {
  for (;;) {
    const step = await reader.next();
    if (step.done) return undefined;
    if (step.value !== '') return JSON.parse(step.value) as ListedObject;
  }
}
