import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/** Creates a bucket (a fresh unique name per test, see uniqueName). */
export async function createBucket(s3: S3Client, bucket: string): Promise<string> {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

/** Reads a whole object as UTF-8 (tests only: small objects). */
export async function readText(s3: S3Client, bucket: string, key: string): Promise<string> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await out.Body?.transformToString('utf8')) ?? '';
}

/** Every key in a bucket, sorted. */
export async function listKeys(s3: S3Client, bucket: string, prefix?: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const out = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token, ...(prefix ? { Prefix: prefix } : {}) }),
    );
    for (const o of out.Contents ?? []) if (o.Key) keys.push(o.Key);
    token = out.NextContinuationToken;
  } while (token);
  return keys.sort();
}
