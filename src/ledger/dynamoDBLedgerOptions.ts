import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Logger } from '../logging/logger.js';
import type { OptionNames } from '../options/checkOptions.js';

/** Options of {@link DynamoDBLedger}. Unknown fields are rejected. */
export interface DynamoDBLedgerOptions {
  /** The DynamoDB client (injected so tests and callers control endpoint, retries and middleware). */
  client: DynamoDBClient;
  /** The ledger table: partition key `pk` (string), TTL on `ttl` (see {@link createLedgerTable}). */
  tableName: string;
  /**
   * Clock, epoch milliseconds. Leases and TTLs are compared in condition expressions against this.
   * @default Date.now
   */
  now?: () => number;
  /**
   * Generates the lease-holder token written by each claim (must be unique per claim).
   * @default crypto.randomUUID
   */
  owner?: () => string;
  /**
   * Lease when a call gives no `remainingTimeMs`.
   * @default 60_000 (DEFAULT_LEASE_MS)
   */
  leaseMs?: number;
  /**
   * Added to a call's `remainingTimeMs` to form its lease.
   * @default 5_000 (DEFAULT_LEASE_MARGIN_MS)
   */
  leaseMarginMs?: number;
  /**
   * How long records are kept and replayed (the `ttl` attribute), seconds.
   * @default 2_592_000, 30 days (DEFAULT_TTL_SECONDS)
   */
  ttlSeconds?: number;
  /**
   * Largest stored result, in UTF-8 bytes of JSON; at most 307,200 (MAX_RESULT_BYTES_LIMIT).
   * @default 32_768 (DEFAULT_MAX_RESULT_BYTES)
   */
  maxResultBytes?: number;
  /** @default silentLogger */
  logger?: Logger;
}

/** The names of {@link DynamoDBLedgerOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const DYNAMODB_LEDGER_OPTION_NAMES = {
  client: true,
  tableName: true,
  now: true,
  owner: true,
  leaseMs: true,
  leaseMarginMs: true,
  ttlSeconds: true,
  maxResultBytes: true,
  logger: true,
} as const satisfies OptionNames<DynamoDBLedgerOptions>;
