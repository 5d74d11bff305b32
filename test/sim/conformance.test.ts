import { describe, it } from 'vitest';
import { createPipelineClients } from '../../src/ledger/pipelineClients.js';
import { awsEndpoint, uniqueName } from '../support/aws.js';
import { checkConformance } from './conformance/conformance.js';

describe('the in-memory models against moto: the same requests, the same answers', () => {
  it('replays the scripted and the recorded sequences on both, and moto differs only where docs/EMULATORS.md says', async () => {
    const clients = createPipelineClients({ endpoint: awsEndpoint(), region: 'us-east-1' });
    await checkConformance('moto', clients, uniqueName('conf'));
  }, 180_000);
});
