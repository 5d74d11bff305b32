import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { latestInputWindow } from '../../app/ui/consoleWindows.js';
import { defineWindowTask } from '../../src/window/defineWindowTask.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';

/** A monthly window stage over daily inputs keyed by `template` under `in/`. */
function monthlyOver(bucket: string, template: string) {
  return defineWindowTask({
    name: 'monthly',
    codeVersion: 'monthly@1',
    partitions: { kind: 'time', grain: 'monthly', template: '{yyyy}/{MM}' },
    inputs: [{ name: 'daily', bucket, prefix: 'in/', partitions: { kind: 'time', grain: 'daily', template } }],
    output: { bucket, prefix: 'out/', fileName: 'total.json' },
    async build() {
      return {};
    },
  });
}

describe("the console's latest input window (moto)", () => {
  it('walks the folders latest first, one listing per level, passing over folders that cannot hold a key', async () => {
    const clients = testClients();
    const bucket = await createBucket(clients.s3, uniqueName('latest'));
    for (const key of [
      'in/2025/03/14/a.csv',
      'in/2025/03/15/b.csv',
      // Sorted after every year, and later: a staging copy and a folder named like no day.
      'in/_staging/2025/09/01/h.json',
      'in/2025/misc/notes.txt',
      // Directly under the root: in no window.
      'in/readme.txt',
    ]) {
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
    }
    const log = new RequestLog();
    const found = await latestInputWindow(monthlyOver(bucket, '{yyyy}/{MM}/{dd}'), testClients(log).s3);
    expect(found).toEqual({ window: '2025-03-15', day: '2025-03-15' });
    // in/, in/2025/, in/2025/03/, in/2025/03/15/: neither _staging/ nor misc/ is listed.
    expect(log.count({ service: 'S3', operation: 'ListObjectsV2' })).toBe(4);
  });

  it('gives none for a template whose keys do not sort in time order, without listing', async () => {
    const clients = testClients();
    const bucket = await createBucket(clients.s3, uniqueName('latest'));
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/15-03-2025/a.csv', Body: 'a' }));
    const log = new RequestLog();
    expect(await latestInputWindow(monthlyOver(bucket, '{dd}-{MM}-{yyyy}'), testClients(log).s3)).toBeUndefined();
    expect(log.count()).toBe(0);
  });
});
