import type { CliCommand } from '../common/command.js';

/** One entry of the command map: its line of `rerun --help`, and its module, imported only when it runs. */
export interface CommandEntry {
  /** The command's `summary` (test/unit/cliCommandMap.test.ts checks they agree). */
  readonly summary: string;
  readonly load: () => Promise<{ readonly command: CliCommand }>;
}

/**
 * Every `rerun` command: its name, its summary and how to load it. A command's module (and the SDK
 * clients it imports) is loaded only when that command runs, so `rerun --help` and `rerun --version`
 * load none. Adding a command is one file, `app/cli/commands/<name>.ts` exporting `command`, and one
 * line here.
 *
 * @example
 * const { command } = await COMMANDS.status.load();
 */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  backfill: {
    summary:
      "Rerun the windows of a window stage (rerun's daily summaries or yours): plan, enqueue what is needed, optionally wait.",
    load: () => import('./commands/backfill.js'),
  },
  cat: {
    summary:
      'Print the object s3://bucket/key from the endpoint in use (AWS_ENDPOINT_URL, a running rerun dev, or AWS).',
    load: () => import('./commands/cat.js'),
  },
  dev: {
    summary:
      'Run the pipeline locally: emulator, buckets and queues, and the worker under a Lambda-faithful SQS runner.',
    load: () => import('./commands/dev.js'),
  },
  ls: {
    summary:
      'List the objects under s3://bucket/prefix at the endpoint in use (AWS_ENDPOINT_URL, a running rerun dev, or AWS).',
    load: () => import('./commands/ls.js'),
  },
  redrive: {
    summary: 'Show the DLQ messages with the reason each last failed, then move them back to their source queue.',
    load: () => import('./commands/redrive.js'),
  },
  reprocess: {
    summary: 'Rerun the main stage over a prefix: enqueue what is missing or stale',
    load: () => import('./commands/reprocess.js'),
  },
  status: {
    summary:
      "Show each window of a window stage (published, missing, stale, invalid or incomplete), or an object stage's inputs (current or to do).",
    load: () => import('./commands/status.js'),
  },
  ui: {
    summary: 'Open a local, read-only web console: days, dead letters, live outcomes and queues, outputs.',
    load: () => import('./commands/ui.js'),
  },
};
