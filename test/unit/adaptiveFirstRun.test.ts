import { describe, expect, it } from 'vitest';
import {
  AdaptiveFirstRun,
  CHECK_FIRST_ABOVE,
  CREATE_FIRST_BELOW,
  FIRST_RUN_BREAK_EVEN,
  FirstRunPath,
  FirstRunReason,
} from '../../src/worker/adaptiveFirstRun.js';
import { defineWorker } from '../../src/worker/defineWorker.js';

const at = (key: string, eTag?: string) => ({ bucket: 'in', key, ...(eTag ? { eTag } : {}) });

/** Feeds `n` fresh deliveries under `dir/` that found (or not) an output in place. */
function feed(policy: AdaptiveFirstRun, dir: string, n: number, outputInPlace: boolean, from = 0): void {
  for (let i = 0; i < n; i++) policy.observe(at(`${dir}/f${from + i}.csv`), { outputInPlace });
}

describe('AdaptiveFirstRun: the per-prefix rate of outputs found in place', () => {
  it('the thresholds sit either side of the measured 7 % break-even', () => {
    expect(CREATE_FIRST_BELOW).toBeLessThan(FIRST_RUN_BREAK_EVEN);
    expect(CHECK_FIRST_ABOVE).toBeGreaterThan(FIRST_RUN_BREAK_EVEN);
  });

  it('creates first for a prefix it knows nothing of', () => {
    const policy = new AdaptiveFirstRun();
    expect(policy.decide(at('incoming/a.csv'))).toEqual({
      path: FirstRunPath.CREATE,
      reason: FirstRunReason.PREFIX_MOSTLY_NEW,
    });
  });

  it('keeps creating first through new objects with 1 % duplicates (append-only)', () => {
    const policy = new AdaptiveFirstRun();
    for (let i = 0; i < 2000; i++) {
      policy.observe(at(`incoming/f${i}.csv`), { outputInPlace: i % 100 === 50 });
      expect(policy.choose(at(`incoming/g${i}.csv`))).toBe(FirstRunPath.CREATE);
    }
    expect(policy.prefixState(at('incoming/x.csv'))?.rate).toBeLessThan(CHECK_FIRST_ABOVE);
  });

  it('turns to checking first after a run of overwrites, and stays there at 20 % overwrites (mutable)', () => {
    const policy = new AdaptiveFirstRun();
    feed(policy, 'incoming', 3, true);
    expect(policy.decide(at('incoming/new.csv'))).toEqual({
      path: FirstRunPath.CHECK,
      reason: FirstRunReason.PREFIX_OFTEN_IN_PLACE,
    });
    for (let i = 0; i < 2000; i++) {
      policy.observe(at(`incoming/m${i}.csv`), { outputInPlace: i % 5 === 0 });
      expect(policy.choose(at('incoming/new.csv'))).toBe(FirstRunPath.CHECK);
    }
  });

  it('one output in place among new objects does not turn the prefix over (hysteresis on the way up)', () => {
    const policy = new AdaptiveFirstRun();
    feed(policy, 'incoming', 1, true);
    expect(policy.prefixState(at('incoming/x'))?.rate).toBeGreaterThan(0);
    expect(policy.choose(at('incoming/x'))).toBe(FirstRunPath.CREATE);
    feed(policy, 'incoming', 1, true, 1);
    expect(policy.choose(at('incoming/x'))).toBe(FirstRunPath.CREATE);
    feed(policy, 'incoming', 1, true, 2);
    expect(policy.choose(at('incoming/x'))).toBe(FirstRunPath.CHECK);
  });

  it('comes back to creating first only once the rate falls below the lower threshold, not at the break-even (no flapping)', () => {
    const policy = new AdaptiveFirstRun();
    feed(policy, 'incoming', 10, true);
    let newSince = 0;
    let crossedBreakEvenAt: number | undefined;
    while (policy.choose(at('incoming/x')) === FirstRunPath.CHECK) {
      feed(policy, 'incoming', 1, false, 100 + newSince);
      newSince++;
      const rate = policy.prefixState(at('incoming/x'))?.rate ?? 1;
      if (crossedBreakEvenAt === undefined && rate < CHECK_FIRST_ABOVE) crossedBreakEvenAt = newSince;
      expect(newSince).toBeLessThan(500);
    }
    expect(crossedBreakEvenAt).toBeDefined();
    expect(newSince).toBeGreaterThan(crossedBreakEvenAt as number);
    expect(policy.prefixState(at('incoming/x'))?.rate).toBeLessThan(CREATE_FIRST_BELOW);
    // And one more output in place does not turn it straight back.
    feed(policy, 'incoming', 1, true, 900);
    expect(policy.choose(at('incoming/x'))).toBe(FirstRunPath.CREATE);
  });

  it('keeps one rate per directory and bucket', () => {
    const policy = new AdaptiveFirstRun();
    feed(policy, 'mutable', 5, true);
    expect(policy.choose(at('mutable/a.csv'))).toBe(FirstRunPath.CHECK);
    expect(policy.choose(at('append/a.csv'))).toBe(FirstRunPath.CREATE);
    expect(policy.choose(at('mutable/deeper/a.csv'))).toBe(FirstRunPath.CREATE);
    expect(policy.choose({ bucket: 'other', key: 'mutable/a.csv' })).toBe(FirstRunPath.CREATE);
  });

  it('holds at most maxPrefixes rates, dropping the least recently seen', () => {
    const policy = new AdaptiveFirstRun({ maxPrefixes: 2 });
    feed(policy, 'a', 5, true);
    feed(policy, 'b', 5, true);
    feed(policy, 'a', 1, true, 10); // a is now more recent than b
    feed(policy, 'c', 1, false);
    expect(policy.size.prefixes).toBe(2);
    expect(policy.prefixState(at('b/x'))).toBeUndefined();
    expect(policy.choose(at('b/x'))).toBe(FirstRunPath.CREATE);
    expect(policy.choose(at('a/x'))).toBe(FirstRunPath.CHECK);
  });

  it('is deterministic: the same observations give the same answers', () => {
    const run = () => {
      const policy = new AdaptiveFirstRun();
      const answers: string[] = [];
      for (let i = 0; i < 300; i++) {
        policy.observe(at(`p${i % 3}/f${i}`), { outputInPlace: (i * 7) % 11 < 2 });
        answers.push(policy.choose(at(`p${i % 3}/g`)));
      }
      return answers;
    };
    expect(run()).toEqual(run());
  });

  it('refuses settings that cannot work, by name', () => {
    expect(() => new AdaptiveFirstRun({ maxKeys: 0 })).toThrow(/"maxKeys"/);
    expect(() => new AdaptiveFirstRun({ maxPrefixes: 1.5 })).toThrow(/"maxPrefixes"/);
    expect(() => new AdaptiveFirstRun({ weight: 0 })).toThrow(/"weight"/);
    expect(() => new AdaptiveFirstRun({ checkAbove: 0.01, createBelow: 0.2 })).toThrow(/createBelow <= checkAbove/);
  });
});

