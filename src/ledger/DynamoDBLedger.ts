import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { type Logger, silentLogger } from '../logging/logger.js';
import { withFields } from '../logging/withFields.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import {
  LedgerConfigurationError,
  LedgerInProgressError,
  LedgerLeaseLostError,
  LedgerPayloadMismatchError,
  LedgerResultUnstorableError,
  LedgerStoredFailureError,
  LedgerWriteStage,
  type StoredFailure,
} from './errors.js';
import {
  type EffectContext,
  type Ledger,
  ONCE_OPTION_NAMES,
  type OnceOptions,
  type OnceResult,
  OnceStatus,
} from './Ledger.js';
import {
  ClaimDecisionKind,
  decideLostClaim,
  decideLostHolderWrite,
  HolderWriteDecisionKind,
} from './ledgerDecision.js';
import {
  LedgerAttribute as A,
  DEFAULT_LEASE_MARGIN_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_TTL_SECONDS,
  isTerminalError,
  type LedgerRecord,
  LedgerStatus,
  leaseDurationMs,
  MAX_RESULT_BYTES_LIMIT,
  parseLedgerRecord,
  toStoredFailure,
  ttlEpochSeconds,
} from './ledgerRecord.js';
import { hashPayload } from './payloadHash.js';

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

/** Claims re-tried when the item changes between a lost condition and its decision (rare races). */
const MAX_CLAIM_TRIES = 3;
/** DynamoDB limits a partition key value to 2048 bytes. */
const MAX_KEY_BYTES = 2048;
/** A released lease: any `now` is past it, so the next claim succeeds at once. */
const RELEASED_LEASE = 0;

/**
 * The dedupe ledger on DynamoDB: one item per dedupe key, conditional writes only.
 *
 * Cost: a first execution is two writes (the claim UpdateItem and the completing UpdateItem); a replay
 * of a finished key is one conditional write that fails and returns the item (`ALL_OLD`), with no read.
 *
 * @example
 * const ledger = new DynamoDBLedger({ client: new DynamoDBClient({}), tableName: 'rerun-ledger' });
 * const { status } = await ledger.once(key, body, ({ dedupeKey }) => notifyWebhook({ url, body, dedupeKey }), {
 *   remainingTimeMs: context.getRemainingTimeInMillis(),
 * });
 */
export class DynamoDBLedger implements Ledger {
  readonly tableName: string;
  private readonly client: DynamoDBClient;
  private readonly now: () => number;
  private readonly newOwner: () => string;
  private readonly leaseMs: number;
  private readonly leaseMarginMs: number;
  private readonly ttlSeconds: number;
  private readonly maxResultBytes: number;
  private readonly logger: Logger;

  constructor(options: DynamoDBLedgerOptions) {
    checkOptions('DynamoDBLedger', options, DYNAMODB_LEDGER_OPTION_NAMES, (m) => new LedgerConfigurationError(m));
    if (!options.client) throw new LedgerConfigurationError('DynamoDBLedger needs a DynamoDB client.');
    if (!options.tableName) {
      // Usually `tableName: process.env.LEDGER_TABLE` in a worker deployed without a ledger: refuse at
      // start rather than run the side effects without their dedupe.
      throw new LedgerConfigurationError(
        'DynamoDBLedger needs a tableName (LEDGER_TABLE is empty or unset?). RerunPipeline creates the ledger table ' +
          'and sets LEDGER_TABLE only for a worker that uses it: give it `ledger: true` (or `existingLedgerTableObj`).',
      );
    }
    this.client = options.client;
    this.tableName = options.tableName;
    this.now = options.now ?? Date.now;
    this.newOwner = options.owner ?? randomUUID;
    this.leaseMs = positive('leaseMs', options.leaseMs ?? DEFAULT_LEASE_MS);
    this.leaseMarginMs = nonNegative('leaseMarginMs', options.leaseMarginMs ?? DEFAULT_LEASE_MARGIN_MS);
    this.ttlSeconds = positive('ttlSeconds', options.ttlSeconds ?? DEFAULT_TTL_SECONDS);
    this.maxResultBytes = positive('maxResultBytes', options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES);
    if (this.maxResultBytes > MAX_RESULT_BYTES_LIMIT) {
      throw new LedgerConfigurationError(
        `maxResultBytes ${this.maxResultBytes} is over ${MAX_RESULT_BYTES_LIMIT}: a DynamoDB item is limited to 400 KB.`,
      );
    }
    if (this.ttlSeconds * 1000 <= this.leaseMs) {
      throw new LedgerConfigurationError(`ttlSeconds (${this.ttlSeconds}) must outlast a lease (${this.leaseMs} ms).`);
    }
    this.logger = options.logger ?? silentLogger;
  }

