import type { Footprint } from './S3Model.js';
import { SimServiceError } from './serviceError.js';

/** A DynamoDB attribute value in the wire form the SDK's low-level client uses. */
type AttributeValue = { S: string } | { N: string } | { BOOL: boolean } | { NULL: true };
type Item = Record<string, AttributeValue>;

/**
 * In-memory DynamoDB tables with the conditional-write semantics the dedupe ledger relies on
 * (DynamoDB Developer Guide, "Condition expressions" and "Update expressions"): PutItem, UpdateItem,
 * GetItem and DeleteItem, each applied atomically; a failed `ConditionExpression` throws
 * ConditionalCheckFailedException, with the item as it is when `ReturnValuesOnConditionCheckFailure`
 * is `ALL_OLD`; UpdateItem returns `ALL_NEW` / `ALL_OLD` when asked. Expressions: comparisons
 * (`= <> < <= > >=`, numbers compared as numbers), `AND`, `OR`, `NOT`, parentheses,
 * `attribute_exists`, `attribute_not_exists`; updates `SET a = operand` (a path, a value,
 * `if_not_exists(path, operand)`, `x + y`, `x - y`) and `REMOVE a, b`. TTL deletion never happens,
 * as on moto (DynamoDB deletes expired items lazily, typically within days).
 */
export class DynamoModel {
  private readonly tables = new Map<string, { readonly keyName: string; readonly items: Map<string, Item> }>();

  createTable(name: string, keyName = 'pk'): void {
    if (!this.tables.has(name)) this.tables.set(name, { keyName, items: new Map() });
  }

  /** The state, as a string (for the explorer's state cache). */
  digest(): string {
    return [...this.tables]
      .map(
        ([name, t]) =>
          `${name}{${[...t.items]
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(',')}}`,
      )
      .join('');
  }

  /** Direct read for checks. */
  peek(table: string, key: string): Item | undefined {
    return this.tables.get(table)?.items.get(key);
  }

  handle(name: string, input: Record<string, unknown>): Record<string, unknown> {
    const table = this.tables.get(String(input.TableName));
    if (!table) throw new SimServiceError(400, 'ResourceNotFoundException', 'Requested resource not found');
    const keyOf = (item: Item | undefined): string => {
      const value = item?.[table.keyName];
      if (!value || !('S' in value))
        throw new SimServiceError(400, 'ValidationException', 'The key is missing or not a string');
      return value.S;
    };
    const context: ExpressionContext = {
      names: (input.ExpressionAttributeNames ?? {}) as Record<string, string>,
      values: (input.ExpressionAttributeValues ?? {}) as Record<string, AttributeValue>,
    };
    const check = (existing: Item | undefined) => {
      if (input.ConditionExpression === undefined) return;
      if (evaluateCondition(String(input.ConditionExpression), existing ?? {}, context)) return;
      throw new SimServiceError(400, 'ConditionalCheckFailedException', 'The conditional request failed', {
        ...(input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && existing
          ? { Item: structuredClone(existing) }
          : {}),
      });
    };
    switch (name) {
      case 'GetItem': {
        const item = table.items.get(keyOf(input.Key as Item));
        return item ? { Item: structuredClone(item) } : {};
      }
      case 'PutItem': {
        const item = input.Item as Item;
        const existing = table.items.get(keyOf(item));
        check(existing);
        table.items.set(keyOf(item), structuredClone(item));
        return input.ReturnValues === 'ALL_OLD' && existing ? { Attributes: existing } : {};
      }
      case 'DeleteItem': {
        const key = keyOf(input.Key as Item);
        const existing = table.items.get(key);
        check(existing);
        table.items.delete(key);
        return input.ReturnValues === 'ALL_OLD' && existing ? { Attributes: existing } : {};
      }
      case 'UpdateItem': {
        const keyItem = input.Key as Item;
        const key = keyOf(keyItem);
        const existing = table.items.get(key);
        check(existing);
        const updated = applyUpdate(
          String(input.UpdateExpression ?? ''),
          structuredClone(existing ?? keyItem),
          context,
        );
        table.items.set(key, updated);
        if (input.ReturnValues === 'ALL_NEW') return { Attributes: structuredClone(updated) };
        if (input.ReturnValues === 'ALL_OLD' && existing) return { Attributes: existing };
        return {};
      }
      default:
        throw new SimServiceError(
          400,
          'UnknownOperationException',
          `the in-memory DynamoDB does not implement ${name}`,
        );
    }
  }

  footprint(_name: string, input: Record<string, unknown>): Footprint {
    const key = (input.Key ?? input.Item) as Item | undefined;
    const value = key?.pk;
    const item = `ddb:${String(input.TableName)}/${value && 'S' in value ? value.S : '*'}`;
    return { reads: [item], writes: [item] };
  }
}

interface ExpressionContext {
  readonly names: Record<string, string>;
  readonly values: Record<string, AttributeValue>;
}

