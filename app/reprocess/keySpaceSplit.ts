import { compareS3Keys } from './s3KeyOrder.js';

/** The highest code point: `p + MAX` sorts after every key that starts with `p` (but `p + MAX + ...`). */
export const MAX_CODE_POINT = '\u{10FFFF}';

/** Printable ASCII: where a character never seen is placed, and what a generated split point is made of. */
const LOWEST = 0x20;
const HIGHEST = 0x7e;
/** Positions and characters per position an alphabet remembers: its memory stays bounded whatever the keys. */
const MAX_POSITIONS = 256;
const MAX_SEEN = 256;
/** Where a fraction stops: past about 2^50 a double has no digits left. */
const RESOLUTION = 1e15;
/** The share of a digit below and above the characters seen at a position. */
const EDGE = 1 / 16;

/**
 * The characters seen at each position of the listed keys, so that a key can be read as a number
 * in mixed radix: at a position where only the digits 0-9 were seen, a key counts in tens, where
 * one character was seen it does not count at all. Key ranges are then measured and cut in the
 * middle of the keys they really hold, not of every string. A character never seen at a position
 * is placed between its seen neighbours (printable ASCII at the ends); split points are only ever
 * estimates, checked against the real key order before use.
 *
 * @example
 * const alphabet = new KeyAlphabet();
 * alphabet.observe('in/2026-01-01/000.csv');
 */
export class KeyAlphabet {
  private readonly seen: number[][] = [];

  observe(key: string): void {
    let j = 0;
    for (const ch of key) {
      if (j >= MAX_POSITIONS) return;
      this.seen[j] ??= [];
      const list = this.seen[j] as number[];
      const cp = ch.codePointAt(0) as number;
      const at = lowerBound(list, cp);
      if (list[at] !== cp && list.length < MAX_SEEN) {
        // A digit or letter stands for its whole class: the keys listed so far are the start of
        // the range, and '0'-'7' seen where '8' and '9' are still to come would make what is left
        // look smaller than it is (an underestimate reads a range one page at a time).
        list.splice(at, 0, cp);
        const [from, to] = classOf(cp);
        // Two of a class at one position make it a counting position: a leading zero alone does not.
        if (from !== to && list.filter((c) => c >= from && c <= to).length === 2) {
          for (let c = from; c <= to; c++) {
            const i = lowerBound(list, c);
            if (list[i] !== c) list.splice(i, 0, c);
          }
        }
      }
      j++;
    }
  }

  /**
   * How many digits position `j` counts: one per character seen there, and a sliver (EDGE) below
   * and above them for characters never seen. A position where every key has the same character
   * counts about 1, so it does not inflate how far apart two keys look.
   */
  base(j: number): number {
    const list = this.seen[j];
    return list && list.length > 0 ? list.length + 2 * EDGE : HIGHEST - LOWEST + 1;
  }

  /** The digit of code point `cp` at position `j`, in [0, base(j)]; monotone in `cp`. */
  digit(j: number, cp: number | undefined): number {
    if (cp === undefined) return 0; // a key that ends here sorts first
    const list = this.seen[j];
    if (!list || list.length === 0) return clamp(cp - LOWEST, 0, HIGHEST - LOWEST);
    const first = list[0] as number;
    const last = list[list.length - 1] as number;
    if (cp < first) return EDGE * clamp((cp - LOWEST) / Math.max(1, first - LOWEST), 0, 1);
    if (cp > last) return EDGE + list.length + EDGE * clamp((cp - last - 1) / Math.max(1, HIGHEST - last), 0, 1);
    // A seen character, or the boundary where an unseen one would go (seen ones take the whole digit).
    return EDGE + lowerBound(list, cp);
  }

  /** The code point at digit `d` of position `j` (the inverse of {@link digit}, rounded down). */
  codePoint(j: number, d: number): number {
    const list = this.seen[j];
    if (!list || list.length === 0) return LOWEST + clamp(Math.floor(d), 0, HIGHEST - LOWEST);
    const first = list[0] as number;
    const last = list[list.length - 1] as number;
    if (d < EDGE) return Math.floor(LOWEST + (d / EDGE) * Math.max(0, first - LOWEST));
    if (d < EDGE + list.length) return list[Math.floor(d - EDGE)] as number;
    return Math.min(HIGHEST, Math.floor(last + 1 + ((d - EDGE - list.length) / EDGE) * (HIGHEST - last)));
  }
}

/** The characters a seen one stands for: its digit or letter class, else itself. */
function classOf(cp: number): readonly [number, number] {
  if (cp >= 0x30 && cp <= 0x39) return [0x30, 0x39];
  if (cp >= 0x61 && cp <= 0x7a) return [0x61, 0x7a];
  if (cp >= 0x41 && cp <= 0x5a) return [0x41, 0x5a];
  return [cp, cp];
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

function lowerBound(list: readonly number[], cp: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as number) < cp) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A key read through an alphabet: its code points, and the digit of each. */
interface Digits {
  readonly points: readonly number[];
  readonly digits: readonly number[];
}

