/**
 * A deliberately small IAM evaluator for the statements this stack writes, so tests can ask "is this
 * request allowed / denied?" instead of only comparing JSON shapes. It supports the condition
 * operators the stack uses (Null, Bool, StringLike, StringEquals, ArnLike, NumericLessThan, each
 * also as ...IfExists) and
 * throws on any other, so a new operator cannot be silently ignored. Semantics follow the IAM
 * policy evaluation logic: operators, keys inside an operator, all AND; values of one key OR; a
 * missing key makes every operator but Null false.
 */

/** One IAM policy statement as it appears in a synthesized template. */
export interface PolicyStatementJson {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource?: unknown;
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/** A request to evaluate: action, resource ARN, and the request's condition-key values. */
export interface IamRequest {
  action: string;
  resource: string;
  context?: Record<string, string | undefined>;
}

/**
 * Renders CloudFormation intrinsics the stack uses into plain strings:
 * `{ "Fn::GetAtt": [Id, "Arn"] }` -> `arn:aws:s3:::Id` when Id is in `bucketIds`, else `arn:<Id>`;
 * `{ "Fn::Join": ["", parts] }` -> the joined parts; `{ Ref: X }` -> `X`.
 */
export function renderIntrinsic(value: unknown, bucketIds: ReadonlySet<string> = new Set()): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (Array.isArray(v['Fn::GetAtt'])) {
      const [id, attr] = v['Fn::GetAtt'] as [string, string];
      if (attr === 'Arn') return bucketIds.has(id) ? `arn:aws:s3:::${id}` : `arn:${id}`;
      return `${id}.${attr}`;
    }
    if (Array.isArray(v['Fn::Join'])) {
      const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
      return parts.map((p) => renderIntrinsic(p, bucketIds)).join(sep);
    }
    if (typeof v.Ref === 'string') return v.Ref;
  }
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}

/** Statement resources as plain ARN strings. */
export function resourcesOf(statement: PolicyStatementJson, bucketIds: ReadonlySet<string>): string[] {
  const r = statement.Resource;
  if (r === undefined) return [];
  return (Array.isArray(r) ? r : [r]).map((x) => renderIntrinsic(x, bucketIds));
}

/** Statement actions as an array. */
export function actionsOf(statement: PolicyStatementJson): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** IAM wildcard matching (`*` any run, `?` one character), case-sensitive as for resources. */
export function globMatches(pattern: string, value: string): boolean {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return re.test(value);
}

/** Whether every condition of the block holds for `context`. */
export function conditionHolds(
  condition: PolicyStatementJson['Condition'],
  context: Record<string, string | undefined>,
  bucketIds: ReadonlySet<string> = new Set(),
): boolean {
  if (!condition) return true;
  return Object.entries(condition).every(([qualifiedOperator, keys]) =>
    Object.entries(keys).every(([key, expected]) => {
      const values = (Array.isArray(expected) ? expected : [expected]).map((e) =>
        typeof e === 'object' ? renderIntrinsic(e, bucketIds) : String(e),
      );
      const actual = context[key];
      // IAM "...IfExists": a key absent from the request makes the condition true; a present key
      // is checked by the base operator (IAM User Guide, "IfExists condition operators").
      const ifExists = qualifiedOperator.endsWith('IfExists') && qualifiedOperator !== 'Null';
      if (ifExists && actual === undefined) return true;
      const operator = ifExists ? qualifiedOperator.slice(0, -'IfExists'.length) : qualifiedOperator;
      switch (operator) {
        case 'Null':
          return values.some((v) => (v === 'true' ? actual === undefined : actual !== undefined));
        case 'Bool':
          return actual !== undefined && values.some((v) => v === actual);
        case 'StringEquals':
        case 'ArnEquals':
          return actual !== undefined && values.includes(actual);
        case 'StringLike':
        case 'ArnLike':
          return actual !== undefined && values.some((v) => globMatches(v, actual));
        case 'NumericLessThan':
          return actual !== undefined && values.some((v) => Number(actual) < Number(v));
        default:
          throw new Error(`condition operator ${operator} is not modelled by this evaluator`);
      }
    }),
  );
}

function statementApplies(s: PolicyStatementJson, request: IamRequest, bucketIds: ReadonlySet<string>): boolean {
  const actionOk = actionsOf(s).some((a) => globMatches(a.toLowerCase(), request.action.toLowerCase()));
  const resourceOk = resourcesOf(s, bucketIds).some((r) => globMatches(r, request.resource));
  return actionOk && resourceOk && conditionHolds(s.Condition, request.context ?? {}, bucketIds);
}

/** True when some Deny statement applies to the request. */
export function isExplicitlyDenied(
  statements: readonly PolicyStatementJson[],
  request: IamRequest,
  bucketIds: ReadonlySet<string>,
): boolean {
  return statements.some((s) => s.Effect === 'Deny' && statementApplies(s, request, bucketIds));
}

/** True when some Allow statement applies and no Deny does. */
export function isAllowed(
  statements: readonly PolicyStatementJson[],
  request: IamRequest,
  bucketIds: ReadonlySet<string>,
): boolean {
  return (
    !isExplicitlyDenied(statements, request, bucketIds) &&
    statements.some((s) => s.Effect === 'Allow' && statementApplies(s, request, bucketIds))
  );
}
