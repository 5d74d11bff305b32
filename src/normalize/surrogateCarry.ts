/**
 * Keeps a chunk's trailing high surrogate back until the next chunk, so a surrogate pair split by the
 * caller's chunking is seen whole. Without it the halves would be measured separately (each lone half
 * counts as 3 UTF-8 bytes, the pair as 4), and the record size limit would depend on chunk boundaries,
 * breaking "same input, same output". Bytes decoded by TextDecoder never split a pair; string input can.
 *
 * @example
 * const carry = new SurrogateCarry();
 * carry.take('ab\ud83d'); // 'ab'
 * carry.take('\ude00c');  // '😀c'
 * carry.flush();          // '' (nothing held)
 */
export class SurrogateCarry {
  private held = '';

  /** Returns `text` with any held surrogate in front, minus a trailing high surrogate (now held). */
  take(text: string): string {
    let whole = this.held === '' ? text : this.held + text;
    this.held = '';
    const last = whole.charCodeAt(whole.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.held = whole.slice(-1);
      whole = whole.slice(0, -1);
    }
    return whole;
  }

  /** At end of input: returns the held high surrogate (a genuinely lone one), or ''. */
  flush(): string {
    const held = this.held;
    this.held = '';
    return held;
  }
}
