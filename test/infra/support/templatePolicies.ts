/**
 * The policies of a synthesized CloudFormation template as concrete documents: every intrinsic the
 * policies use is resolved to the ARN or name CloudFormation would give, in a fixed account and
 * region, so a policy engine can evaluate requests against them.
 *
 * Names are the logical ids (buckets: lower case), ARNs follow each service's format. Every
 * statement gets a Sid naming its policy and position (`<policy logical id>#<index>`), so a
 * decision says which statement decided it.
 */
import type { CfnTemplate } from './synth.js';

export const ACCOUNT = '111122223333';
export const OTHER_ACCOUNT = '444455556666';
export const REGION = 'us-east-1';

/** A policy document. */
export interface PolicyDocument {
  Version?: string;
  Statement: PolicyStatement[];
}

/** One statement, resolved. */
export interface PolicyStatement {
  Sid: string;
  Effect: 'Allow' | 'Deny';
  Principal?: unknown;
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  Condition?: Record<string, Record<string, unknown>>;
}

/** A role of the template: its ARN, the session ARN its function calls with, and its policies. */
export interface TemplateRole {
  readonly logicalId: string;
  readonly arn: string;
  readonly sessionArn: string;
  readonly policies: PolicyDocument[];
}

/** The resource-based policies and identity policies of a template. */
export interface TemplatePolicies {
  readonly roles: ReadonlyMap<string, TemplateRole>;
  /** Resource ARN (bucket, queue, topic, key) to its policy. */
  readonly resourcePolicies: ReadonlyMap<string, PolicyDocument>;
  /** Every statement by its Sid, with the ARN of the resource or role it is attached to. */
  readonly statements: ReadonlyMap<string, { readonly statement: PolicyStatement; readonly attachedTo: string }>;
  /** The ARN of a resource by logical id. */
  arnOf(logicalId: string): string;
  /** The name (what `Ref` gives) of a resource by logical id. */
  nameOf(logicalId: string): string;
}

type Resources = CfnTemplate['Resources'];

/** Reads the template's policies (AWS::IAM::Policy, bucket, queue and topic policies, KMS key policies). */
export function templatePolicies(template: CfnTemplate): TemplatePolicies {
  const resources = template.Resources;
  const resolve = (value: unknown): unknown => resolveIntrinsics(value, resources);
  const statements = new Map<string, { statement: PolicyStatement; attachedTo: string }>();
  const documentOf = (policyId: string, raw: unknown, attachedTo: string): PolicyDocument => {
    const doc = resolve(raw) as { Version?: string; Statement: unknown };
    const list = (Array.isArray(doc.Statement) ? doc.Statement : [doc.Statement]) as PolicyStatement[];
    const named = list.map((s, i) => {
      const statement = { ...s, Sid: `${policyId}#${i}` };
      statements.set(statement.Sid, { statement, attachedTo });
      return statement;
    });
    return { Version: doc.Version ?? '2012-10-17', Statement: named };
  };

  const roles = new Map<string, TemplateRole>();
  for (const [id, r] of Object.entries(resources)) {
    if (r.Type !== 'AWS::IAM::Role') continue;
    const inline = ((r.Properties?.Policies as { PolicyName: string; PolicyDocument: unknown }[]) ?? []).map((p) =>
      documentOf(`${id}.${p.PolicyName}`, p.PolicyDocument, arnOf(id, resources)),
    );
    roles.set(id, {
      logicalId: id,
      arn: arnOf(id, resources),
      // What a Lambda function's calls carry: the assumed-role session of its execution role.
      sessionArn: `arn:aws:sts::${ACCOUNT}:assumed-role/${id}/${id}-session`,
      policies: inline,
    });
  }
  for (const [id, r] of Object.entries(resources)) {
    if (r.Type !== 'AWS::IAM::Policy') continue;
    const targets = (r.Properties?.Roles as { Ref: string }[]) ?? [];
    for (const target of targets) {
      const role = roles.get(target.Ref);
      if (!role) throw new Error(`${id} is attached to ${JSON.stringify(target)}, not a role of this template`);
      role.policies.push(documentOf(id, r.Properties?.PolicyDocument, role.arn));
    }
  }

  const resourcePolicies = new Map<string, PolicyDocument>();
  const attach = (policyId: string, targetIds: unknown[], raw: unknown, arnOfTarget: (id: string) => string) => {
    for (const target of targetIds) {
      const ref = (target as { Ref?: string }).Ref;
      if (!ref) throw new Error(`${policyId} targets ${JSON.stringify(target)}: only Ref is modelled`);
      const arn = arnOfTarget(ref);
      if (resourcePolicies.has(arn)) throw new Error(`${arn} has two policies (${policyId})`);
      resourcePolicies.set(arn, documentOf(policyId, raw, arn));
    }
  };
  for (const [id, r] of Object.entries(resources)) {
    const p = r.Properties ?? {};
    if (r.Type === 'AWS::S3::BucketPolicy') attach(id, [p.Bucket], p.PolicyDocument, (b) => arnOf(b, resources));
    if (r.Type === 'AWS::SQS::QueuePolicy')
      attach(id, p.Queues as unknown[], p.PolicyDocument, (q) => arnOf(q, resources));
    if (r.Type === 'AWS::SNS::TopicPolicy')
      attach(id, p.Topics as unknown[], p.PolicyDocument, (t) => arnOf(t, resources));
    if (r.Type === 'AWS::KMS::Key')
      resourcePolicies.set(arnOf(id, resources), documentOf(id, p.KeyPolicy, arnOf(id, resources)));
  }
  return {
    roles,
    resourcePolicies,
    statements,
    arnOf: (id) => arnOf(id, resources),
    nameOf: (id) => nameOf(id, resources),
  };
}

