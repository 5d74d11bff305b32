import { afterEach, describe, expect, it, vi } from 'vitest';
import { type DecodeReport, decodeInput } from '../../src/normalize/decodeInput.js';

async function decodeAll(chunks: Uint8Array[]): Promise<string> {
  const report: DecodeReport = { encoding: '' };
  let text = '';
  for await (const piece of decodeInput(chunks, report)) text += piece;
  return text;
}

describe('decodeInput: ASCII chunks bypass the UTF-8 decoder until the first other chunk', () => {
  afterEach(() => vi.restoreAllMocks());

  it('an all-ASCII input is never passed through TextDecoder', async () => {
    const decode = vi.spyOn(TextDecoder.prototype, 'decode');
    const rows = Array.from({ length: 2000 }, (_, i) => `${i},name ${i},${i * 3}\n`).join('');
    const bytes = Buffer.from(`id,name,amount\n${rows}`);
    const chunks = [bytes.subarray(0, 9000), bytes.subarray(9000, 20_000), bytes.subarray(20_000)];
    expect(await decodeAll(chunks)).toBe(bytes.toString('utf8'));
    expect(decode).not.toHaveBeenCalled();
  });

  it('from the first non-ASCII chunk on, the decoder takes every chunk: split and invalid sequences decode as before', async () => {
    const decode = vi.spyOn(TextDecoder.prototype, 'decode');
    const ascii = Buffer.from(`id,name\n${'1,plain\n'.repeat(2000)}`);
    // "é" split across two chunks, then an ASCII chunk, an invalid byte, and a lone lead byte at the end.
    const e = Buffer.from('é');
    const rest = [
      Buffer.concat([Buffer.from('2,caf'), e.subarray(0, 1)]),
      Buffer.concat([e.subarray(1), Buffer.from('\n')]),
      Buffer.from('3,ascii again\n'),
      Buffer.from([0x34, 0x2c, 0xff, 0x0a, 0xe2]),
    ];
    const all = Buffer.concat([ascii, ...rest]);
    const expected = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(all);
    decode.mockClear();
    expect(await decodeAll([ascii.subarray(0, 10_000), ascii.subarray(10_000), ...rest])).toBe(expected);
    // Four chunks from the first non-ASCII one, plus the final flush.
    expect(decode).toHaveBeenCalledTimes(rest.length + 1);
  });
});
