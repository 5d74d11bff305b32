import type { StoredFailure } from './errors.js';
import { isLeaseExpired, isRecordExpired, type LedgerRecord, LedgerStatus, retryAfterSeconds } from './ledgerRecord.js';

/** What a lost claim means, decided from the item DynamoDB returned with the failed condition. */
export const ClaimDecisionKind = {
  /** The item is ours: an earlier try of this very claim succeeded but its response was lost (SDK retry). */
  CLAIMED: 'claimed',
  /** SUCCEEDED: return the stored result, do not run the effect. */
  REPLAY_RESULT: 'replay-result',
  /** SUCCEEDED, but the result could not be stored: the effect must not run; report the omission. */
  REPLAY_OMITTED_RESULT: 'replay-omitted-result',
  /** FAILED terminally: replay the stored failure. */
  REPLAY_FAILURE: 'replay-failure',
  /** Someone else holds an unexpired lease: defer this message until the lease is over. */
  IN_PROGRESS: 'in-progress',
  /** Same key, different payload hash: terminal caller error. */
  PAYLOAD_MISMATCH: 'payload-mismatch',
  /** The item changed between the condition check and now (lease expired, released, deleted): claim again. */
  RETRY_CLAIM: 'retry-claim',
  /**
   * The item is past its TTL: it counts as absent whether or not TTL deletion has happened, so replace
   * it with a fresh claim (conditional PutItem on `ttl < :nowSeconds`), whatever its payload.
   */
  RECLAIM_EXPIRED: 'reclaim-expired',
} as const;
export type ClaimDecisionKind = (typeof ClaimDecisionKind)[keyof typeof ClaimDecisionKind];

/** The outcome of {@link decideLostClaim}. */
export type ClaimDecision =
  | { readonly kind: typeof ClaimDecisionKind.CLAIMED; readonly attempt: number }
  | {
      readonly kind: typeof ClaimDecisionKind.REPLAY_RESULT;
      readonly resultJson: string | undefined;
      readonly attempt: number;
    }
  | { readonly kind: typeof ClaimDecisionKind.REPLAY_OMITTED_RESULT; readonly reason: string }
  | {
      readonly kind: typeof ClaimDecisionKind.REPLAY_FAILURE;
      readonly failure: StoredFailure;
      readonly failedAt: number | undefined;
    }
  | {
      readonly kind: typeof ClaimDecisionKind.IN_PROGRESS;
      readonly leaseExpiresAt: number;
      readonly retryAfterSeconds: number;
      readonly owner: string | undefined;
    }
  | { readonly kind: typeof ClaimDecisionKind.PAYLOAD_MISMATCH; readonly storedPayloadHash: string }
  | { readonly kind: typeof ClaimDecisionKind.RETRY_CLAIM; readonly reason: string }
  | { readonly kind: typeof ClaimDecisionKind.RECLAIM_EXPIRED };

/** Inputs of {@link decideLostClaim}. */
export interface LostClaimInput {
  /** The item returned by `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'` (undefined if none came back). */
  readonly old: LedgerRecord | undefined;
  /** Hash of this call's payload. */
  readonly payloadHash: string;
  /** The lease token this claim wrote. */
  readonly owner: string;
  /** The time the claim's condition used, epoch milliseconds. */
  readonly now: number;
}

/**
 * Decides what a claim that lost its condition means. Pure: the adapter feeds it the `ALL_OLD` item,
 * so a lost claim costs no second read.
 *
 * Order matters: a record past its TTL counts as absent (as if TTL deletion had happened); a payload
 * mismatch is reported before anything else (Stripe rejects a reused key with other parameters even
 * when the first request finished); then the status decides.
 *
 * @example
 * const decision = decideLostClaim({ old, payloadHash, owner, now });
 * if (decision.kind === ClaimDecisionKind.REPLAY_RESULT) return JSON.parse(decision.resultJson ?? 'null');
 */
export function decideLostClaim(input: LostClaimInput): ClaimDecision {
  const { old, payloadHash, owner, now } = input;
  if (old === undefined) return { kind: ClaimDecisionKind.RETRY_CLAIM, reason: 'no item came back with the failure' };
  if (isRecordExpired(old.ttl, now)) return { kind: ClaimDecisionKind.RECLAIM_EXPIRED };
  if (old.status === LedgerStatus.IN_PROGRESS && old.owner === owner) {
    return { kind: ClaimDecisionKind.CLAIMED, attempt: old.attempt };
  }
  if (old.payloadHash !== payloadHash) {
    return { kind: ClaimDecisionKind.PAYLOAD_MISMATCH, storedPayloadHash: old.payloadHash };
  }
  switch (old.status) {
    case LedgerStatus.SUCCEEDED:
      if (old.resultJson === undefined && old.resultOmitted !== undefined) {
        return { kind: ClaimDecisionKind.REPLAY_OMITTED_RESULT, reason: old.resultOmitted };
      }
      return { kind: ClaimDecisionKind.REPLAY_RESULT, resultJson: old.resultJson, attempt: old.attempt };
    case LedgerStatus.FAILED:
      return {
        kind: ClaimDecisionKind.REPLAY_FAILURE,
        failure: old.failure ?? { name: 'UnknownError', message: 'no reason stored' },
        failedAt: old.completedAt,
      };
    case LedgerStatus.IN_PROGRESS: {
      if (isLeaseExpired(old.leaseExpiresAt, now)) {
        return { kind: ClaimDecisionKind.RETRY_CLAIM, reason: 'the lease expired after the condition was checked' };
      }
      const leaseExpiresAt = old.leaseExpiresAt ?? now;
      return {
        kind: ClaimDecisionKind.IN_PROGRESS,
        leaseExpiresAt,
        retryAfterSeconds: retryAfterSeconds(leaseExpiresAt, now),
        owner: old.owner,
      };
    }
  }
}

/** What a lost complete/fail/release write means. */
export const HolderWriteDecisionKind = {
  /** The item already shows this holder's write (an SDK retry of a write that had succeeded). */
  ALREADY_APPLIED: 'already-applied',
  /** Another holder took over (or the item is gone): nothing may be overwritten. */
  LEASE_LOST: 'lease-lost',
} as const;
export type HolderWriteDecisionKind = (typeof HolderWriteDecisionKind)[keyof typeof HolderWriteDecisionKind];

/**
 * Decides what a lease holder's conditional write (`owner = :me AND status = IN_PROGRESS`) that lost
 * its condition means, from the `ALL_OLD` item.
 *
 * @example
 * decideLostHolderWrite({ old, owner: 'me', intended: LedgerStatus.SUCCEEDED }); // 'lease-lost' if owner changed
 */
export function decideLostHolderWrite(input: {
  readonly old: LedgerRecord | undefined;
  readonly owner: string;
  readonly intended: LedgerStatus;
}): HolderWriteDecisionKind {
  const { old, owner, intended } = input;
  if (old !== undefined && old.owner === owner && old.status === intended)
    return HolderWriteDecisionKind.ALREADY_APPLIED;
  return HolderWriteDecisionKind.LEASE_LOST;
}
