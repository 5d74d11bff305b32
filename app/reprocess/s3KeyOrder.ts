/**
 * Compares two S3 keys in the order ListObjectsV2 returns them: UTF-8 binary order (Amazon S3
 * User Guide, "Listing object keys": keys are returned in UTF-8 binary order). JavaScript's `<`
 * compares UTF-16 code units, which disagrees for characters above U+FFFF against U+E000..U+FFFF;
 * code point order is exactly UTF-8 byte order, and needs no allocation.
 *
 * @example
 * compareS3Keys('a/\u{1F600}', 'a/\uFFFD') > 0; // true (UTF-8: F0.. > EF..), though '\u{1F600}' < '\uFFFD' in JS
 */
export function compareS3Keys(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.codePointAt(i) as number;
    const cb = b.codePointAt(j) as number;
    if (ca !== cb) return ca < cb ? -1 : 1;
    i += ca > 0xffff ? 2 : 1;
    j += cb > 0xffff ? 2 : 1;
  }
  const restA = a.length - i;
  const restB = b.length - j;
  return restA === restB ? 0 : restA < restB ? -1 : 1;
}
