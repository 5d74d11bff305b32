/** Which service a proxied request is for. `HTTP` is anything that is not an AWS API call (the webhook). */
export const Service = { S3: 'S3', SQS: 'SQS', DYNAMODB: 'DynamoDB', HTTP: 'HTTP' } as const;
export type Service = (typeof Service)[keyof typeof Service];

/** What a proxy knows about a request from its first line and headers (the body is never needed). */
export interface RequestIdentity {
  readonly service: Service;
  /** The API operation, e.g. `PutObject`, `ReceiveMessage`, `UpdateItem`; `POST` etc. for plain HTTP. */
  readonly operation: string;
  /** An S3 write carrying `If-None-Match` or `If-Match`: the only requests S3 answers 409 ConditionalRequestConflict. */
  readonly conditionalWrite: boolean;
  /** The bucket of an S3 request (path-style), when there is one. */
  readonly bucket?: string;
}

/** The parts of an HTTP request the classifier reads. */
export interface RawRequest {
  readonly method: string;
  /** Path and query, as on the request line. */
  readonly url: string;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * Names the AWS operation of a request made by an SDK v3 client, from what is on the wire: the SigV4
 * credential scope names the service (`.../us-east-1/s3/aws4_request`), JSON protocols (DynamoDB, and
 * SQS since SDK 3.446) name the operation in `X-Amz-Target`, and S3's REST operations follow from the
 * method, the path-style key and the sub-resources in the query string.
 *
 * @example
 * classifyAwsRequest({ method: 'HEAD', url: '/out/normalized/a.ndjson', headers: { authorization: '... /s3/aws4_request ...' } });
 * // { service: 'S3', operation: 'HeadObject', conditionalWrite: false, bucket: 'out' }
 */
export function classifyAwsRequest(request: RawRequest): RequestIdentity {
  const header = (name: string): string => {
    const value = request.headers[name];
    return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
  };
  const target = header('x-amz-target');
  if (target.startsWith('DynamoDB_')) {
    return { service: Service.DYNAMODB, operation: target.split('.')[1] ?? 'Unknown', conditionalWrite: false };
  }
  if (target.startsWith('AmazonSQS.')) {
    return { service: Service.SQS, operation: target.split('.')[1] ?? 'Unknown', conditionalWrite: false };
  }
  const scope = /Credential=[^/]+\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(header('authorization'))?.[1];
  if (scope === 'sqs') return { service: Service.SQS, operation: 'Query', conditionalWrite: false };
  if (scope === 'dynamodb') return { service: Service.DYNAMODB, operation: 'Unknown', conditionalWrite: false };
  if (scope !== 's3') {
    return { service: Service.HTTP, operation: request.method.toUpperCase(), conditionalWrite: false };
  }
  return classifyS3(request.method.toUpperCase(), request.url, header);
}

function classifyS3(method: string, url: string, header: (name: string) => string): RequestIdentity {
  const parsed = new URL(url, 'http://proxy');
  const segments = parsed.pathname.split('/').filter((s, i) => i > 0 || s !== '');
  const bucket = segments[0] ? decodeURIComponent(segments[0]) : undefined;
  const hasKey = segments.length > 1 && segments.slice(1).join('/') !== '';
  const q = parsed.searchParams;
  const conditional = header('if-none-match') !== '' || header('if-match') !== '';
  const result = (operation: string, conditionalWrite = false): RequestIdentity => ({
    service: Service.S3,
    operation,
    conditionalWrite,
    ...(bucket ? { bucket } : {}),
  });
  if (!hasKey) {
    if (q.has('notification'))
      return result(method === 'PUT' ? 'PutBucketNotificationConfiguration' : 'GetBucketNotificationConfiguration');
    if (q.has('uploads')) return result('ListMultipartUploads');
    if (q.has('delete')) return result('DeleteObjects');
    if (q.has('lifecycle'))
      return result(method === 'PUT' ? 'PutBucketLifecycleConfiguration' : 'GetBucketLifecycleConfiguration');
    switch (method) {
      case 'HEAD':
        return result('HeadBucket');
      case 'PUT':
        return result('CreateBucket');
      case 'DELETE':
        return result('DeleteBucket');
      case 'GET':
        return result(q.get('list-type') === '2' ? 'ListObjectsV2' : bucket ? 'ListObjects' : 'ListBuckets');
      default:
        return result(`${method}Bucket`);
    }
  }
  switch (method) {
    case 'HEAD':
      return result('HeadObject');
    case 'GET':
      return result(q.has('uploadId') ? 'ListParts' : q.has('tagging') ? 'GetObjectTagging' : 'GetObject');
    case 'PUT':
      if (q.has('partNumber') && q.has('uploadId'))
        return result(header('x-amz-copy-source') ? 'UploadPartCopy' : 'UploadPart');
      if (header('x-amz-copy-source')) return result('CopyObject', conditional);
      if (q.has('tagging')) return result('PutObjectTagging');
      return result('PutObject', conditional);
    case 'POST':
      if (q.has('uploads')) return result('CreateMultipartUpload');
      if (q.has('uploadId')) return result('CompleteMultipartUpload', conditional);
      return result('PostObject');
    case 'DELETE':
      return result(q.has('uploadId') ? 'AbortMultipartUpload' : 'DeleteObject');
    default:
      return result(`${method}Object`);
  }
}
