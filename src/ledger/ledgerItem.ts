import { type AttributeValue, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type LedgerRecord, parseLedgerRecord } from './ledgerRecord.js';

/** Whether a write lost its condition (the SDK's class, or an error of that name from another copy of the SDK). */
export function isConditionFailure(error: unknown): error is ConditionalCheckFailedException {
  return (
    error instanceof ConditionalCheckFailedException ||
    (error instanceof Error && error.name === 'ConditionalCheckFailedException')
  );
}

/** The ledger only writes strings and numbers; other attribute types are kept raw for the parser to reject. */
export function plain(item: Record<string, AttributeValue> | undefined): Record<string, unknown> | undefined {
  if (item === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) {
    if (value.S !== undefined) out[name] = value.S;
    else if (value.N !== undefined) out[name] = Number(value.N);
    else out[name] = value;
  }
  return out;
}

/** The item a lost condition returned (`ALL_OLD`) as a ledger record; undefined when there was none. */
export function parseOld(item: Record<string, AttributeValue> | undefined): LedgerRecord | undefined {
  const attributes = plain(item);
  return attributes === undefined || Object.keys(attributes).length === 0 ? undefined : parseLedgerRecord(attributes);
}
