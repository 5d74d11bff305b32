import { describe, expect, it } from 'vitest';
import {
  ClaimDecisionKind,
  decideLostClaim,
  decideLostHolderWrite,
  HolderWriteDecisionKind,
} from '../../src/ledger/ledgerDecision.js';
import { type LedgerRecord, LedgerStatus } from '../../src/ledger/ledgerRecord.js';

const NOW = 1_700_000_000_000;
const base: LedgerRecord = {
  dedupeKey: 'k',
  status: LedgerStatus.IN_PROGRESS,
  payloadHash: 'h1',
  attempt: 1,
  owner: 'other',
  leaseExpiresAt: NOW + 10_000,
  createdAt: NOW - 1_000,
  completedAt: undefined,
  ttl: NOW / 1000 + 3600,
  resultJson: undefined,
  resultOmitted: undefined,
  failure: undefined,
  lastError: undefined,
};
const decide = (old: Partial<LedgerRecord> | undefined, payloadHash = 'h1', owner = 'me') =>
  decideLostClaim({ old: old === undefined ? undefined : { ...base, ...old }, payloadHash, owner, now: NOW });

describe('decideLostClaim', () => {
  it('replays the stored result of a succeeded key', () => {
    expect(decide({ status: LedgerStatus.SUCCEEDED, resultJson: '{"a":1}', attempt: 2 })).toEqual({
      kind: ClaimDecisionKind.REPLAY_RESULT,
      resultJson: '{"a":1}',
      attempt: 2,
    });
  });

  it('reports a succeeded key whose result was not storable instead of running it again', () => {
    expect(decide({ status: LedgerStatus.SUCCEEDED, resultOmitted: 'too big' })).toEqual({
      kind: ClaimDecisionKind.REPLAY_OMITTED_RESULT,
      reason: 'too big',
    });
  });

  it('replays a stored terminal failure', () => {
    const failure = { name: 'WebhookDeliveryError', message: '400' };
    expect(decide({ status: LedgerStatus.FAILED, failure, completedAt: NOW - 5 })).toEqual({
      kind: ClaimDecisionKind.REPLAY_FAILURE,
      failure,
      failedAt: NOW - 5,
    });
  });

  it('replays a failed key that stored no failure as an unknown error, with a reason to show', () => {
    const decision = decide({ status: LedgerStatus.FAILED, failure: undefined, completedAt: NOW - 5 });
    expect(decision).toMatchObject({ kind: ClaimDecisionKind.REPLAY_FAILURE, failedAt: NOW - 5 });
    const failure = decision.kind === ClaimDecisionKind.REPLAY_FAILURE ? decision.failure : undefined;
    expect(failure?.name).toBe('UnknownError');
    expect(failure?.message).toMatch(/\S/);
  });

  it('defers while another holder has a live lease, until strictly after it ends', () => {
    expect(decide({ leaseExpiresAt: NOW + 10_000 })).toEqual({
      kind: ClaimDecisionKind.IN_PROGRESS,
      leaseExpiresAt: NOW + 10_000,
      retryAfterSeconds: 11,
      owner: 'other',
    });
    expect(decide({ leaseExpiresAt: NOW })).toMatchObject({
      kind: ClaimDecisionKind.IN_PROGRESS,
      retryAfterSeconds: 1,
    });
  });

  it('claims again when the lease turned out expired or the item is gone', () => {
    expect(decide({ leaseExpiresAt: NOW - 1 }).kind).toBe(ClaimDecisionKind.RETRY_CLAIM);
    expect(decide(undefined).kind).toBe(ClaimDecisionKind.RETRY_CLAIM);
  });

  it('replaces a record past its TTL, whatever its state or payload (TTL deletion is lazy)', () => {
    for (const status of Object.values(LedgerStatus)) {
      const failure = status === LedgerStatus.FAILED ? { name: 'E', message: 'm' } : undefined;
      expect(decide({ status, failure, ttl: NOW / 1000 - 1 }, 'h2')).toEqual({
        kind: ClaimDecisionKind.RECLAIM_EXPIRED,
      });
    }
    // At the TTL second itself the record still counts (the condition is `ttl < :nowSeconds`).
    expect(decide({ status: LedgerStatus.SUCCEEDED, ttl: NOW / 1000, resultJson: '1' }).kind).toBe(
      ClaimDecisionKind.REPLAY_RESULT,
    );
  });

  it('rejects another payload before anything else, even on a finished key', () => {
    for (const status of Object.values(LedgerStatus)) {
      const failure = status === LedgerStatus.FAILED ? { name: 'E', message: 'm' } : undefined;
      expect(decide({ status, failure }, 'h2')).toEqual({
        kind: ClaimDecisionKind.PAYLOAD_MISMATCH,
        storedPayloadHash: 'h1',
      });
    }
  });

  it('replays a succeeded key whose effect returned nothing (no result, none omitted)', () => {
    expect(decide({ status: LedgerStatus.SUCCEEDED, attempt: 2 })).toEqual({
      kind: ClaimDecisionKind.REPLAY_RESULT,
      resultJson: undefined,
      attempt: 2,
    });
  });

  it('replays a key this owner itself completed instead of calling it claimed', () => {
    expect(decide({ owner: 'me', status: LedgerStatus.SUCCEEDED, resultJson: '1', attempt: 2 })).toEqual({
      kind: ClaimDecisionKind.REPLAY_RESULT,
      resultJson: '1',
      attempt: 2,
    });
  });

  it('recognises its own claim after an SDK retry of a claim whose response was lost', () => {
    expect(decide({ owner: 'me', attempt: 3 })).toEqual({ kind: ClaimDecisionKind.CLAIMED, attempt: 3 });
  });
});

describe('decideLostHolderWrite', () => {
  it('accepts a write that already shows this holder as done (SDK retry)', () => {
    const old = { ...base, owner: 'me', status: LedgerStatus.SUCCEEDED };
    expect(decideLostHolderWrite({ old, owner: 'me', intended: LedgerStatus.SUCCEEDED })).toBe(
      HolderWriteDecisionKind.ALREADY_APPLIED,
    );
  });

  it('does not take a record still in progress under this holder for its completed write', () => {
    const old = { ...base, owner: 'me', status: LedgerStatus.IN_PROGRESS };
    expect(decideLostHolderWrite({ old, owner: 'me', intended: LedgerStatus.SUCCEEDED })).toBe(
      HolderWriteDecisionKind.LEASE_LOST,
    );
  });

  it('reports a lost lease when another holder owns the item or it is gone', () => {
    expect(decideLostHolderWrite({ old: base, owner: 'me', intended: LedgerStatus.SUCCEEDED })).toBe(
      HolderWriteDecisionKind.LEASE_LOST,
    );
    const theirs = { ...base, owner: 'other', status: LedgerStatus.SUCCEEDED };
    expect(decideLostHolderWrite({ old: theirs, owner: 'me', intended: LedgerStatus.SUCCEEDED })).toBe(
      HolderWriteDecisionKind.LEASE_LOST,
    );
    expect(decideLostHolderWrite({ old: undefined, owner: 'me', intended: LedgerStatus.FAILED })).toBe(
      HolderWriteDecisionKind.LEASE_LOST,
    );
  });
});
