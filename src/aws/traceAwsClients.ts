/** What {@link traceAwsClients} instruments: any AWS SDK v3 client (a middleware is added to its stack). */
export interface TraceableAwsClient {
  readonly middlewareStack: object;
}

/**
 * Records every call of the AWS SDK clients in `clients` (S3, SQS, the ledger's DynamoDB) as an
 * X-Ray subsegment of the invocation's trace (aws-xray-sdk-core's `captureAWSv3Client`: a
 * middleware on each client), so a trace shows the calls a record made, not only the Lambda
 * segments. Returns the same clients.
 *
 * The X-Ray SDK is imported here, on the first call, and only then: a handler calls this when its
 * function traces (RERUN_TRACE_AWS_SDK, set by SqsWorker with active or pass-through tracing), so a
 * function without tracing never evaluates it (its async hooks cost on every await). It is part of
 * the reference bundles (about 110 KB minified, in a chunk of its own that only this `import()`
 * reads: see src/cdk/workerBundling.ts), not of the `rerun-pipeline` package's entry points: a
 * worker of yours adds `aws-xray-sdk-core` and does the same.
 *
 * @example
 * const clients = createAwsClients();
 * if (process.env.RERUN_TRACE_AWS_SDK === 'true') await traceAwsClients(clients);
 */
export async function traceAwsClients<T extends { readonly [K in keyof T]?: TraceableAwsClient }>(
  clients: T,
): Promise<T> {
  const loaded = await import('aws-xray-sdk-core');
  // A CommonJS package: Node.js gives its exports as the namespace's default, and so does the chunk
  // of a split bundle (which exports nothing else); a one-file bundle copies them onto the namespace.
  const xray = (loaded.default as typeof loaded.default | undefined) ?? loaded;
  // Calls made outside an invocation (the handler's init) have no segment to join: not an error.
  xray.setContextMissingStrategy('IGNORE_ERROR');
  for (const client of Object.values(clients)) {
    if (client) xray.captureAWSv3Client(client as Parameters<typeof xray.captureAWSv3Client>[0]);
  }
  return clients;
}
