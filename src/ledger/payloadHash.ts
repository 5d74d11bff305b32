import { createHash } from 'node:crypto';
import { LedgerConfigurationError } from './errors.js';

/**
 * Serializes JSON data with object keys sorted (by UTF-16 code unit, recursively), so two payloads
 * that are equal as data produce the same text whatever order their keys were built in.
 *
 * Follows `JSON.stringify` otherwise (`toJSON` is honoured, `undefined` and functions are dropped from
 * objects and become `null` in arrays; a top-level `undefined` is `null`), but refuses what
 * `JSON.stringify` would silently mangle: `NaN`/`Infinity` (they would hash like `null`), `Map`/`Set`
 * (they would hash like `{}`), `BigInt` and cycles.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, { d: null, c: 'x' }] }); // '{"a":[true,{"c":"x","d":null}],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, []) ?? 'null';
}

/**
 * SHA-256 (lowercase hex) of {@link canonicalJson}: the ledger stores it with the claim and compares
 * it on every later use of the key, so one key cannot silently cover two different payloads.
 *
 * @example
 * hashPayload({ a: 1, b: 2 }) === hashPayload({ b: 2, a: 1 }); // true
 */
export function hashPayload(payload: unknown): string {
  return createHash('sha256').update(canonicalJson(payload), 'utf8').digest('hex');
}

function serialize(input: unknown, ancestors: object[]): string | undefined {
  let value = input;
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new LedgerConfigurationError(`Cannot hash the non-finite number ${value}.`);
      return JSON.stringify(value);
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'bigint':
      throw new LedgerConfigurationError('Cannot hash a BigInt: convert it to a string first.');
  }
  if (value === null) return 'null';
  const object = value as object;
  if (object instanceof Map || object instanceof Set) {
    throw new LedgerConfigurationError('Cannot hash a Map or Set: convert it to a plain object or array first.');
  }
  if (ancestors.includes(object)) throw new LedgerConfigurationError('Cannot hash a payload that contains a cycle.');
  const path = [...ancestors, object];
  if (Array.isArray(object)) {
    return `[${object.map((item) => serialize(item, path) ?? 'null').join(',')}]`;
  }
  const record = object as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const text = serialize(record[key], path);
    if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(',')}}`;
}
