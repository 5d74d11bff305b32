import {
  type AttributeValue,
  PutItemCommand,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { LedgerAttribute as A, LedgerStatus, ttlEpochSeconds } from './ledgerRecord.js';

/** The table a ledger command writes to, and how long its records live. */
export interface LedgerTable {
  readonly tableName: string;
  readonly ttlSeconds: number;
}

/**
 * The claim: one conditional UpdateItem that creates the item or takes over an expired (or released)
 * lease of the same payload. `ALL_NEW` returns the attempt count; `ALL_OLD` on failure returns the
 * blocking item, so a lost claim needs no GetItem. An IN_PROGRESS item never holds a result or a
 * failure, so a takeover has nothing to remove; `lastError` and `createdAt` are kept on purpose.
 */
export function claimCommand(
  table: LedgerTable,
  key: string,
  payloadHash: string,
  owner: string,
  now: number,
  leaseMs: number,
) {
  return new UpdateItemCommand({
    TableName: table.tableName,
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
      ':ttl': { N: String(ttlEpochSeconds(now, table.ttlSeconds)) },
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
export function replaceExpiredCommand(
  table: LedgerTable,
  key: string,
  payloadHash: string,
  owner: string,
  now: number,
  leaseMs: number,
) {
  return new PutItemCommand({
    TableName: table.tableName,
    Item: {
      [A.KEY]: { S: key },
      [A.STATUS]: { S: LedgerStatus.IN_PROGRESS },
      [A.PAYLOAD_HASH]: { S: payloadHash },
      [A.OWNER]: { S: owner },
      [A.LEASE_EXPIRES_AT]: { N: String(now + leaseMs) },
      [A.ATTEMPT]: { N: '1' },
      [A.CREATED_AT]: { N: String(now) },
      [A.TTL]: { N: String(ttlEpochSeconds(now, table.ttlSeconds)) },
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
export function holderWrite(
  table: LedgerTable,
  key: string,
  updateExpression: string,
  names: Record<string, string>,
  values: Record<string, AttributeValue>,
): UpdateItemCommand {
  const input: UpdateItemCommandInput = {
    TableName: table.tableName,
    Key: { [A.KEY]: { S: key } },
    UpdateExpression: updateExpression,
    ConditionExpression: '#owner = :owner AND #status = :inProgress',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
  return new UpdateItemCommand(input);
}
