import { describe, it } from 'vitest';
import { checkConformance } from '../sim/conformance/conformance.js';
import { uniqueName } from '../support/aws.js';
import { deployedClients } from './support/deployedStack.js';

/**
 * The simulation tier's differential conformance on MiniStack: the scripted and recorded request
 * sequences replayed on the in-memory models and on MiniStack (on resources of their own, not the
 * stack's), answer by answer (test/sim/conformance/).
 */
describe('the in-memory models against MiniStack: the same requests, the same answers', () => {
  it('replays the scripted and the recorded sequences on both, and MiniStack differs only where docs/EMULATORS.md says', async () => {
    await checkConformance('ministack', deployedClients(), uniqueName('conf'));
  }, 300_000);
});
