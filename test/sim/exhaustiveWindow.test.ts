import { describe } from 'vitest';
import { exploreEach } from './exhaustive.js';
import { windowTaskConfigs } from './windowConfigs.js';

describe("a user's window task (defineWindowTask), every interleaving: racing deliveries, a late input, a crash at any request boundary", () => {
  exploreEach([...windowTaskConfigs(0), ...windowTaskConfigs(1)], 400);
});
