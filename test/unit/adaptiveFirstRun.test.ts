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
    feed(policy, 'incoming', 40, false);
    feed(policy, 'incoming', 3, true, 40);
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
    feed(policy, 'incoming', 40, false);
    feed(policy, 'incoming', 1, true, 40);
    expect(policy.prefixState(at('incoming/x'))?.rate).toBeGreaterThan(0);
    expect(policy.choose(at('incoming/x'))).toBe(FirstRunPath.CREATE);
    feed(policy, 'incoming', 1, true, 41);
    expect(policy.choose(at('incoming/x'))).toBe(FirstRunPath.CREATE);
    feed(policy, 'incoming', 1, true, 42);
    expect(policy.choose(at('incoming/x'))).toBe(FirstRunPath.CHECK);
  });

  it("a prefix's first output found in place turns it to checking first: a re-upload pays one wasted create, not three", () => {
    const policy = new AdaptiveFirstRun();
    expect(policy.choose(at('daily/a.csv'))).toBe(FirstRunPath.CREATE);
    feed(policy, 'daily', 1, true);
    expect(policy.prefixState(at('daily/x'))).toEqual({ rate: 1, path: FirstRunPath.CHECK });
    for (let i = 1; i < 200; i++) {
      expect(policy.choose(at(`daily/f${i}.csv`))).toBe(FirstRunPath.CHECK);
      policy.observe(at(`daily/f${i}.csv`), { outputInPlace: true });
    }
  });

  it('counts its first deliveries at their plain mean, then as a moving average of weight 1/32', () => {
    const policy = new AdaptiveFirstRun();
    feed(policy, 'p', 3, false);
    feed(policy, 'p', 1, true, 3);
    expect(policy.prefixState(at('p/x'))?.rate).toBeCloseTo(1 / 4, 12);
    feed(policy, 'p', 28, false, 4);
    expect(policy.prefixState(at('p/x'))?.rate).toBeCloseTo(1 / 32, 12);
    // From the 33rd on, the newest weighs 1/32 and no longer 1/33.
    feed(policy, 'p', 1, true, 32);
    expect(policy.prefixState(at('p/x'))?.rate).toBeCloseTo(1 / 32 + (1 - 1 / 32) / 32, 12);
  });

  it('append-only whose first delivery is a duplicate: checks first for a bounded run, then creates first again', () => {
    const policy = new AdaptiveFirstRun();
    feed(policy, 'incoming', 1, true);
    let checks = 0;
    for (let i = 1; i < 200; i++) {
      if (policy.choose(at(`incoming/f${i}.csv`)) === FirstRunPath.CHECK) checks++;
      policy.observe(at(`incoming/f${i}.csv`), { outputInPlace: false });
    }
    // The mean of 1 in n falls under CREATE_FIRST_BELOW (5 %) at n = 21: 20 new objects pay a HEAD.
    expect(checks).toBe(20);
    expect(policy.choose(at('incoming/next.csv'))).toBe(FirstRunPath.CREATE);
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

  it("unknownPrefix: 'check' probes a prefix's first delivery with the HEAD, then follows what it found", () => {
    const policy = new AdaptiveFirstRun({ unknownPrefix: FirstRunPath.CHECK });
    expect(policy.decide(at('append/a.csv'))).toEqual({
      path: FirstRunPath.CHECK,
      reason: FirstRunReason.PREFIX_UNKNOWN,
    });
    policy.observe(at('append/a.csv'), { outputInPlace: false });
    expect(policy.choose(at('append/b.csv'))).toBe(FirstRunPath.CREATE);
    expect(policy.choose(at('daily/a.csv'))).toBe(FirstRunPath.CHECK);
    policy.observe(at('daily/a.csv'), { outputInPlace: true });
    expect(policy.decide(at('daily/b.csv')).reason).toBe(FirstRunReason.PREFIX_OFTEN_IN_PLACE);
    // The default creates first where it knows nothing.
    expect(new AdaptiveFirstRun().choose(at('daily/a.csv'))).toBe(FirstRunPath.CREATE);
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
    expect(() => new AdaptiveFirstRun({ unknownPrefix: 'adaptive' as FirstRunPath })).toThrow(/"unknownPrefix"/);
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
