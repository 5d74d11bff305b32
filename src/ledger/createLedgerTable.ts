import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { RerunError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { LedgerConfigurationError } from './errors.js';
import { LedgerAttribute } from './ledgerRecord.js';

/** Options of {@link createLedgerTable}. */
export interface CreateLedgerTableOptions {
  client: DynamoDBClient;
  tableName: string;
  /**
   * How long to wait for the table to become ACTIVE (real DynamoDB takes seconds; emulators none).
   * @default 120_000
   */
  activeTimeoutMs?: number;
}

/** The names of {@link CreateLedgerTableOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const CREATE_LEDGER_TABLE_OPTION_NAMES = {
  activeTimeoutMs: true,
  client: true,
  tableName: true,
} as const satisfies OptionNames<CreateLedgerTableOptions>;

/** What {@link createLedgerTable} did. */
export interface CreateLedgerTableResult {
  /** False when the table already existed. */
  readonly created: boolean;
  /** False when TTL was already enabled on the `ttl` attribute. */
  readonly ttlEnabled: boolean;
}

/**
 * Creates the ledger table if it does not exist (on-demand, partition key `pk` string) and enables TTL
 * on `ttl`. Idempotent: safe to call on every `rerun dev` start and from every test.
 *
 * TTL only ages records out (deletion is lazy, typically within days); the ledger never relies on it
 * for correctness, its conditions compare the timestamps themselves.
 *
 * @example
 * await createLedgerTable({ client: clients.dynamodb, tableName: 'rerun-ledger' });
 */
export async function createLedgerTable(options: CreateLedgerTableOptions): Promise<CreateLedgerTableResult> {
  checkOptions('createLedgerTable', options, CREATE_LEDGER_TABLE_OPTION_NAMES, (m) => new LedgerConfigurationError(m));
  const { client, tableName } = options;
  let created = true;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: LedgerAttribute.KEY, KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: LedgerAttribute.KEY, AttributeType: 'S' }],
      }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ResourceInUseException')) throw error;
    created = false;
  }
  await waitUntilActive(client, tableName, options.activeTimeoutMs ?? 120_000);

  // UpdateTimeToLive fails with a ValidationException when TTL is already enabled (real DynamoDB),
  // so look first; a table with TTL on another attribute is a misconfiguration worth failing on.
  const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  const status = ttl.TimeToLiveDescription?.TimeToLiveStatus;
  const attribute = ttl.TimeToLiveDescription?.AttributeName;
  if ((status === 'ENABLED' || status === 'ENABLING') && attribute !== undefined) {
    if (attribute !== LedgerAttribute.TTL) {
      throw new LedgerConfigurationError(
        `Ledger table ${tableName} has TTL on "${attribute}", not "${LedgerAttribute.TTL}": records would never age out. ` +
          'Disable TTL on the table (UpdateTimeToLive Enabled=false) and run again.',
      );
    }
    return { created, ttlEnabled: false };
  }
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { Enabled: true, AttributeName: LedgerAttribute.TTL },
    }),
  );
  return { created, ttlEnabled: true };
}

async function waitUntilActive(client: DynamoDBClient, tableName: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() > deadline) {
      throw new RerunError(`Ledger table ${tableName} is still ${Table?.TableStatus} after ${timeoutMs} ms.`);
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
