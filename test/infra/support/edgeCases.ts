import type { Decision, EngineRequest, PolicyEngine } from './policyEngine.js';

/** What a case expects: Allow, an explicit Deny, an implicit one, or either kind of refusal. */
export type Expected = 'Allow' | 'Deny' | 'ImplicitDeny' | 'refused';

/** One API call (one or more IAM requests, all of which must be allowed) and what the policies must answer. */
export interface EdgeCase {
  readonly name: string;
  readonly requests: readonly EngineRequest[];
  readonly expect: Expected;
}

/** The decision of a call made of several requests: any Deny denies, any implicit deny refuses. */
function combined(decisions: readonly Decision[]): Decision['decision'] {
  if (decisions.some((d) => d.decision === 'Deny')) return 'Deny';
  if (decisions.some((d) => d.decision === 'ImplicitDeny')) return 'ImplicitDeny';
  return 'Allow';
}

/**
 * Decides every case with one engine call and returns two tables keyed by case name, what the
 * engine said and what was expected, ready for one `toEqual` (a failure shows each differing case).
 *
 * @example
 * const { actual, expected } = decideCases(engine, cases);
 * expect(actual).toEqual(expected);
 */
export function decideCases(engine: PolicyEngine, cases: readonly EdgeCase[]) {
  const flat = cases.flatMap((c) => c.requests);
  const decisions = engine.decide(flat);
  const actual: Record<string, string> = {};
  const expected: Record<string, string> = {};
  let at = 0;
  for (const c of cases) {
    if (c.name in actual) throw new Error(`two cases are named "${c.name}"`);
    const decision = combined(decisions.slice(at, at + c.requests.length));
    at += c.requests.length;
    actual[c.name] = c.expect === 'refused' && decision !== 'Allow' ? 'refused' : decision;
    expected[c.name] = c.expect;
  }
  return { actual, expected };
}