  /**
   * Runs `effect` unless the key already succeeded (returns the stored result) or failed terminally
   * (throws {@link LedgerStoredFailureError}). See the {@link Ledger} interface for the error contract.
   *
   * @throws LedgerInProgressError another holder's lease is live: defer the message `retryAfterSeconds`.
   * @throws LedgerPayloadMismatchError the key was first used with another payload.
   * @throws LedgerStoredFailureError an earlier attempt failed terminally.
   * @throws LedgerLeaseLostError this holder's lease was taken over before its final write.
   * @throws LedgerResultUnstorableError the effect's result is too large or not JSON.
   */
  async once<T>(
    key: string,
    payload: unknown,
    effect: (context: EffectContext) => Promise<T>,
    options: OnceOptions = {},
  ): Promise<OnceResult<T>> {
    checkOptions('DynamoDBLedger.once', options, ONCE_OPTION_NAMES, (m) => new LedgerConfigurationError(m));
    validateKey(key);
    const payloadHash = hashPayload(payload);
    const log = withFields(this.logger, { dedupeKey: key, ledgerTable: this.tableName });
    const leaseMs = leaseDurationMs(options.remainingTimeMs, {
      defaultLeaseMs: this.leaseMs,
      marginMs: this.leaseMarginMs,
    });
    if (leaseMs >= this.ttlSeconds * 1000) {
      throw new LedgerConfigurationError(
        `A lease of ${leaseMs} ms would outlast the record's TTL (${this.ttlSeconds} s).`,
      );
    }

    let claim: { owner: string; attempt: number } | undefined;
    let replaceExpired = false;
    for (let tries = 1; claim === undefined; tries++) {
      const now = this.now();
      const owner = this.newOwner();
      let old: LedgerRecord | undefined;
      try {
        if (replaceExpired) {
          await this.client.send(this.replaceExpiredCommand(key, payloadHash, owner, now, leaseMs));
          claim = { owner, attempt: 1 };
        } else {
          const output = await this.client.send(this.claimCommand(key, payloadHash, owner, now, leaseMs));
          claim = { owner, attempt: parseLedgerRecord(plain(output.Attributes) ?? {}).attempt };
        }
        break;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        old = parseOld(error.Item);
      }
      replaceExpired = false;
      const decision = decideLostClaim({ old, payloadHash, owner, now });
      switch (decision.kind) {
        case ClaimDecisionKind.CLAIMED:
          claim = { owner, attempt: decision.attempt };
          break;
        case ClaimDecisionKind.REPLAY_RESULT:
          log.info('ledger: key already succeeded; replaying the stored result, effect not run', {
            attempt: decision.attempt,
          });
          return {
            status: OnceStatus.REPLAYED,
            result: (decision.resultJson === undefined ? undefined : JSON.parse(decision.resultJson)) as T,
            dedupeKey: key,
            attempt: decision.attempt,
          };
        case ClaimDecisionKind.REPLAY_OMITTED_RESULT:
          log.error('ledger: key already succeeded but its result was not stored', { reason: decision.reason });
          throw new LedgerResultUnstorableError(key, decision.reason);
        case ClaimDecisionKind.REPLAY_FAILURE:
          log.warn('ledger: key failed terminally before; replaying the stored failure, effect not run', {
            failure: decision.failure,
          });
          throw new LedgerStoredFailureError(key, decision.failure, decision.failedAt);
        case ClaimDecisionKind.IN_PROGRESS:
          // Never delete or overwrite a lock this call does not hold: defer this one message instead.
          log.warn('ledger: key in progress elsewhere; deferring this message until the lease expires', {
            leaseExpiresAt: decision.leaseExpiresAt,
            retryAfterSeconds: decision.retryAfterSeconds,
          });
          throw new LedgerInProgressError(key, {
            retryAfterSeconds: decision.retryAfterSeconds,
            leaseExpiresAt: decision.leaseExpiresAt,
          });
        case ClaimDecisionKind.PAYLOAD_MISMATCH:
          log.error('ledger: key reused with a different payload', {
            storedPayloadHash: decision.storedPayloadHash,
            payloadHash,
          });
          throw new LedgerPayloadMismatchError(key, { storedPayloadHash: decision.storedPayloadHash, payloadHash });
        case ClaimDecisionKind.RECLAIM_EXPIRED:
        case ClaimDecisionKind.RETRY_CLAIM:
          if (tries >= MAX_CLAIM_TRIES) {
            throw new LedgerInProgressError(key, {
              retryAfterSeconds: 1,
              leaseExpiresAt: now,
              reason: 'the item kept changing under concurrent claims',
            });
          }
          if (decision.kind === ClaimDecisionKind.RECLAIM_EXPIRED) {
            replaceExpired = true;
            log.info('ledger: record is past its TTL; replacing it with a new claim');
          } else {
            log.debug('ledger: claim lost to a change that no longer holds; claiming again', {
              reason: decision.reason,
            });
          }
          break;
      }
    }

    if (claim.attempt > 1) {
      log.info('ledger: claimed a key after an expired or released lease', { attempt: claim.attempt });
    } else {
      log.debug('ledger: claimed', { leaseMs });
    }

    let result: T;
    try {
      result = await effect({ dedupeKey: key, attempt: claim.attempt });
    } catch (error) {
      await this.recordFailure(key, claim.owner, error, log);
      throw error;
    }
    return this.complete(key, claim, result, log);
  }

