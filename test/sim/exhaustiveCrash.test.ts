import { describe } from 'vitest';
import { boundedConfigs } from './configs.js';
import { exploreEach } from './exhaustive.js';

// The multipart and summary configurations with a crash are in exhaustiveCrashMultipart.test.ts: two
// files, so that the tier's two workers share the crash configurations' CPU time.
describe('the publish protocol, every interleaving of the bounded configurations, a crash at any request boundary', () => {
  exploreEach(
    boundedConfigs(1).filter((c) => !/multipart|summary/.test(c.name)),
    150,
  );
});
