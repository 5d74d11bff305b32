/**
 * Asks MiniStack's IAM evaluator (test/infra/support/policyEngine.py, MiniStack's
 * `ministack.core.iam_evaluator` used as a library) whether requests are allowed by the policies of
 * a synthesized template: an engine this project did not write, the one that judges the deployed
 * tier under AUTH=true.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensurePythonTool, PythonTool } from '../../../local/emulator/pythonEnvironment.js';
import { ACCOUNT, type PolicyDocument, type TemplatePolicies } from './templatePolicies.js';

/** A request made by a role's session (a function of the template, or a custom resource). */
export interface CallerRequest {
  /** Logical id of the role. */
  readonly as: string;
  readonly action: string;
  readonly resource: string;
  /** Condition keys the request carries (`s3:if-match`, `s3:prefix`, ...). */
  readonly context?: Readonly<Record<string, string>>;
  /** @default true */
  readonly secureTransport?: boolean;
}

/** A request an AWS service makes on its own (S3 delivering an event to SQS, CloudWatch publishing to SNS). */
export interface ServiceRequest {
  /** The service principal, `s3.amazonaws.com`. */
  readonly service: string;
  readonly action: string;
  readonly resource: string;
  /** `aws:SourceArn`, `aws:SourceAccount`. */
  readonly context?: Readonly<Record<string, string>>;
}

export type EngineRequest = CallerRequest | ServiceRequest;

/** The engine's answer. */
export interface Decision {
  readonly decision: 'Allow' | 'Deny' | 'ImplicitDeny';
  /** The statement that decided (`<policy logical id>#<index>`), empty for an implicit deny. */
  readonly sid: string;
  readonly reason: string;
}

/** Services whose resources carry a policy of their own, in MiniStack's evaluator (`_RESOURCE_POLICY_LOOKUPS`). */
const RESOURCE_POLICY_SERVICES = new Set(['sqs', 'sns', 's3', 'lambda', 'secretsmanager', 'kms']);

const DRIVER = fileURLToPath(new URL('./policyEngine.py', import.meta.url));

/** A policy engine over one template's policies. */
export interface PolicyEngine {
  /** Decides each request (one Python process for the whole list). */
  decide(requests: readonly EngineRequest[]): Decision[];
  /** Sids of every statement that decided some request so far. */
  readonly exercised: ReadonlySet<string>;
}

/**
 * MiniStack's evaluator over `policies`, with the interpreter of the installed MiniStack
 * (`.venv/ministack`, installed from requirements/ministack.txt on first use).
 *
 * @example
 * const engine = await policyEngine(templatePolicies(json));
 * engine.decide([{ as: roleId, action: 's3:GetObject', resource: 'arn:aws:s3:::input/incoming/a.csv' }]);
 */
export async function policyEngine(policies: TemplatePolicies): Promise<PolicyEngine> {
  const python = await ensurePythonTool(PythonTool.MINISTACK);
  const exercised = new Set<string>();
  const toWire = (request: EngineRequest) => {
    const service = request.action.split(':')[0] as string;
    const resourcePolicy = resourcePolicyFor(policies, request.resource);
    const common = { action: request.action, resource: request.resource, context: request.context ?? {} };
    if ('service' in request) {
      return { ...common, principal: { service: request.service }, resourcePolicy: resourcePolicy ?? null };
    }
    const role = policies.roles.get(request.as);
    if (!role) throw new Error(`no role ${request.as} in the template`);
    return {
      ...common,
      principal: { arn: role.sessionArn, type: 'AssumedRole', account: ACCOUNT },
      secureTransport: request.secureTransport ?? true,
      identityPolicies: role.policies,
      ...(RESOURCE_POLICY_SERVICES.has(service)
        ? { resourcePolicy: resourcePolicy ?? null, resourceOwner: ACCOUNT, keyPolicy: service === 'kms' }
        : {}),
    };
  };
  return {
    exercised,
    decide(requests) {
      const run = spawnSync(python, [DRIVER], {
        input: JSON.stringify({ requests: requests.map(toWire) }),
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      if (run.status !== 0) throw new Error(`policyEngine.py exited ${run.status}:\n${run.stderr}`);
      const results = (JSON.parse(run.stdout) as { results: Decision[] }).results;
      for (const r of results) if (r.sid) exercised.add(r.sid);
      return results;
    },
  };
}

/** The policy of the resource an ARN names: an object's is its bucket's. */
function resourcePolicyFor(policies: TemplatePolicies, resource: string): PolicyDocument | undefined {
  const s3 = /^arn:aws:s3:::([^/]+)/.exec(resource);
  return policies.resourcePolicies.get(s3 ? `arn:aws:s3:::${s3[1]}` : resource);
}