/** The ARN CloudFormation gives the resource `id` (`Fn::GetAtt [id, Arn]`, or `Ref` for a topic). */
function arnOf(id: string, resources: Resources): string {
  const type = resources[id]?.Type;
  const at = `${REGION}:${ACCOUNT}`;
  switch (type) {
    case 'AWS::S3::Bucket':
      return `arn:aws:s3:::${nameOf(id, resources)}`;
    case 'AWS::SQS::Queue':
      return `arn:aws:sqs:${at}:${id}`;
    case 'AWS::SNS::Topic':
      return `arn:aws:sns:${at}:${id}`;
    case 'AWS::DynamoDB::Table':
      return `arn:aws:dynamodb:${at}:table/${id}`;
    case 'AWS::Logs::LogGroup':
      return `arn:aws:logs:${at}:log-group:${id}:*`;
    case 'AWS::Events::Rule':
      return `arn:aws:events:${at}:rule/${id}`;
    case 'AWS::KMS::Key':
      return `arn:aws:kms:${at}:key/${id}`;
    case 'AWS::IAM::Role':
      return `arn:aws:iam::${ACCOUNT}:role/${id}`;
    case 'AWS::Lambda::Function':
      return `arn:aws:lambda:${at}:function:${id}`;
    case 'AWS::CloudWatch::Alarm':
      return `arn:aws:cloudwatch:${at}:alarm:${id}`;
    default:
      throw new Error(`no ARN model for ${id} (${type})`);
  }
}

/** What `Ref` gives for the resource `id`. */
function nameOf(id: string, resources: Resources): string {
  const type = resources[id]?.Type;
  switch (type) {
    case 'AWS::S3::Bucket':
      return id.toLowerCase();
    case 'AWS::SQS::Queue':
      return `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${id}`;
    case 'AWS::SNS::Topic':
      return arnOf(id, resources);
    case 'AWS::KMS::Key':
      return id;
    default:
      return id;
  }
}

/** Resolves Ref, Fn::GetAtt (Arn), Fn::Join, Fn::Select and Fn::Split inside `value`. */
export function resolveIntrinsics(value: unknown, resources: Resources): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveIntrinsics(v, resources));
  if (!value || typeof value !== 'object') return value;
  const v = value as Record<string, unknown>;
  const keys = Object.keys(v);
  if (keys.length === 1) {
    const [key] = keys as [string];
    const arg = v[key];
    if (key === 'Ref') {
      const pseudo: Record<string, string> = {
        'AWS::AccountId': ACCOUNT,
        'AWS::Region': REGION,
        'AWS::Partition': 'aws',
        'AWS::URLSuffix': 'amazonaws.com',
      };
      const name = arg as string;
      if (pseudo[name]) return pseudo[name];
      if (!resources[name]) throw new Error(`Ref to ${name}, which is not in the template`);
      return nameOf(name, resources);
    }
    if (key === 'Fn::GetAtt') {
      const [id, attribute] = arg as [string, string];
      if (attribute === 'Arn') return arnOf(id, resources);
      if (attribute === 'QueueName' || attribute === 'TopicName') return id;
      throw new Error(`Fn::GetAtt ${id}.${attribute} is not modelled`);
    }
    if (key === 'Fn::Join') {
      const [separator, parts] = arg as [string, unknown[]];
      return (resolveIntrinsics(parts, resources) as unknown[]).map(String).join(separator);
    }
    if (key === 'Fn::Split') {
      const [separator, source] = arg as [string, unknown];
      return String(resolveIntrinsics(source, resources)).split(separator);
    }
    if (key === 'Fn::Select') {
      const [index, list] = arg as [number | string, unknown];
      return (resolveIntrinsics(list, resources) as unknown[])[Number(index)];
    }
    if (key.startsWith('Fn::')) throw new Error(`${key} is not modelled`);
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolveIntrinsics(x, resources)]));
}
