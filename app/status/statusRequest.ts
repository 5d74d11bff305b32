/** What `rerun status` was asked, from its options: the command turns them into this. */
export interface StatusRequest {
  /** `--from`: the first window, in the stage's grain (a day for rerun's daily summaries). */
  readonly from?: string | undefined;
  /** `--to`: the last window, in the same form. */
  readonly to?: string | undefined;
  /** `--prefix` as given (empty: the stage's input prefix): an object stage's inputs to judge. */
  readonly prefix?: string | undefined;
  /** `--verify`: the done-check (one HEAD) of every output of an object stage that looks current. */
  readonly verify: boolean;
  /** Not `--no-validate`: a HEAD verifies each published window output. */
  readonly validate: boolean;
  /** `--json`: errors are reported as JSON too. */
  readonly json: boolean;
}
