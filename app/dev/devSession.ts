import { type MotoServer, startMotoServer } from '../../local/emulator/motoServer.js';
import { LocalSetupError } from '../../local/errors.js';
import { ProvisionAction } from '../../local/provision.js';
import { startWebhookSink, type WebhookSink } from '../../local/sink/WebhookSink.js';
import { checkEndpoint } from '../../src/aws/endpointPreflight.js';
import { createLedgerTable } from '../../src/ledger/createLedgerTable.js';
import { createPipelineClients, type PipelineClients } from '../../src/ledger/pipelineClients.js';
import type { Logger } from '../../src/logging/logger.js';
import { provisionSummaryStage, type SummaryStageResources } from '../partition/provisionSummaryStage.js';
import { localResourceNames, type ResourceNames, type Topology, workerQueueNames } from '../topology.js';
import { type LocalStackResources, provisionLocalStack } from './provisionLocalStack.js';
import { uploadDirectory } from './uploadDirectory.js';

/** Options of {@link openDevSession}. */
export interface DevSessionOptions {
  /** @default undefined: start the embedded moto server */
  endpoint?: string | undefined;
  region: string;
  topology: Topology;
  /** The process environment the workers read: the session sets their variables in it. */
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Receives the setup lines meant for a person. */
  human: (text: string) => void;
}

/** What a `rerun dev` session runs on: its endpoint, resources and local webhook sink. */
export interface DevSession {
  readonly endpoint: string;
  readonly region: string;
  /** True when the session started (and will stop) the embedded emulator. */
  readonly embedded: boolean;
  readonly clients: PipelineClients;
  readonly topology: Topology;
  readonly names: ResourceNames;
  readonly stack: LocalStackResources;
  /** The summary stage: its FIFO queue and DLQ, as in the stack. */
  readonly summaryStage: SummaryStageResources;
  readonly summaryNames: ReturnType<typeof workerQueueNames>;
  /** The dedupe ledger table of the webhook side effect. */
  readonly ledgerTable: string;
  /** The local webhook sink the worker notifies. */
  readonly sink: WebhookSink;
  /** Stops the sink and the embedded emulator. */
  close(): Promise<void>;
}

/**
 * Opens a session: the endpoint (the embedded moto server unless one is given), the buckets, queues
 * and ledger table of the topology (idempotently), the local webhook sink, and the environment the
 * workers read. What it started is stopped again when it fails part way.
 *
 * @example
 * const session = await openDevSession({ region: 'us-east-1', topology, env: process.env, logger, human });
 * try { ... } finally { await session.close(); }
 */
export async function openDevSession(options: DevSessionOptions): Promise<DevSession> {
  const { human, env } = options;
  let moto: MotoServer | undefined;
  let sink: WebhookSink | undefined;
  const close = async () => {
    await sink?.stop();
    await moto?.stop();
  };
  try {
    let endpoint = options.endpoint;
    if (endpoint === undefined) {
      human('Starting the embedded AWS emulator (moto server)...\n');
      moto = await startMotoServer();
      endpoint = moto.endpoint;
      // The emulator accepts any credentials; set some only for it, never for a real endpoint.
      env.AWS_ACCESS_KEY_ID ||= 'test';
      env.AWS_SECRET_ACCESS_KEY ||= 'test';
    }
    // An endpoint of the user's: a wrong one fails here, in seconds, with what to change.
    if (!moto) await checkEndpoint(endpoint);
    const clients = createPipelineClients({ endpoint, region: options.region, logger: options.logger });
    await requireCredentials(clients, endpoint);
    const resources = await provisionResources(options, clients, endpoint, moto !== undefined);
    sink = await startWebhookSink();
    const session: DevSession = {
      endpoint,
      region: options.region,
      embedded: moto !== undefined,
      clients,
      topology: options.topology,
      ...resources,
      sink,
      close,
    };
    setWorkerEnvironment(session, env);
    return session;
  } catch (error) {
    await close();
    throw error;
  }
}

