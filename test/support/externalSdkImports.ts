/** The SDK's optional SigV4a implementations, loaded only for a SigV4a request. */
const OPTIONAL_SIGV4A = new Set(['@aws-sdk/signature-v4-crt', '@aws-sdk/signature-v4a']);

/**
 * The `@aws-sdk/*` modules a bundle would load from outside itself: static `import ... from`,
 * dynamic `import()` and `require()`. Two exceptions, by name: the SDK's two optional SigV4a
 * implementations, `@aws-sdk/signature-v4-crt` (a `require` inside a try block) and
 * `@aws-sdk/signature-v4a` (named in an error message), which only multi-region access points need;
 * the SDK reports them missing only when a SigV4a request is made.
 *
 * @example
 * externalSdkImports('import{S3Client}from"@aws-sdk/client-s3";'); // ['@aws-sdk/client-s3']
 */
export function externalSdkImports(bundle: string): string[] {
  const patterns = [
    /\bfrom\s*["'](@aws-sdk\/[^"']+)["']/g,
    /\bimport\s*\(\s*["'](@aws-sdk\/[^"']+)["']\s*\)/g,
    /\bimport\s*["'](@aws-sdk\/[^"']+)["']/g,
    /\brequire\s*\(\s*["'](@aws-sdk\/[^"']+)["']\s*\)/g,
  ];
  const found = patterns.flatMap((pattern) => [...bundle.matchAll(pattern)].map((m) => m[1] as string));
  return [...new Set(found)].filter((name) => !OPTIONAL_SIGV4A.has(name));
}
