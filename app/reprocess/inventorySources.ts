import type { Readable } from 'node:stream';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { boundedText } from '../../src/intake/manifestLines.js';
import { CliUsageError } from '../common/command.js';
import type { PipelineTarget } from '../common/pipelineTarget.js';
import { InventoryManifestError, inventoryListing, parseInventoryManifest } from './inventoryListing.js';
import type { OutputKeyMapping } from './outputKeyMapping.js';
import type { ListedObject } from './planReprocess.js';

/**
 * `--manifest` / `--output-manifest`: the inputs (and outputs) from S3 Inventory reports instead
 * of ListObjectsV2. Each manifest must describe the bucket it stands for.
 */
export async function inventoryListings(
  target: PipelineTarget,
  inventories: { readonly manifest?: string | undefined; readonly outputManifest?: string | undefined },
  prefix: string,
  mapping: OutputKeyMapping,
  note: (text: string) => void,
): Promise<{ inputs?: () => AsyncIterable<ListedObject>; outputs?: () => AsyncIterable<ListedObject> } | undefined> {
  const s3 = target.clients.s3;
  const open = async (option: string, url: string | undefined, bucket: string, keyPrefix: string) => {
    if (!url) return undefined;
    const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
    if (!match)
      throw new CliUsageError(`--${option} must be an s3://bucket/key URL of a manifest.json (got "${url}").`);
    const [, manifestBucket, manifestKey] = match as unknown as [string, string, string];
    const out = await s3.send(new GetObjectCommand({ Bucket: manifestBucket, Key: manifestKey }));
    // Bounded: a manifest.json lists data files; an object of any size at that URL is not held whole.
    const manifest = parseInventoryManifest(await boundedText(out.Body as AsyncIterable<Uint8Array>, { file: url }));
    if (manifest.sourceBucket !== bucket) {
      throw new InventoryManifestError(
        `--${option} ${url} is an inventory of ${manifest.sourceBucket}, not of ${bucket}: pass that bucket's inventory.`,
      );
    }
    note(
      `${option}: inventory of ${bucket} from ${new Date(manifest.creationTimestamp).toISOString()} ` +
        `(${manifest.files.length} data file(s)); objects changed since are not in it.\n`,
    );
    return () =>
      inventoryListing({
        manifest,
        prefix: keyPrefix,
        read: async (b, k) => (await s3.send(new GetObjectCommand({ Bucket: b, Key: k }))).Body as Readable,
      });
  };
  const inputs = await open('manifest', inventories.manifest, target.inputBucket, prefix);
  const outputs = await open(
    'output-manifest',
    inventories.outputManifest,
    target.outputBucket,
    `${mapping.outputRoot}${prefix.slice(mapping.inputPrefix.length)}`,
  );
  if (!inputs && !outputs) return undefined;
  return { ...(inputs ? { inputs } : {}), ...(outputs ? { outputs } : {}) };
}
