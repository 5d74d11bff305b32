/**
 * Reads `s3://bucket/key-or-prefix` into its parts; undefined for anything else.
 *
 * @example
 * parseS3Uri('s3://rerun-output/normalized/'); // { bucket: 'rerun-output', key: 'normalized/' }
 * parseS3Uri('s3://rerun-output'); // { bucket: 'rerun-output', key: '' }
 */
export function parseS3Uri(uri: string): { bucket: string; key: string } | undefined {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/s.exec(uri);
  return match?.[1] ? { bucket: match[1], key: match[2] ?? '' } : undefined;
}
