import { describe } from 'vitest';
import { boundedConfigs } from './configs.js';
import { exploreEach } from './exhaustive.js';

describe('the publish protocol, every interleaving of the bounded configurations, no crash', () => {
  exploreEach(boundedConfigs(0), 400);
});
