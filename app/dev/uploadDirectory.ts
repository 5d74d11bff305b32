import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/** Options of {@link uploadDirectory}. */
export interface UploadDirectoryOptions {
  s3: S3Client;
  bucket: string;
  /** Local directory whose files are uploaded, recursively. */
  directory: string;
  /** Key prefix, e.g. `incoming/`; keys keep the files' relative paths (with `/`). */
  prefix: string;
  /**
   * Files to leave out, by relative path (with `/`).
   * @default skips dot-files and a top-level README.md (it describes the samples; it is not one)
   */
  exclude?: (relativePath: string) => boolean;
}

/** What {@link uploadDirectory} did. */
export interface UploadDirectoryResult {
  /** Keys written now. */
  readonly uploaded: string[];
  /** Keys that already existed (left untouched). */
  readonly alreadyPresent: string[];
}

/** Files up to this size are uploaded from memory; larger ones stream. */
const IN_MEMORY_BYTES = 16 * 1024 * 1024;

const CONTENT_TYPES: Record<string, string> = {
  '.csv': 'text/csv',
  '.ndjson': 'application/x-ndjson',
  '.jsonl': 'application/x-ndjson',
  '.json': 'application/json',
  '.txt': 'text/plain',
};

/**
 * Uploads every file of a directory under a prefix, create-only (`If-None-Match: *`): a key that
 * already exists answers 412 and is left as it is, so running the demo twice uploads nothing twice
 * and triggers no second S3 event for the same content.
 *
 * @example
 * await uploadDirectory({ s3, bucket: 'rerun-input', directory: 'examples', prefix: 'incoming/' });
 */
export async function uploadDirectory(options: UploadDirectoryOptions): Promise<UploadDirectoryResult> {
  const exclude = options.exclude ?? defaultExclude;
  const files = (await listFiles(options.directory)).filter((rel) => !exclude(rel));
  const uploaded: string[] = [];
  const alreadyPresent: string[] = [];
  for (const rel of files) {
    const key = `${options.prefix}${rel}`;
    const path = join(options.directory, ...rel.split('/'));
    const { size } = await stat(path);
    try {
      await options.s3.send(
        new PutObjectCommand({
          Bucket: options.bucket,
          Key: key,
          // Small files as bytes: a body the SDK can resend, so the expected 412 of a file that is
          // already there raises no "non-retryable streaming request" warning.
          Body: size <= IN_MEMORY_BYTES ? await readFile(path) : createReadStream(path),
          ContentLength: size,
          ContentType: CONTENT_TYPES[extname(rel).toLowerCase()] ?? 'application/octet-stream',
          IfNoneMatch: '*',
        }),
      );
      uploaded.push(key);
    } catch (error) {
      // 412 PreconditionFailed: the key exists (S3 conditional writes, If-None-Match).
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 412) {
        alreadyPresent.push(key);
      } else {
        throw error;
      }
    }
  }
  return { uploaded, alreadyPresent };
}

function defaultExclude(rel: string): boolean {
  return rel === 'README.md' || rel.split('/').some((part) => part.startsWith('.'));
}

/** Relative paths (with `/`) of every regular file under `directory`, sorted for a stable order. */
async function listFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(directory, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}