  private async complete<T>(
    key: string,
    claim: { owner: string; attempt: number },
    result: T,
    log: Logger,
  ): Promise<OnceResult<T>> {
    const stored = serializeResult(result, this.maxResultBytes);
    const now = this.now();
    const set = [`#status = :succeeded`, `#completedAt = :now`, `#ttl = :ttl`];
    const names: Record<string, string> = {
      '#status': A.STATUS,
      '#completedAt': A.COMPLETED_AT,
      '#ttl': A.TTL,
      '#owner': A.OWNER,
      '#lease': A.LEASE_EXPIRES_AT,
    };
    const values: Record<string, AttributeValue> = {
      ':succeeded': { S: LedgerStatus.SUCCEEDED },
      ':now': { N: String(now) },
      ':ttl': { N: String(ttlEpochSeconds(now, this.ttlSeconds)) },
      ':owner': { S: claim.owner },
      ':inProgress': { S: LedgerStatus.IN_PROGRESS },
    };
    if (stored.json !== undefined) {
      set.push('#result = :result');
      names['#result'] = A.RESULT_JSON;
      values[':result'] = { S: stored.json };
    }
    if (stored.omitted !== undefined) {
      set.push('#omitted = :omitted');
      names['#omitted'] = A.RESULT_OMITTED;
      values[':omitted'] = { S: stored.omitted.reason };
    }
    try {
      await this.client.send(this.holderWrite(key, `SET ${set.join(', ')} REMOVE #lease`, names, values));
    } catch (error) {
      this.handleHolderWriteFailure(error, key, claim.owner, LedgerStatus.SUCCEEDED, LedgerWriteStage.COMPLETE, log);
    }
    if (stored.omitted !== undefined) {
      log.error('ledger: effect succeeded but its result could not be stored', { reason: stored.omitted.reason });
      throw new LedgerResultUnstorableError(key, stored.omitted.reason, { cause: stored.omitted.cause });
    }
    log.debug('ledger: completed', { attempt: claim.attempt });
    return { status: OnceStatus.EXECUTED, result, dedupeKey: key, attempt: claim.attempt };
  }

