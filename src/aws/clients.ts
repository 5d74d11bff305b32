import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { WorkerConfigurationError } from '../errors.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';

/**
 * The SDK clients a worker talks to. Every adapter takes these injected, so tests can wrap them.
 * The dedupe ledger's DynamoDB client is not among them: `createDynamoDBClient` of
 * `rerun-pipeline/ledger` builds it with the same options, so a worker without a ledger never
 * loads (or bundles) `@aws-sdk/client-dynamodb`.
 */
export interface AwsClients {
  readonly s3: S3Client;
  readonly sqs: SQSClient;
}

/** Options for {@link createAwsClients}. */
export interface AwsClientOptions {
  /**
   * Custom endpoint (moto, LocalStack). When set, S3 uses path-style addressing.
   * @default undefined (the SDK's default endpoint resolution, i.e. real AWS or AWS_ENDPOINT_URL)
   */
  endpoint?: string | undefined;
  /**
   * AWS region.
   * @default the SDK's default chain (AWS_REGION, profile), else 'us-east-1'
   */
  region?: string | undefined;
  /**
   * Maximum attempts per request, including the first (SDK standard retry mode).
   * @default 3
   */
  maxAttempts?: number | undefined;
  /**
   * Give up on a connection that is not established within this time (then the SDK retries).
   * @default 5_000
   */
  connectionTimeoutMs?: number | undefined;
  /**
   * Give up on a request whose socket stays silent this long. It is an idle timeout, so a long
   * streaming GET that keeps receiving data is not cut; it must exceed SQS's longest long poll (20 s).
   * Without it a hung connection holds its whole batch until the function times out (S3's SDK
   * default is no timeout at all).
   * @default 30_000
   */
  requestTimeoutMs?: number | undefined;
  /**
   * Credentials of every client.
   * @default the SDK's default credential chain (environment, profile, container or instance role)
   */
  credentials?:
    | { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string | undefined }
    | undefined;
  /**
   * Receives the SDK's own warnings (see sdkLogger). Without a logger the SDK writes some warnings
   * straight to the console, around any logger of ours.
   * @default JSON lines at level warn on stderr
   */
  logger?: Logger | undefined;
}

/** The names of {@link AwsClientOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const AWS_CLIENT_OPTION_NAMES = {
  connectionTimeoutMs: true,
  credentials: true,
  endpoint: true,
  logger: true,
  maxAttempts: true,
  region: true,
  requestTimeoutMs: true,
} as const satisfies OptionNames<AwsClientOptions>;

/**
 * The SDK's logger interface (`trace/debug/info/warn/error(...content)`), fed into ours: the SDK's
 * warnings become entries of `logger`. Its `error` lines are dropped: the SDK logs every failed
 * command there, and each failure is thrown to the caller, who classifies it (an expected 404 or
 * 412 is no error). Its debug and info lines are dropped too.
 *
 * @example
 * new S3Client({ logger: sdkLogger(createLogger()) });
 */
export function sdkLogger(logger: Logger) {
  const text = (content: unknown[]) => content.map((c) => (typeof c === 'string' ? c : JSON.stringify(c))).join(' ');
  const drop = () => {};
  return {
    trace: drop,
    debug: drop,
    info: drop,
    warn: (...content: unknown[]) => logger.warn(`AWS SDK: ${text(content)}`),
    error: drop,
  };
}

/**
 * The settings every client of rerun shares (region, retries, timeouts, endpoint, credentials, the
 * SDK logger), for `createAwsClients` and the ledger's `createDynamoDBClient`.
 *
 * @example
 * new SQSClient(awsClientConfig({ endpoint: process.env.AWS_ENDPOINT_URL }));
 */
export function awsClientConfig(options: AwsClientOptions = {}) {
  const region = options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  return {
    region,
    logger: sdkLogger(
      options.logger ?? createLogger({ level: 'warn', sink: (line) => process.stderr.write(`${line}\n`) }),
    ),
    maxAttempts: options.maxAttempts ?? 3,
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? 5_000,
      // The SDK's socketTimeout is the idle timeout (its requestTimeout bounds the whole request,
      // which would cut a long streaming GET, and only warns by default).
      socketTimeout: options.requestTimeoutMs ?? 30_000,
    },
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: credentialsOf(options.credentials) } : {}),
  };
}

/**
 * Builds the S3 and SQS clients with one endpoint and region (the ledger's DynamoDB client:
 * `createDynamoDBClient` of `rerun-pipeline/ledger`, same options).
 *
 * Flexible checksums are computed only when an operation requires them: rerun sends its own
 * SHA-256 checksum on every output write (see src/s3/S3ObjectStore.ts), and skipping
 * response validation keeps done-checks to a HEAD.
 *
 * @example
 * const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL });
 */
export function createAwsClients(options: AwsClientOptions = {}): AwsClients {
  checkOptions('createAwsClients', options, AWS_CLIENT_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  const common = awsClientConfig(options);
  return {
    s3: new S3Client({
      ...common,
      forcePathStyle: Boolean(options.endpoint),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
    sqs: new SQSClient(common),
  };
}

/** The credentials as the SDK types them: no `sessionToken` key at all when there is none. */
function credentialsOf(credentials: NonNullable<AwsClientOptions['credentials']>) {
  const { accessKeyId, secretAccessKey, sessionToken } = credentials;
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}
