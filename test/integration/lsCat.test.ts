import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';
import { rerunCli } from '../support/summaryPipeline.js';

describe('rerun ls and rerun cat, at the endpoint in use', () => {
  const clients = testClients();

  it('ls lists the keys under a prefix; cat prints an object; a missing key says what to run', async () => {
    const bucket = await createBucket(clients.s3, uniqueName('lc'));
    await clients.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'normalized/a b.ndjson', Body: '{"a":1}\n{"a":2}\n' }),
    );
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'other/x', Body: 'x' }));
    const ls = await rerunCli(['ls', `s3://${bucket}/normalized/`]);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toEqual([expect.stringMatching(/^\s+16 {2}\d{4}-\d\d-\d\dT.* {2}normalized\/a b\.ndjson$/)]);
    const cat = await rerunCli(['cat', `s3://${bucket}/normalized/a b.ndjson`]);
    expect(cat.code, cat.stderr).toBe(0);
    expect(cat.stdout).toEqual(['{"a":1}', '{"a":2}']);
    const missing = await rerunCli(['cat', `s3://${bucket}/normalized/none`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No object .*rerun ls s3:\/\//);
    expect((await rerunCli(['ls', 'not-a-uri'])).code).toBe(2);
  });
});
