import { describe } from 'vitest';
import { boundedConfigs } from './configs.js';
import { exploreEach } from './exhaustive.js';

describe('the publish protocol with a multipart output or the summary stage, every interleaving, a crash at any request boundary', () => {
  exploreEach(
    boundedConfigs(1).filter((c) => /multipart|summary/.test(c.name)),
    150,
  );
});