  /** Terminal error: store it (FAILED, replayed later). Retryable: release the lease, keep the record. */
  private async recordFailure(key: string, owner: string, error: unknown, log: Logger): Promise<void> {
    const failure: StoredFailure = toStoredFailure(error);
    const now = this.now();
    const terminal = isTerminalError(error);
    const command = terminal
      ? this.holderWrite(
          key,
          'SET #status = :failed, #failureName = :name, #failureMessage = :message, #completedAt = :now, #ttl = :ttl REMOVE #lease',
          {
            '#status': A.STATUS,
            '#failureName': A.FAILURE_NAME,
            '#failureMessage': A.FAILURE_MESSAGE,
            '#completedAt': A.COMPLETED_AT,
            '#ttl': A.TTL,
            '#lease': A.LEASE_EXPIRES_AT,
            '#owner': A.OWNER,
          },
          {
            ':failed': { S: LedgerStatus.FAILED },
            ':name': { S: failure.name },
            ':message': { S: failure.message },
            ':now': { N: String(now) },
            ':ttl': { N: String(ttlEpochSeconds(now, this.ttlSeconds)) },
            ':owner': { S: owner },
            ':inProgress': { S: LedgerStatus.IN_PROGRESS },
          },
        )
      : // Release by expiring the lease rather than deleting the item: the payload hash, the attempt
        // count and the last error survive, and the next claim passes `leaseExpiresAt < :now` at once.
        this.holderWrite(
          key,
          'SET #lease = :released, #lastErrorName = :name, #lastErrorMessage = :message',
          {
            '#lease': A.LEASE_EXPIRES_AT,
            '#lastErrorName': A.LAST_ERROR_NAME,
            '#lastErrorMessage': A.LAST_ERROR_MESSAGE,
            '#owner': A.OWNER,
            '#status': A.STATUS,
          },
          {
            ':released': { N: String(RELEASED_LEASE) },
            ':name': { S: failure.name },
            ':message': { S: failure.message },
            ':owner': { S: owner },
            ':inProgress': { S: LedgerStatus.IN_PROGRESS },
          },
        );
    try {
      await this.client.send(command);
      if (terminal) log.warn('ledger: effect failed terminally; failure stored and will be replayed', { failure });
      else log.warn('ledger: effect failed with a retryable error; lease released', { failure });
    } catch (writeError) {
      if (terminal) {
        this.handleHolderWriteFailure(writeError, key, owner, LedgerStatus.FAILED, LedgerWriteStage.FAIL, log, error);
      } else if (isConditionFailure(writeError)) {
        // Someone took the key over meanwhile: their record stays; the retryable error goes up as is.
        log.warn('ledger: lease lost before release; the new holder keeps the key', { failure });
      } else {
        log.error('ledger: could not release the lease; the key stays blocked until the lease expires', {
          failure,
          writeError,
        });
      }
    }
  }

  /**
   * A complete/fail write that threw. A lost condition is decided from ALL_OLD; any other error leaves
   * the item IN_PROGRESS until its lease expires, after which the effect may run again (with the same
   * dedupe key, so the receiver discards the repeat).
   */
  private handleHolderWriteFailure(
    error: unknown,
    key: string,
    owner: string,
    intended: LedgerStatus,
    stage: LedgerWriteStage,
    log: Logger,
    effectError?: unknown,
  ): void {
    if (!isConditionFailure(error)) {
      log.error(`ledger: the ${stage} write failed; the key stays in progress until its lease expires`, {
        error,
      });
      throw effectError ?? error;
    }
    const old = parseOld(error.Item);
    if (decideLostHolderWrite({ old, owner, intended }) === HolderWriteDecisionKind.ALREADY_APPLIED) return;
    log.warn(`ledger: lease lost before the ${stage} write; the other holder's record was not touched`, {
      currentOwner: old?.owner,
      currentStatus: old?.status,
    });
    throw new LedgerLeaseLostError(key, stage, { owner, currentOwner: old?.owner });
  }

