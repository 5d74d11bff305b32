import { randomUUID } from 'node:crypto';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type Logger, silentLogger } from '../logging/logger.js';
import { withFields } from '../logging/withFields.js';
import { checkOptions } from '../options/checkOptions.js';
import { validateKey } from './dedupeKey.js';
import { DYNAMODB_LEDGER_OPTION_NAMES, type DynamoDBLedgerOptions } from './dynamoDBLedgerOptions.js';
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
import { claimCommand, holderWrite, type LedgerTable, replaceExpiredCommand } from './ledgerCommands.js';
import {
  ClaimDecisionKind,
  decideLostClaim,
  decideLostHolderWrite,
  HolderWriteDecisionKind,
} from './ledgerDecision.js';
import { isConditionFailure, parseOld, plain } from './ledgerItem.js';
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
import { serializeResult } from './storedResult.js';

/** Claims re-tried when the item changes between a lost condition and its decision (rare races). */
const MAX_CLAIM_TRIES = 3;
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
  /** The table the ledger's commands write to. */
  private readonly table: LedgerTable;

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
    this.table = { tableName: this.tableName, ttlSeconds: this.ttlSeconds };
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
          await this.client.send(replaceExpiredCommand(this.table, key, payloadHash, owner, now, leaseMs));
          claim = { owner, attempt: 1 };
        } else {
          const output = await this.client.send(claimCommand(this.table, key, payloadHash, owner, now, leaseMs));
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
      await this.client.send(holderWrite(this.table, key, `SET ${set.join(', ')} REMOVE #lease`, names, values));
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
      ? holderWrite(
          this.table,
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
        holderWrite(
          this.table,
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
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new LedgerConfigurationError(`${name} must be > 0 (got ${value}).`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new LedgerConfigurationError(`${name} must be >= 0 (got ${value}).`);
  return value;
}