/** The buckets, queues and ledger table, each said as created, unchanged or sent. */
async function provisionResources(
  options: DevSessionOptions,
  clients: PipelineClients,
  endpoint: string,
  embedded: boolean,
): Promise<Pick<DevSession, 'names' | 'stack' | 'summaryStage' | 'summaryNames' | 'ledgerTable'>> {
  const { topology: t, human, logger } = options;
  const names = localResourceNames(t);
  const stack = await provisionLocalStack({ clients, names, topology: t, logger }).catch((error: unknown) => {
    if (embedded || !isConnectionError(error)) throw error;
    throw new LocalSetupError(
      `Nothing answers at AWS_ENDPOINT_URL=${endpoint}. Start that emulator, or unset AWS_ENDPOINT_URL ` +
        'to let rerun dev start its embedded one.',
      { cause: error },
    );
  });
  let sent = false;
  const provisioned = (actions: readonly { resource: string; action: ProvisionAction }[]) => {
    for (const { resource, action } of actions) {
      sent ||= action === ProvisionAction.SENT;
      human(`  ${action.padEnd(9)} ${resource}\n`);
    }
  };
  provisioned(stack.actions);
  const ledgerTable = `${t.appName}-${t.ledger.name}`;
  const ledger = await createLedgerTable({ client: clients.dynamodb, tableName: ledgerTable });
  human(`  ${(ledger.created ? 'created' : 'unchanged').padEnd(9)} table ${ledgerTable}\n`);
  const summaryNames = workerQueueNames(t.appName, t.summarize);
  const summaryStage = await provisionSummaryStage({ clients, names: summaryNames, topology: t });
  provisioned(summaryStage.actions);
  if (sent) human('  (sent: this endpoint does not report it back, so it is sent at every start)\n');
  return { names, stack, summaryStage, summaryNames, ledgerTable };
}

/** The handler builds its clients at module scope from these, as in Lambda: they are set before it loads. */
function setWorkerEnvironment(session: DevSession, env: NodeJS.ProcessEnv): void {
  env.OUTPUT_BUCKET = session.stack.outputBucket;
  env.INPUT_BUCKETS = session.stack.inputBucket;
  env.AWS_ENDPOINT_URL = session.endpoint;
  env.AWS_REGION = session.region;
  env.LEDGER_TABLE = session.ledgerTable;
  env.NOTIFY_URL = `${session.sink.url}/notify`;
  env.CODE_VERSION_PREFIX = session.topology.codeVersionPrefix;
  // The table shows every record's outcome; the handler's own info logs would repeat it line by line.
  env.LOG_LEVEL ||= 'warn';
}

function isConnectionError(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: string }).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ECONNRESET') return true;
  }
  return false;
}

/** Resolves the client's credentials once, so that having none is said at once, with the fix. */
async function requireCredentials(clients: PipelineClients, endpoint: string): Promise<void> {
  try {
    await clients.s3.config.credentials();
  } catch (error) {
    throw new LocalSetupError(
      `No AWS credentials to talk to ${endpoint}. An emulator accepts any: ` +
        'export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test (rerun dev sets them only for its embedded emulator).',
      { cause: error },
    );
  }
}

/**
 * Uploads every file of `directory` under the session's input prefix (the `--demo` samples); files
 * already there from an earlier run are not sent again.
 *
 * @example
 * const { uploaded, alreadyUploaded } = await uploadDemo(session, 'examples');
 */
export async function uploadDemo(
  session: DevSession,
  directory: string,
): Promise<{ uploaded: number; alreadyUploaded: number }> {
  const result = await uploadDirectory({
    s3: session.clients.s3,
    bucket: session.stack.inputBucket,
    directory,
    prefix: session.topology.inputPrefix,
  });
  return { uploaded: result.uploaded.length, alreadyUploaded: result.alreadyPresent.length };
}