describe('AdaptiveFirstRun: the memory of keys this sandbox built', () => {
  it('a re-upload of the bytes it built checks first, whatever the prefix rate says', () => {
    const policy = new AdaptiveFirstRun();
    policy.settle(at('incoming/a.csv'), 'e1');
    expect(policy.decide(at('incoming/a.csv', '"e1"'))).toEqual({
      path: FirstRunPath.CHECK,
      reason: FirstRunReason.SAME_BYTES_BUILT_HERE,
    });
    expect(policy.choose(at('incoming/b.csv', '"e1"'))).toBe(FirstRunPath.CREATE);
  });

  it('new bytes at a key it built check first too: the output is in place, a create would answer 412', () => {
    const policy = new AdaptiveFirstRun();
    policy.settle(at('incoming/a.csv'), 'e1');
    expect(policy.decide(at('incoming/a.csv', 'e2')).reason).toBe(FirstRunReason.KEY_BUILT_HERE);
  });

  it('forgets a key whose delivery ended with no output (the input was gone)', () => {
    const policy = new AdaptiveFirstRun();
    policy.settle(at('incoming/a.csv'), 'e1');
    policy.settle(at('incoming/a.csv'), undefined);
    expect(policy.choose(at('incoming/a.csv', 'e1'))).toBe(FirstRunPath.CREATE);
  });

  it('holds at most maxKeys keys, dropping the least recently used (a choice counts as a use)', () => {
    const policy = new AdaptiveFirstRun({ maxKeys: 2 });
    policy.settle(at('k/1'), 'e1');
    policy.settle(at('k/2'), 'e2');
    policy.choose(at('k/1', 'e1'));
    policy.settle(at('k/3'), 'e3');
    expect(policy.size.keys).toBe(2);
    expect(policy.choose(at('k/2', 'e2'))).toBe(FirstRunPath.CREATE);
    expect(policy.choose(at('k/1', 'e1'))).toBe(FirstRunPath.CHECK);
    expect(policy.choose(at('k/3', 'e3'))).toBe(FirstRunPath.CHECK);
  });
});

describe("defineWorker's firstRun", () => {
  const base = {
    name: 'w',
    codeVersion: '1',
    outputBucket: 'out',
    outputKey: () => 'k',
    async transform() {
      return {};
    },
  };

  it("accepts 'adaptive' (the default when absent), 'create' and 'check'", () => {
    for (const firstRun of ['adaptive', 'create', 'check'] as const) {
      expect(defineWorker({ ...base, firstRun }).firstRun).toBe(firstRun);
    }
    expect(defineWorker(base).firstRun).toBeUndefined();
  });

  it('refuses a misspelt value by name, listing the values it takes', () => {
    expect(() => defineWorker({ ...base, firstRun: 'adaptative' as 'adaptive' })).toThrow(
      /"firstRun" must be 'adaptive', 'create', 'check', not "adaptative"/,
    );
  });
});