function digitsOf(alphabet: KeyAlphabet, key: string): Digits {
  const points = Array.from(key, (ch) => ch.codePointAt(0) as number);
  return { points, digits: points.map((cp, j) => alphabet.digit(j, cp)) };
}

function firstDifference(x: Digits, y: Digits): number {
  let k = 0;
  while ((k < x.digits.length || k < y.digits.length) && (x.digits[k] ?? 0) === (y.digits[k] ?? 0)) k++;
  return k;
}

/** The digits of `d` from position `k` as a fraction of position k's unit. */
function fraction(alphabet: KeyAlphabet, d: Digits, k: number): number {
  let v = 0;
  let scale = 1;
  for (let j = k; scale < RESOLUTION && j < k + 64; j++) {
    scale *= alphabet.base(j);
    v += (d.digits[j] ?? 0) / scale;
  }
  return v;
}

/** The natural log of `x - y` in the key space, or -Infinity when `x` is not above `y` there. */
function logGap(alphabet: KeyAlphabet, x: Digits, y: Digits): number {
  const k = firstDifference(x, y);
  const v = fraction(alphabet, x, k) - fraction(alphabet, y, k);
  if (!(v > 0)) return Number.NEGATIVE_INFINITY;
  let unit = 0;
  for (let j = 0; j < k; j++) unit += Math.log(alphabet.base(j));
  return Math.log(v) - unit;
}

/** What {@link planRangeSplit} knows of a key range `(after, hi]` under a listing prefix. */
export interface SplittableRange {
  /** The last key listed (or the StartAfter of the request in flight); undefined: from the prefix's start. */
  readonly after?: string | undefined;
  /** The last key the range may hold; undefined: up to the end of the prefix. */
  readonly hi?: string | undefined;
  /** The first key of the range's last page: with `after`, how wide a page of keys is. */
  readonly pageFirst?: string | undefined;
  /** A request for the range is in flight. */
  readonly fetching: boolean;
}

/** Where to split a range, and how many pages it was estimated to hold past `after`. */
export interface RangeSplit {
  /** The new boundary: the range keeps `(after, point]`, a new range gets `(point, hi]`. */
  readonly point: string;
  /** Pages left, estimated from the width of the last page; Infinity before any page was read. */
  readonly pages: number;
}

/**
 * A split point in the middle of a range's keys still to list, or undefined when the range is
 * estimated to hold fewer than `minPages` pages (from the width of its last page) or has no key
 * strictly between its bounds.
 *
 * @example
 * planRangeSplit(new KeyAlphabet(), { after: 'in/a', hi: 'in/z', fetching: false }, 'in/', 2)?.point; // about 'in/m'
 */
export function planRangeSplit(
  alphabet: KeyAlphabet,
  range: SplittableRange,
  prefix: string,
  minPages: number,
): RangeSplit | undefined {
  const lo = range.after ?? prefix;
  const hi = range.hi ?? prefix + MAX_CODE_POINT;
  const loDigits = digitsOf(alphabet, lo);
  const hiDigits = digitsOf(alphabet, hi);
  let pages = Number.POSITIVE_INFINITY;
  if (range.pageFirst !== undefined && range.after !== undefined) {
    const width = logGap(alphabet, loDigits, digitsOf(alphabet, range.pageFirst));
    pages = Math.exp(logGap(alphabet, hiDigits, loDigits) - width);
    if (!(pages >= minPages)) return undefined;
  }
  const point = midpoint(alphabet, loDigits, hiDigits);
  // Only a point strictly inside counts, whatever the estimate said.
  if (point === undefined || compareS3Keys(lo, point) >= 0 || compareS3Keys(point, hi) >= 0) return undefined;
  return { point, pages };
}

/** A key between `lo` and `hi`: `lo`'s own characters up to where the two differ, then the mean's. */
function midpoint(alphabet: KeyAlphabet, lo: Digits, hi: Digits): string | undefined {
  const k = firstDifference(lo, hi);
  let mean = (fraction(alphabet, lo, k) + fraction(alphabet, hi, k)) / 2;
  const points = lo.points.slice(0, k);
  while (points.length < k) points.push(LOWEST); // a shorter `lo` reads as padded with the lowest digit
  let scale = 1;
  for (let j = k; scale < RESOLUTION && j < k + 64; j++) {
    const base = alphabet.base(j);
    scale *= base;
    mean = Math.min(base - 1e-9, mean * base);
    const cp = alphabet.codePoint(j, mean);
    points.push(cp);
    // Go on from what this character really stands for, so the next digits correct the rounding.
    mean -= alphabet.digit(j, cp);
    if (mean <= 0) break;
  }
  if (points.length === k) return undefined;
  return String.fromCodePoint(...points);
}
