import { describe, expect, it } from 'vitest';
import { onceExitCode } from '../../app/cli/commands/dev.js';

describe('rerun dev --once exit codes', () => {
  it('is 0 only when the queue drained and nothing failed or waits in a DLQ', () => {
    expect(onceExitCode({ ended: 'drained', failed: 0, deadLettered: 0 })).toBe(0);
    expect(onceExitCode({ ended: 'drained', failed: 1, deadLettered: 0 })).toBe(3);
    expect(onceExitCode({ ended: 'drained', failed: 0, deadLettered: 2 })).toBe(3);
    expect(onceExitCode({ ended: 'drain-timeout', failed: 0, deadLettered: 0 })).toBe(1);
    expect(onceExitCode({ ended: 'interrupted', failed: 1, deadLettered: 1 })).toBe(130);
  });
});
