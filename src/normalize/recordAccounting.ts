/**
 * Where each physical record of an input ended up. Bad input never disappears: every record the
 * readers delimit is counted in exactly one place, and the counts are stored with the output (S3
 * metadata `rerun-x-*`) and printed in the outcome line, so "0 records, 0 quarantined" can only mean
 * an input with nothing in it.
 */

/** The one place a physical record is counted. */
export const RecordDisposition = {
  /** Written to the output as one NDJSON line. */
  OUTPUT: 'records',
  /** Written to the quarantine with its line number and reason (a rejected rest of the file counts once). */
  QUARANTINED: 'quarantined',
  /** The CSV header record. */
  HEADER: 'header',
  /** A record of nothing but whitespace (an empty line). */
  BLANK: 'blank',
} as const;
export type RecordDisposition = (typeof RecordDisposition)[keyof typeof RecordDisposition];

/** The counts of one input, by disposition. */
export type RecordCounts = { -readonly [K in RecordDisposition]: number };

/**
 * Counts records by disposition. The normalizer calls `count` once per record; `total` is what the
 * counts must add up to: the records the reader delimited (plus one for a rejected rest of the file).
 *
 * @example
 * const accounting = new RecordAccounting();
 * accounting.count(RecordDisposition.HEADER);
 * accounting.count(RecordDisposition.OUTPUT);
 * accounting.counts; // { records: 1, quarantined: 0, header: 1, blank: 0 }
 * accounting.total;  // 2
 */
export class RecordAccounting {
  // Plain fields, not a map keyed by disposition: count() runs once per record, on the hot path.
  private records = 0;
  private quarantined = 0;
  private header = 0;
  private blank = 0;

  count(disposition: RecordDisposition, n = 1): void {
    switch (disposition) {
      case RecordDisposition.OUTPUT:
        this.records += n;
        break;
      case RecordDisposition.QUARANTINED:
        this.quarantined += n;
        break;
      case RecordDisposition.HEADER:
        this.header += n;
        break;
      case RecordDisposition.BLANK:
        this.blank += n;
        break;
    }
  }

  /** A copy of the counts. */
  get counts(): RecordCounts {
    return { records: this.records, quarantined: this.quarantined, header: this.header, blank: this.blank };
  }

  /** Every record counted, whatever its disposition. */
  get total(): number {
    return this.records + this.quarantined + this.header + this.blank;
  }
}