  /**
   * The claim: one conditional UpdateItem that creates the item or takes over an expired (or released)
   * lease of the same payload. `ALL_NEW` returns the attempt count; `ALL_OLD` on failure returns the
   * blocking item, so a lost claim needs no GetItem. An IN_PROGRESS item never holds a result or a
   * failure, so a takeover has nothing to remove; `lastError` and `createdAt` are kept on purpose.
   */
  private claimCommand(key: string, payloadHash: string, owner: string, now: number, leaseMs: number) {
    return new UpdateItemCommand({
      TableName: this.tableName,
      Key: { [A.KEY]: { S: key } },
      UpdateExpression:
        'SET #status = :inProgress, #payloadHash = :payloadHash, #owner = :owner, #lease = :leaseExpiresAt, ' +
        '#attempt = if_not_exists(#attempt, :zero) + :one, #createdAt = if_not_exists(#createdAt, :now), #ttl = :ttl',
      // Expiry by timestamps in the condition, never by TTL deletion (lazy, typically within days).
      ConditionExpression:
        'attribute_not_exists(#pk) OR (#status = :inProgress AND #lease < :now AND #payloadHash = :payloadHash)',
      ExpressionAttributeNames: {
        '#pk': A.KEY,
        '#status': A.STATUS,
        '#payloadHash': A.PAYLOAD_HASH,
        '#owner': A.OWNER,
        '#lease': A.LEASE_EXPIRES_AT,
        '#attempt': A.ATTEMPT,
        '#createdAt': A.CREATED_AT,
        '#ttl': A.TTL,
      },
      ExpressionAttributeValues: {
        ':inProgress': { S: LedgerStatus.IN_PROGRESS },
        ':payloadHash': { S: payloadHash },
        ':owner': { S: owner },
        ':leaseExpiresAt': { N: String(now + leaseMs) },
        ':zero': { N: '0' },
        ':one': { N: '1' },
        ':now': { N: String(now) },
        ':ttl': { N: String(ttlEpochSeconds(now, this.ttlSeconds)) },
      },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  }

  /**
   * Replaces a record that is past its TTL with a fresh claim (attempt 1, any payload): such a record
   * counts as deleted whether or not DynamoDB's lazy TTL deletion has run. The condition re-checks the
   * timestamp, so two workers cannot both replace it.
   */
  private replaceExpiredCommand(key: string, payloadHash: string, owner: string, now: number, leaseMs: number) {
    return new PutItemCommand({
      TableName: this.tableName,
      Item: {
        [A.KEY]: { S: key },
        [A.STATUS]: { S: LedgerStatus.IN_PROGRESS },
        [A.PAYLOAD_HASH]: { S: payloadHash },
        [A.OWNER]: { S: owner },
        [A.LEASE_EXPIRES_AT]: { N: String(now + leaseMs) },
        [A.ATTEMPT]: { N: '1' },
        [A.CREATED_AT]: { N: String(now) },
        [A.TTL]: { N: String(ttlEpochSeconds(now, this.ttlSeconds)) },
      },
      ConditionExpression: 'attribute_not_exists(#pk) OR #ttl < :nowSeconds',
      ExpressionAttributeNames: { '#pk': A.KEY, '#ttl': A.TTL },
      ExpressionAttributeValues: { ':nowSeconds': { N: String(Math.floor(now / 1000)) } },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  }

  /**
   * A write only the current lease holder can make: `owner = :me AND status = IN_PROGRESS`. The lease
   * need not be unexpired: if nobody took over, finishing is still right (it spares a rerun); if
   * somebody did, `owner` changed and the condition protects their record.
   */
  private holderWrite(
    key: string,
    updateExpression: string,
    names: Record<string, string>,
    values: Record<string, AttributeValue>,
  ): UpdateItemCommand {
    const input: UpdateItemCommandInput = {
      TableName: this.tableName,
      Key: { [A.KEY]: { S: key } },
      UpdateExpression: updateExpression,
      ConditionExpression: '#owner = :owner AND #status = :inProgress',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    };
    return new UpdateItemCommand(input);
  }
}

function validateKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) {
    throw new LedgerConfigurationError('A dedupe key must be a non-empty string.');
  }
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes > MAX_KEY_BYTES) {
    throw new LedgerConfigurationError(`Dedupe key is ${bytes} bytes; DynamoDB allows ${MAX_KEY_BYTES}. Hash it.`);
  }
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new LedgerConfigurationError(`${name} must be > 0 (got ${value}).`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new LedgerConfigurationError(`${name} must be >= 0 (got ${value}).`);
  return value;
}

function isConditionFailure(error: unknown): error is ConditionalCheckFailedException {
  return (
    error instanceof ConditionalCheckFailedException ||
    (error instanceof Error && error.name === 'ConditionalCheckFailedException')
  );
}

/** The ledger only writes strings and numbers; other attribute types are kept raw for the parser to reject. */
function plain(item: Record<string, AttributeValue> | undefined): Record<string, unknown> | undefined {
  if (item === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) {
    if (value.S !== undefined) out[name] = value.S;
    else if (value.N !== undefined) out[name] = Number(value.N);
    else out[name] = value;
  }
  return out;
}

function parseOld(item: Record<string, AttributeValue> | undefined): LedgerRecord | undefined {
  const attributes = plain(item);
  return attributes === undefined || Object.keys(attributes).length === 0 ? undefined : parseLedgerRecord(attributes);
}

function serializeResult(
  result: unknown,
  maxBytes: number,
): { json?: string; omitted?: { reason: string; cause?: unknown } } {
  let json: string | undefined;
  try {
    json = JSON.stringify(result);
  } catch (cause) {
    return { omitted: { reason: `result is not JSON-serializable: ${(cause as Error).message}`, cause } };
  }
  if (json === undefined) return {};
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxBytes) return { omitted: { reason: `result is ${bytes} bytes of JSON (limit ${maxBytes})` } };
  return { json };
}
