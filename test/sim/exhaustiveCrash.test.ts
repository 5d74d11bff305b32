import { describe } from 'vitest';
import { boundedConfigs } from './configs.js';
import { exploreEach } from './exhaustive.js';

describe('the publish protocol, every interleaving of the bounded configurations, a crash at any request boundary', () => {
  exploreEach(boundedConfigs(1), 150);
});
