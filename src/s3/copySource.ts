/**
 * A key as `x-amz-copy-source` carries it: URL-encoded, with `/` kept (CopyObject API reference:
 * "The value must be URL-encoded").
 */
export function encodeCopySourceKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}