/** Tokens of an expression: names, values, words, operators, parentheses and commas. */
function tokenize(expression: string): string[] {
  const tokens = expression.match(/#[A-Za-z0-9_]+|:[A-Za-z0-9_]+|<>|<=|>=|[=<>(),+-]|[A-Za-z_][A-Za-z0-9_.]*/g);
  return tokens ?? [];
}

class Tokens {
  private at = 0;
  constructor(private readonly list: string[]) {}
  peek(): string | undefined {
    return this.list[this.at];
  }
  next(): string {
    const token = this.list[this.at++];
    if (token === undefined) throw new SimServiceError(400, 'ValidationException', 'unexpected end of expression');
    return token;
  }
  expect(token: string): void {
    const got = this.next();
    if (got.toUpperCase() !== token)
      throw new SimServiceError(400, 'ValidationException', `expected ${token}, got ${got}`);
  }
  get done(): boolean {
    return this.at >= this.list.length;
  }
}

function attributeName(token: string, context: ExpressionContext): string {
  if (!token.startsWith('#')) return token;
  const name = context.names[token];
  if (name === undefined) throw new SimServiceError(400, 'ValidationException', `unknown attribute name ${token}`);
  return name;
}

function operandValue(tokens: Tokens, item: Item, context: ExpressionContext): AttributeValue | undefined {
  const token = tokens.next();
  if (token.startsWith(':')) {
    const value = context.values[token];
    if (value === undefined) throw new SimServiceError(400, 'ValidationException', `unknown value ${token}`);
    return value;
  }
  if (token === 'if_not_exists') {
    tokens.expect('(');
    const path = attributeName(tokens.next(), context);
    tokens.expect(',');
    const fallback = operandValue(tokens, item, context);
    tokens.expect(')');
    return item[path] ?? fallback;
  }
  return item[attributeName(token, context)];
}

function compare(a: AttributeValue | undefined, b: AttributeValue | undefined, op: string): boolean {
  if (a === undefined || b === undefined) return op === '<>' ? a !== b : false;
  if ('N' in a && 'N' in b) {
    const x = Number(a.N);
    const y = Number(b.N);
    return op === '='
      ? x === y
      : op === '<>'
        ? x !== y
        : op === '<'
          ? x < y
          : op === '<='
            ? x <= y
            : op === '>'
              ? x > y
              : x >= y;
  }
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  if (op === '=') return x === y;
  if (op === '<>') return x !== y;
  if ('S' in a && 'S' in b)
    return op === '<' ? a.S < b.S : op === '<=' ? a.S <= b.S : op === '>' ? a.S > b.S : a.S >= b.S;
  return false;
}

/** Evaluates a condition expression against an item (an empty item when there is none). */
export function evaluateCondition(expression: string, item: Item, context: ExpressionContext): boolean {
  const tokens = new Tokens(tokenize(expression));
  const result = parseOr(tokens, item, context);
  if (!tokens.done) throw new SimServiceError(400, 'ValidationException', `trailing tokens in ${expression}`);
  return result;
}

function parseOr(tokens: Tokens, item: Item, context: ExpressionContext): boolean {
  let value = parseAnd(tokens, item, context);
  while (tokens.peek()?.toUpperCase() === 'OR') {
    tokens.next();
    const right = parseAnd(tokens, item, context);
    value = value || right;
  }
  return value;
}

function parseAnd(tokens: Tokens, item: Item, context: ExpressionContext): boolean {
  let value = parseNot(tokens, item, context);
  while (tokens.peek()?.toUpperCase() === 'AND') {
    tokens.next();
    const right = parseNot(tokens, item, context);
    value = value && right;
  }
  return value;
}

function parseNot(tokens: Tokens, item: Item, context: ExpressionContext): boolean {
  if (tokens.peek()?.toUpperCase() === 'NOT') {
    tokens.next();
    return !parseNot(tokens, item, context);
  }
  return parsePrimary(tokens, item, context);
}

function parsePrimary(tokens: Tokens, item: Item, context: ExpressionContext): boolean {
  const token = tokens.peek();
  if (token === '(') {
    tokens.next();
    const value = parseOr(tokens, item, context);
    tokens.expect(')');
    return value;
  }
  if (token === 'attribute_exists' || token === 'attribute_not_exists') {
    tokens.next();
    tokens.expect('(');
    const name = attributeName(tokens.next(), context);
    tokens.expect(')');
    return token === 'attribute_exists' ? item[name] !== undefined : item[name] === undefined;
  }
  const left = operandValue(tokens, item, context);
  const op = tokens.next();
  if (!['=', '<>', '<', '<=', '>', '>='].includes(op)) {
    throw new SimServiceError(400, 'ValidationException', `unsupported operator ${op}`);
  }
  const right = operandValue(tokens, item, context);
  return compare(left, right, op);
}

/** Applies `SET ...` and `REMOVE ...` clauses; every operand is read from the item before the update. */
function applyUpdate(expression: string, item: Item, context: ExpressionContext): Item {
  const before = structuredClone(item);
  const tokens = new Tokens(tokenize(expression));
  while (!tokens.done) {
    const clause = tokens.next().toUpperCase();
    if (clause === 'SET') {
      do {
        const name = attributeName(tokens.next(), context);
        tokens.expect('=');
        let value = operandValue(tokens, before, context);
        while (tokens.peek() === '+' || tokens.peek() === '-') {
          const sign = tokens.next();
          const right = operandValue(tokens, before, context);
          if (!value || !right || !('N' in value) || !('N' in right)) {
            throw new SimServiceError(
              400,
              'ValidationException',
              'An operand in the update expression has an incorrect data type',
            );
          }
          value = { N: String(sign === '+' ? Number(value.N) + Number(right.N) : Number(value.N) - Number(right.N)) };
        }
        if (value === undefined) {
          throw new SimServiceError(
            400,
            'ValidationException',
            'The provided expression refers to an attribute that does not exist in the item',
          );
        }
        item[name] = value;
      } while (tokens.peek() === ',' && tokens.next() === ',' && !isClause(tokens.peek()));
    } else if (clause === 'REMOVE') {
      do {
        delete item[attributeName(tokens.next(), context)];
      } while (tokens.peek() === ',' && tokens.next() === ',' && !isClause(tokens.peek()));
    } else {
      throw new SimServiceError(400, 'ValidationException', `unsupported update clause ${clause}`);
    }
  }
  return item;
}

function isClause(token: string | undefined): boolean {
  return token !== undefined && ['SET', 'REMOVE', 'ADD', 'DELETE'].includes(token.toUpperCase());
}
