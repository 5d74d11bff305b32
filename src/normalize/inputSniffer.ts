/**
 * What the first bytes of an input say it is. The key's extension is only a claim: an upload named
 * `.csv` may be gzip, a zip archive, UTF-16 from Excel or a Parquet file, and decoding any of those as
 * UTF-8 text produces records of garbage that would be reported as success.
 */

/** The kinds of content the sniffer tells apart. */
export const ContentKind = {
  /** Text in one of {@link TextEncoding}; `bomBytes` leading bytes are a byte order mark, to skip. */
  TEXT: 'text',
  /** A gzip stream (magic bytes `1f 8b`): decompress, then sniff what it holds. */
  GZIP: 'gzip',
  /** Not text: rejected as a whole file with `reason`. */
  BINARY: 'binary',
} as const;
export type ContentKind = (typeof ContentKind)[keyof typeof ContentKind];

/** Text encodings the normalizer decodes (UTF-16 only with its byte order mark). */
export const TextEncoding = { UTF8: 'utf-8', UTF16LE: 'utf-16le', UTF16BE: 'utf-16be' } as const;
export type TextEncoding = (typeof TextEncoding)[keyof typeof TextEncoding];

export type SniffResult =
  | { readonly kind: typeof ContentKind.TEXT; readonly encoding: TextEncoding; readonly bomBytes: number }
  | { readonly kind: typeof ContentKind.GZIP }
  | { readonly kind: typeof ContentKind.BINARY; readonly reason: string };

/**
 * How many leading bytes {@link sniffContent} wants before it decides (fewer only at end of input).
 * A NUL byte within them marks binary content: UTF-8 text never holds one in practice, and every
 * binary format this project has seen uploaded (spreadsheets, columnar files, images) has one early.
 */
export const SNIFF_BYTES = 8 * 1024;

/** Signatures of binary formats that people upload where text belongs, each with a reason that names it. */
const MAGIC_NUMBERS: readonly { readonly bytes: readonly number[]; readonly offset?: number; readonly name: string }[] =
  [
    { bytes: [0x00, 0x00, 0xfe, 0xff], name: 'UTF-32 BE text (only UTF-8 and UTF-16 with a BOM are decoded)' },
    { bytes: [0xff, 0xfe, 0x00, 0x00], name: 'UTF-32 LE text (only UTF-8 and UTF-16 with a BOM are decoded)' },
    { bytes: [0x50, 0x4b, 0x03, 0x04], name: 'zip archive (also .xlsx, .docx, .jar)' },
    { bytes: [0x50, 0x4b, 0x05, 0x06], name: 'zip archive (empty)' },
    { bytes: [0x50, 0x4b, 0x07, 0x08], name: 'zip archive (spanned)' },
    { bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], name: 'OLE2 compound file (e.g. a legacy .xls)' },
    { bytes: [0x42, 0x5a, 0x68], name: 'bzip2 compressed data (only gzip is decompressed)' },
    { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], name: 'xz compressed data (only gzip is decompressed)' },
    { bytes: [0x28, 0xb5, 0x2f, 0xfd], name: 'zstd compressed data (only gzip is decompressed)' },
    { bytes: [0x04, 0x22, 0x4d, 0x18], name: 'lz4 compressed data (only gzip is decompressed)' },
    { bytes: [0x1f, 0x9d], name: 'Unix compress data (only gzip is decompressed)' },
    { bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], name: '7z archive' },
    { bytes: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07], name: 'RAR archive' },
    { bytes: [0x75, 0x73, 0x74, 0x61, 0x72], offset: 257, name: 'tar archive' },
    { bytes: [0x4f, 0x62, 0x6a, 0x01], name: 'Avro object container file' },
    {
      bytes: [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65, 0x20, 0x66, 0x6f, 0x72, 0x6d, 0x61, 0x74, 0x20, 0x33, 0x00],
      name: 'SQLite database',
    },
    { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], name: 'PDF document' },
    { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], name: 'PNG image' },
    { bytes: [0xff, 0xd8, 0xff], name: 'JPEG image' },
    { bytes: [0x47, 0x49, 0x46, 0x38], name: 'GIF image' },
    { bytes: [0x7f, 0x45, 0x4c, 0x46], name: 'ELF executable' },
  ];

/**
 * Decides what an input is from its first bytes (pass at least {@link SNIFF_BYTES} of them, or the
 * whole input when it is shorter). Pure and deterministic: the same bytes give the same answer.
 *
 * - `1f 8b` is gzip, whatever the key says.
 * - A UTF-8 BOM, or a UTF-16 LE/BE BOM, selects that encoding; no BOM means UTF-8.
 * - Known binary signatures (zip, Parquet `PAR1`, OLE2, other compressors, images...) and a NUL byte
 *   in UTF-8 content are binary, with a reason naming what was found.
 *
 * @example
 * sniffContent(Uint8Array.of(0x1f, 0x8b, 8));            // { kind: 'gzip' }
 * sniffContent(Uint8Array.of(0xff, 0xfe, 0x61, 0x00));   // { kind: 'text', encoding: 'utf-16le', bomBytes: 2 }
 * sniffContent(new TextEncoder().encode('PK\x03\x04..')); // { kind: 'binary', reason: 'binary content: zip archive ...' }
 */
export function sniffContent(head: Uint8Array): SniffResult {
  if (head[0] === 0x1f && head[1] === 0x8b) return { kind: ContentKind.GZIP };
  for (const magic of MAGIC_NUMBERS) {
    if (startsWith(head, magic.bytes, magic.offset ?? 0)) return binary(magic.name);
  }
  // Parquet starts with `PAR1`, printable text: a CSV header could too, so require the page header's
  // binary byte after it, which every Parquet file has and a text file does not.
  if (startsWith(head, [0x50, 0x41, 0x52, 0x31], 0) && head.length > 4 && isBinaryByte(head[4] ?? 0x20)) {
    return binary('Parquet file');
  }
  if (head[0] === 0xff && head[1] === 0xfe)
    return { kind: ContentKind.TEXT, encoding: TextEncoding.UTF16LE, bomBytes: 2 };
  if (head[0] === 0xfe && head[1] === 0xff)
    return { kind: ContentKind.TEXT, encoding: TextEncoding.UTF16BE, bomBytes: 2 };
  const bomBytes = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  const nul = head.subarray(0, SNIFF_BYTES).indexOf(0);
  if (nul !== -1) {
    return binary(
      `NUL byte at offset ${nul} (UTF-16 without a byte order mark, or not text; save it as UTF-8 or UTF-16 with a BOM)`,
    );
  }
  return { kind: ContentKind.TEXT, encoding: TextEncoding.UTF8, bomBytes };
}

function binary(what: string): SniffResult {
  return { kind: ContentKind.BINARY, reason: `binary content: ${what}` };
}

function startsWith(head: Uint8Array, bytes: readonly number[], offset: number): boolean {
  if (head.length < offset + bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (head[offset + i] !== bytes[i]) return false;
  return true;
}

/** A control byte that text files do not contain (tab, LF, CR, FF excepted). */
function isBinaryByte(byte: number): boolean {
  return byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c;
}
