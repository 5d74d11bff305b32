import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  InventoryManifestError,
  inventoryListing,
  inventoryRow,
  parseInventoryManifest,
} from '../../app/reprocess/inventoryListing.js';
import type { ListedObject } from '../../app/reprocess/planReprocess.js';
import { compareS3Keys } from '../../app/reprocess/s3KeyOrder.js';

const COLUMNS = 'Bucket, Key, Size, LastModifiedDate, ETag, IsLatest, IsDeleteMarker';
/** One row as S3 Inventory writes CSV: every field quoted, the key URL-encoded. */
const row = (key: string, size: number, etag: string, extra: { latest?: boolean; deleteMarker?: boolean } = {}) =>
  [
    'in',
    encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/'),
    String(size),
    '2026-01-05T10:00:00.000Z',
    etag,
    String(extra.latest ?? true),
    String(extra.deleteMarker ?? false),
  ]
    .map((f) => `"${f.replace(/"/g, '""')}"`)
    .join(',');

/** An inventory in the documented layout: manifest.json naming gzip CSV data files with their MD5. */
function inventory(files: string[][], options: { corruptMd5?: boolean; format?: string } = {}) {
  const data = new Map<string, Buffer>();
  const entries = files.map((lines, i) => {
    const key = `inv/in/config/2026-01-06T00-00Z/files/part-${i}.csv.gz`;
    const bytes = gzipSync(`${lines.join('\n')}\n`);
    data.set(key, bytes);
    const md5 = createHash('md5').update(bytes).digest('hex');
    return { key, size: bytes.byteLength, MD5checksum: options.corruptMd5 ? md5.replace(/^./, '0') : md5 };
  });
  const manifest = JSON.stringify({
    sourceBucket: 'in',
    destinationBucket: 'arn:aws:s3:::inventory-bucket',
    version: '2016-11-30',
    creationTimestamp: '1767657600000',
    fileFormat: options.format ?? 'CSV',
    fileSchema: COLUMNS,
    files: entries,
  });
  const read = async (bucket: string, key: string) => {
    expect(bucket).toBe('inventory-bucket');
    return Readable.from([data.get(key) as Buffer]);
  };
  return { manifest, read };
}

const collect = async (iterable: AsyncIterable<ListedObject>) => {
  const out: ListedObject[] = [];
  for await (const o of iterable) out.push(o);
  return out;
};

describe('S3 Inventory as the planning input (--manifest)', () => {
  it('reads rows in the documented CSV format: quoted fields, URL-encoded keys, delete markers and old versions left out', () => {
    const columns = COLUMNS.split(', ');
    expect(inventoryRow(row('incoming/a b+c/café "x".csv', 12, '9b2c'), columns)).toEqual({
      key: 'incoming/a b+c/café "x".csv',
      size: 12,
      lastModified: Date.parse('2026-01-05T10:00:00.000Z'),
      etag: '9b2c',
    });
    expect(inventoryRow(row('incoming/gone.csv', 0, 'e', { deleteMarker: true }), columns)).toBeUndefined();
    expect(inventoryRow(row('incoming/old.csv', 1, 'e', { latest: false }), columns)).toBeUndefined();
  });

  it('yields the prefix in ListObjectsV2 order from unsorted data files, through an external merge sort', async () => {
    const keys = [
      'incoming/z.csv',
      'incoming/a.csv-2.csv',
      'incoming/\u{1F600}.csv',
      'incoming/a.csv',
      'incoming/\uFFFD.csv',
    ];
    const { manifest, read } = inventory([
      [row(keys[0] as string, 1, 'e0'), row('other/x.csv', 1, 'x'), row(keys[1] as string, 1, 'e1')],
      [row(keys[2] as string, 1, 'e2'), row(keys[3] as string, 1, 'e3'), row(keys[4] as string, 1, 'e4')],
    ]);
    const parsed = parseInventoryManifest(manifest);
    expect(parsed).toMatchObject({
      sourceBucket: 'in',
      destinationBucket: 'inventory-bucket',
      creationTimestamp: 1767657600000,
    });
    for (const runSize of [2, 1000]) {
      // runSize 2 spills three sorted runs to temporary files and merges them.
      const listed = await collect(inventoryListing({ manifest: parsed, read, prefix: 'incoming/', runSize }));
      expect(listed.map((o) => o.key)).toEqual([...keys].sort(compareS3Keys));
    }
  });

  it('refuses a data file whose MD5 differs from the manifest, and an inventory in another format', async () => {
    const bad = inventory([[row('incoming/a.csv', 1, 'e')]], { corruptMd5: true });
    await expect(
      collect(
        inventoryListing({ manifest: parseInventoryManifest(bad.manifest), read: bad.read, prefix: 'incoming/' }),
      ),
    ).rejects.toThrow(/does not match the MD5/);
    expect(() => parseInventoryManifest(inventory([], { format: 'Parquet' }).manifest)).toThrow(InventoryManifestError);
  });
});
