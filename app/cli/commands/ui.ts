import { type CliCommand, CliUsageError, integerOption } from '../../common/command.js';
import { stageOptions } from '../../common/pipelineStage.js';
import { isLoopbackAddress } from '../../ui/listenAddress.js';

/**
 * `rerun ui`: the operator's console in a browser. The module stays cheap to import (the command
 * map loads every command's help): the server and the SDK load only when it runs.
 */
export const command: CliCommand = {
  name: 'ui',
  summary: 'Open a local, read-only web console: days, dead letters, live outcomes and queues, outputs.',
  usage: 'rerun ui [--stack NAME] [--from DAY --to DAY] [--port N] [options]',
  options: {
    stack: {
      type: 'string',
      valueName: 'NAME',
      description: 'A deployed stack: buckets and queues from its CloudFormation outputs',
    },
    'app-name': {
      type: 'string',
      valueName: 'NAME',
      description: 'App name: finds the running rerun dev of that name (default: $RERUN_APP_NAME or rerun)',
    },
    'input-bucket': { type: 'string', valueName: 'BUCKET', description: 'Input bucket (default: as rerun status)' },
    'output-bucket': { type: 'string', valueName: 'BUCKET', description: 'Output bucket (default: as rerun status)' },
    from: {
      type: 'string',
      valueName: 'DAY',
      description: 'First day the days view opens on, with --to (default: 13 days before the last)',
    },
    to: {
      type: 'string',
      valueName: 'DAY',
      description:
        'Last day, with --from (default: today, UTC, or the last day with inputs when the 14 days up to today have none)',
    },
    'metrics-namespace': {
      type: 'string',
      valueName: 'NAME',
      description: "A deployed stack's outcome metrics namespace, emfOutcomeMetrics({ namespace }) (default: rerun)",
    },
    port: { type: 'string', valueName: 'N', description: 'Port to listen on (default: a free one)' },
    ...stageOptions,
    host: {
      type: 'string',
      valueName: 'ADDRESS',
      description:
        'Address to listen on (default: 127.0.0.1, this machine only); an address other machines reach needs --insecure-plain-http',
    },
    'insecure-plain-http': {
      type: 'boolean',
      description:
        'Allow a --host other machines reach: the console speaks plain HTTP, so its token and every answer travel unencrypted',
    },
  },
  details: `What it shows, from the same functions as the CLI: each day's status as rerun status computes it
(click a day for its inputs, each classified, with the reason of each failure, and an input for its
output's metadata and first lines); each dead letter as its failure record tells it, the DLQ's counts, and
the exact command to move them back; the queues' depths; every outcome as it
happens (a running rerun dev's, or a deployed stack's from its log groups, with throughput and queue
ages from CloudWatch metrics); and the runs of rerun reprocess and rerun backfill on this machine,
with their progress.

On a user's pipeline (--pipeline, a --stack's description, a rerun dev --pipeline), the days are the
windows of its daily window stage (or of the one --stage names, of any time grain: its hours, weeks or
months), judged as rerun status --stage judges them, each listing its inputs by the stage's own keys;
with no window stage, each day's inputs are counted and not judged. The queues and dead letters of
every window stage are shown beside the object stage's, by stage name.

Target: a running rerun dev of the app name (found through the session file it writes in the temporary
directory), else as rerun status: --stack, the options, RERUN_* variables, AWS_ENDPOINT_URL.

It changes nothing: its SDK clients refuse every command but reads, and it never receives a message
(a receive would raise its receive count). When the rerun dev it reads stops, the page keeps what it
showed, says so, and reads the next rerun dev of the same app once one runs.

stdout: URL <the address with its token>. Anyone with the token can read what the console shows. The
page takes the token out of the address bar and sends it in a header, never in a cookie (a cookie
would reach every other server on this host). It listens on this machine only unless --host names
another address, which needs --insecure-plain-http: the console has no TLS.

Examples:
  npm start            # in one terminal
  npx rerun ui         # in another: open the printed URL
  rerun ui --stack rerun --from 2026-01-01 --to 2026-01-31`,
  async run({ values }, io) {
    const port = integerOption(values, 'port', { min: 0, max: 65_535 }) ?? 0;
    const host = typeof values.host === 'string' ? values.host : '127.0.0.1';
    const exposed = !isLoopbackAddress(host);
    if (exposed && values['insecure-plain-http'] !== true) {
      throw new CliUsageError(
        `--host ${host} lets other machines connect, and the console speaks plain HTTP: its token and everything it shows would travel unencrypted. ` +
          'Keep the default (127.0.0.1) and reach it through an SSH tunnel, or add --insecure-plain-http to accept that.',
      );
    }
    if ((values.from === undefined) !== (values.to === undefined)) {
      throw new CliUsageError('--from and --to go together (YYYY-MM-DD).');
    }
    const { runConsole } = await import('../../ui/runConsole.js');
    return runConsole({ values, io, port, host, exposed });
  },
};
