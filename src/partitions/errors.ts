import { RerunError } from '../errors.js';

/**
 * A partition key template that cannot be used: an unknown field, a field twice, or fields that
 * cannot say which window of the grain a key belongs to. Caught when a scheme is built (at synth and
 * when a tool starts), never mid-batch. Not retryable.
 *
 * @example
 * throw new PartitionTemplateInvalidError('dt={yyyy}-{MM}', 'daily', 'it has no {dd} field');
 */
export class PartitionTemplateInvalidError extends RerunError {
  /** The template as written. */
  readonly template: string;
  constructor(template: string, grain: string, problem: string) {
    super(
      `The partition template "${template}" (${grain}) cannot be used: ${problem}. ` +
        'Its fields are {yyyy}, {MM}, {dd}, {HH} and {ww} (an ISO week, with {yyyy} its week-year), each once; ' +
        "fix the template in the stage's partition scheme.",
      { retryable: false },
    );
    this.name = 'PartitionTemplateInvalidError';
    this.template = template;
  }
}

/**
 * A static partition list that cannot be used (empty, a name twice, a name holding `/`). Not retryable.
 *
 * @example
 * throw new PartitionKeysInvalidError('the name "eu" appears twice');
 */
export class PartitionKeysInvalidError extends RerunError {
  constructor(problem: string) {
    super(`The static partition list cannot be used: ${problem}. Fix the stage's partition scheme.`, {
      retryable: false,
    });
    this.name = 'PartitionKeysInvalidError';
  }
}

/**
 * A window name that is not a window of the scheme (`2026-02-30` daily, `2026-W54`, `2026-12` where a
 * day is expected). Not retryable: the name is wrong.
 *
 * @example
 * throw new WindowNameInvalidError('2026-02-30', 'daily', 'YYYY-MM-DD, a calendar day');
 */
export class WindowNameInvalidError extends RerunError {
  /** The name as given. */
  readonly windowName: string;
  constructor(windowName: string, scheme: string, expected: string) {
    super(`"${windowName}" is not a ${scheme} window: expected ${expected}.`, { retryable: false });
    this.name = 'WindowNameInvalidError';
    this.windowName = windowName;
  }
}

/**
 * A range of windows that ends before it starts. Not retryable.
 *
 * @example
 * throw new WindowRangeReversedError('2026-12-05', '2026-12-01');
 */
export class WindowRangeReversedError extends RerunError {
  constructor(from: string, to: string) {
    super(`The range ends (${to}) before it starts (${from}): swap --from and --to.`, { retryable: false });
    this.name = 'WindowRangeReversedError';
  }
}

/**
 * A range of more windows than one request may plan (a typo in a year must not plan a century of
 * hours). Not retryable: split the range.
 *
 * @example
 * throw new WindowRangeTooLargeError('2016-01-01', '2026-01-01', 'daily', 3654, 3660);
 */
export class WindowRangeTooLargeError extends RerunError {
  /** How many windows the range holds. */
  readonly count: number;
  /** The most one range may hold. */
  readonly limit: number;
  constructor(from: string, to: string, grain: string, count: number, limit: number) {
    super(
      `The range ${from}..${to} holds ${count} ${grain} windows; at most ${limit} at once: split it into smaller ranges.`,
      { retryable: false },
    );
    this.name = 'WindowRangeTooLargeError';
    this.count = count;
    this.limit = limit;
  }
}

/**
 * Two schemes whose windows cannot be mapped onto each other (a static list onto time windows, or
 * every window of an unbounded time scheme onto one unpartitioned window). Not retryable.
 *
 * @example
 * throw new WindowMappingUnsupportedError('static', 'time');
 */
export class WindowMappingUnsupportedError extends RerunError {
  constructor(upstream: string, downstream: string) {
    super(
      `A ${downstream} window cannot depend on the windows of a ${upstream} scheme: rerun maps time windows onto ` +
        'time windows, static names onto the same names, and anything onto an unpartitioned upstream. ' +
        "Change one stage's partition scheme.",
      { retryable: false },
    );
    this.name = 'WindowMappingUnsupportedError';
  }
}
