/**
 * The dedupe ledger (`import ... from 'rerun-pipeline/ledger'`): runs a side effect effectively once per
 * dedupe key with DynamoDB conditional writes (see src/ledger/README.md), and its errors.
 *
 * @example
 * import { DynamoDBLedger } from 'rerun-pipeline/ledger';
 * const ledger = new DynamoDBLedger({ client: new DynamoDBClient({}), tableName: 'rerun-ledger' });
 * const { status } = await ledger.once('order-42', { orderId: 42 }, ({ dedupeKey }) => send(dedupeKey));
 */

export { createDynamoDBClient } from './createDynamoDBClient.js';
export {
  type CreateLedgerTableOptions,
  type CreateLedgerTableResult,
  createLedgerTable,
} from './createLedgerTable.js';
export { DynamoDBLedger } from './DynamoDBLedger.js';
export type { DynamoDBLedgerOptions } from './dynamoDBLedgerOptions.js';
export {
  LedgerConfigurationError,
  LedgerInProgressError,
  LedgerLeaseLostError,
  LedgerPayloadMismatchError,
  LedgerRecordCorruptError,
  LedgerResultUnstorableError,
  LedgerStoredFailureError,
  LedgerWriteStage,
  type StoredFailure,
} from './errors.js';
export { type EffectContext, type Ledger, type OnceOptions, type OnceResult, OnceStatus } from './Ledger.js';
export { canonicalJson, hashPayload } from './payloadHash.js';
