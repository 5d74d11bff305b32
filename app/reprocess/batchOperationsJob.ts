/**
 * The pure half of `rerun reprocess --engine batch-operations`: the engine choice, the CSV manifest
 * rerun writes from its plan, the CreateJob request with its deterministic ClientRequestToken, and
 * the completion report's reading. No SDK import: app/reprocess/batchOperationsEngine.ts talks to
 * S3 and S3 Control.
 */
import { createHash } from 'node:crypto';
import { RerunError } from '../../src/errors.js';
import { encodeManifestKey } from '../../src/intake/parseBatchOperationsEvent.js';
import { splitCsvLine } from '../../src/intake/splitCsvLine.js';

/** How `rerun reprocess` runs the planned inputs. */
export const ReprocessEngine = {
  /** One S3-event-shaped message per input on the work queue (the default). */
  SQS: 'sqs',
  /** One S3 Batch Operations job (LambdaInvoke) over a manifest of the inputs. */
  BATCH_OPERATIONS: 'batch-operations',
  /** Plan first, then the SQS engine below {@link AUTO_BATCH_OPERATIONS_THRESHOLD} inputs, a job from there. */
  AUTO: 'auto',
} as const;
export type ReprocessEngine = (typeof ReprocessEngine)[keyof typeof ReprocessEngine];

/**
 * Planned inputs from which `--engine auto` runs a Batch Operations job instead of SQS messages.
 *
 * Not a cost break-even, because there is none: priced from list prices and counted requests
 * (bench/reprocessEngineCost.ts, printed by `npm run bench -- --only sharding`), the SQS engine
 * costs about $0.15 per million inputs (0.3 SQS requests and 0.1 Lambda invocations per input,
 * and the plan's LISTs) and a job $0.25 plus about $1.40 per million ($1.00 of Batch Operations
 * fees and one Lambda invocation per object): $15 against $120 for 100 M objects. A job is chosen
 * for what the money buys: from a million inputs the SQS engine keeps the operator's machine
 * sending 100,000 SendMessageBatch calls (and up for `--wait`), while a job runs in AWS, retries
 * and reports by itself; the extra cost is then about a dollar per million. Below it the SQS
 * engine is cheaper and starts at once (a job spends minutes preparing before its first task).
 * It stays under the 2,000,000 rows rerun builds a manifest of. A constant, not an option: pass
 * `--engine` to choose otherwise.
 */
export const AUTO_BATCH_OPERATIONS_THRESHOLD = 1_000_000;

/**
 * The engine `auto` picks for a plan of `planned` inputs.
 *
 * @example
 * autoEngine(10); // 'sqs'
 */
export function autoEngine(planned: number): typeof ReprocessEngine.SQS | typeof ReprocessEngine.BATCH_OPERATIONS {
  return planned >= AUTO_BATCH_OPERATIONS_THRESHOLD ? ReprocessEngine.BATCH_OPERATIONS : ReprocessEngine.SQS;
}

/** The plan does not fit the manifest rerun builds in memory, or a manifest is not usable. */
export class BatchOperationsManifestError extends RerunError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { retryable: false, ...options });
    this.name = 'BatchOperationsManifestError';
  }
}

/**
 * Rows rerun writes into one manifest at most. The manifest is built in memory (about 100 bytes a
 * row, so up to about 200 MB) and written with one create-only PUT; a larger reprocess should not
 * be planned from one machine at all: pass an S3 Inventory manifest (`--manifest`).
 */
export const MAX_MANIFEST_ROWS = 2_000_000;

/**
 * A `S3BatchOperations_CSV_20180820` manifest built from a plan: `bucket,key` per line, keys
 * URL-encoded with {@link encodeManifestKey}, in plan order (the planner's key order), so the
 * same plan gives the same bytes, the same SHA-256 and the same key.
 *
 * @example
 * const m = new ManifestBuilder(); m.add('in', 'incoming/a b.csv'); m.text(); // 'in,incoming/a%20b.csv\n'
 */
export class ManifestBuilder {
  private readonly lines: string[] = [];

  constructor(private readonly maxRows = MAX_MANIFEST_ROWS) {}

  add(bucket: string, key: string): void {
    if (this.lines.length >= this.maxRows) {
      throw new BatchOperationsManifestError(
        `the plan has more than ${this.maxRows} inputs, more than rerun builds a manifest of in memory: ` +
          'pass an S3 Inventory manifest of the input bucket with --manifest (no planning runs on this machine), ' +
          'or reprocess narrower prefixes.',
      );
    }
    // A bucket name never needs quoting; an encoded key has no comma, quote or line break.
    this.lines.push(`${bucket},${encodeManifestKey(key)}`);
  }

  get rows(): number {
    return this.lines.length;
  }

  text(): string {
    return this.lines.length === 0 ? '' : `${this.lines.join('\n')}\n`;
  }

  /** Hex SHA-256 of {@link text}. */
  digest(): string {
    return createHash('sha256').update(this.text()).digest('hex');
  }
}

/** The manifest formats CreateJob reads (JobManifestSpec.Format). */
export const ManifestFormat = {
  CSV: 'S3BatchOperations_CSV_20180820',
  INVENTORY: 'S3InventoryReport_CSV_20161130',
} as const;
export type ManifestFormat = (typeof ManifestFormat)[keyof typeof ManifestFormat];

/**
 * The format of a manifest given by URL: an S3 Inventory report is named by its `manifest.json`
 * (S3 User Guide, "Specifying a manifest"), anything else is read as a CSV of `bucket,key`.
 *
 * @example
 * manifestFormatOf('inv/in/all/2026-12-01T00-00Z/manifest.json'); // 'S3InventoryReport_CSV_20161130'
 */
export function manifestFormatOf(key: string): ManifestFormat {
  return key.endsWith('manifest.json') ? ManifestFormat.INVENTORY : ManifestFormat.CSV;
}

/**
 * Batch Operations' manifest generator: S3 lists the source bucket itself when the job starts, so
 * no listing runs on the operator's machine (S3 API Reference, S3JobManifestGenerator and
 * JobManifestGeneratorFilter: KeyNameConstraint.MatchAnyPrefix, CreatedAfter, CreatedBefore).
 * Every object that matches is a task: there is no plan, so the worker's done-check decides.
 */
export interface ManifestGeneratorSpec {
  readonly generator: {
    readonly sourceBucket: string;
    /** Only keys under this prefix. */
    readonly prefix: string;
    /** Only objects created after this instant. */
    readonly createdAfter?: Date | undefined;
    /** Only objects created before this instant. */
    readonly createdBefore?: Date | undefined;
  };
}

/** A manifest object CreateJob reads, by location and ETag. */
export interface ManifestObjectSpec {
  readonly bucket: string;
  readonly key: string;
  /** The manifest object's ETag, as CreateJob requires it (quotes removed). */
  readonly etag: string;
  readonly format: ManifestFormat;
}

/** Whether a job's manifest is generated by S3 rather than read from an object. */
export function isGeneratedManifest(
  manifest: ManifestObjectSpec | ManifestGeneratorSpec,
): manifest is ManifestGeneratorSpec {
  return 'generator' in manifest;
}

/** What {@link buildCreateJobRequest} needs. */
export interface CreateJobInput {
  /** The function the job invokes: the stack's Batch Operations handler. */
  readonly functionArn: string;
  /** The role S3 assumes to run the job (read the manifest, invoke, write the report). */
  readonly roleArn: string;
  readonly manifest: ManifestObjectSpec | ManifestGeneratorSpec;
  readonly report: { readonly bucket: string; readonly prefix: string };
  /** @default 'rerun reprocess' */
  readonly description?: string;
  /** @default {@link DEFAULT_JOB_PRIORITY} */
  readonly priority?: number;
}

/**
 * The job priority rerun gives (higher runs first among an account's jobs, S3 User Guide,
 * "Assigning job priority"). A middle value, so an operator can order other jobs around it.
 */
export const DEFAULT_JOB_PRIORITY = 10;

/** The CreateJob request rerun sends, shaped as S3 Control's CreateJobRequest. */
export interface RerunCreateJobRequest {
  readonly AccountId: string;
  readonly ConfirmationRequired: false;
  readonly Operation: {
    readonly LambdaInvoke: { readonly FunctionArn: string; readonly InvocationSchemaVersion: '2.0' };
  };
  /** A manifest object; absent when the job generates its manifest. */
  readonly Manifest?: {
    readonly Spec: { readonly Format: ManifestFormat; readonly Fields?: readonly ('Bucket' | 'Key')[] };
    readonly Location: { readonly ObjectArn: string; readonly ETag: string };
  };
  /** The manifest generator; absent when the job reads a manifest object. */
  readonly ManifestGenerator?: {
    readonly S3JobManifestGenerator: {
      readonly SourceBucket: string;
      readonly EnableManifestOutput: false;
      readonly Filter: {
        readonly KeyNameConstraint?: { readonly MatchAnyPrefix: readonly string[] };
        readonly CreatedAfter?: Date;
        readonly CreatedBefore?: Date;
      };
    };
  };
  readonly Report: {
    readonly Enabled: true;
    readonly Bucket: string;
    readonly Prefix: string;
    readonly Format: 'Report_CSV_20180820';
    readonly ReportScope: 'FailedTasksOnly';
  };
  readonly Priority: number;
  readonly RoleArn: string;
  readonly Description: string;
  readonly ClientRequestToken: string;
}

/**
 * Builds the CreateJob request: the LambdaInvoke operation with invocation schema 2.0 (the
 * handler reads both; 2.0 names buckets by name), the manifest by ARN and ETag, a completion
 * report of failed tasks only (successes are visible in the outputs themselves), no confirmation
 * (that is for console jobs, S3 API Reference, CreateJob), and a ClientRequestToken that is the
 * SHA-256 of everything else in the request. The token makes CreateJob idempotent ("An idempotency
 * token to ensure that you don't accidentally submit the same request twice"): the same plan gives
 * the same manifest bytes, ETag, request and token, so running the same reprocess twice while the
 * job exists creates one job. Its 64 hex digits are the token's maximum length.
 *
 * @example
 * const request = buildCreateJobRequest({ functionArn, roleArn, manifest, report });
 */
export function buildCreateJobRequest(input: CreateJobInput): RerunCreateJobRequest {
  const accountId = accountIdOfArn(input.roleArn);
  const request = {
    AccountId: accountId,
    ConfirmationRequired: false as const,
    Operation: { LambdaInvoke: { FunctionArn: input.functionArn, InvocationSchemaVersion: '2.0' as const } },
    ...manifestOfRequest(input.manifest),
    Report: {
      Enabled: true as const,
      Bucket: `arn:aws:s3:::${input.report.bucket}`,
      Prefix: input.report.prefix,
      Format: 'Report_CSV_20180820' as const,
      ReportScope: 'FailedTasksOnly' as const,
    },
    Priority: input.priority ?? DEFAULT_JOB_PRIORITY,
    RoleArn: input.roleArn,
    Description: (input.description ?? 'rerun reprocess').slice(0, 256),
  };
  return { ...request, ClientRequestToken: createHash('sha256').update(canonicalJson(request)).digest('hex') };
}

/** The Manifest, or the ManifestGenerator, of a CreateJob request. */
function manifestOfRequest(
  manifest: ManifestObjectSpec | ManifestGeneratorSpec,
): Pick<RerunCreateJobRequest, 'Manifest' | 'ManifestGenerator'> {
  if (isGeneratedManifest(manifest)) {
    const { sourceBucket, prefix, createdAfter, createdBefore } = manifest.generator;
    return {
      ManifestGenerator: {
        S3JobManifestGenerator: {
          SourceBucket: `arn:aws:s3:::${sourceBucket}`,
          // The generated list is not kept: the completion report is what rerun reads back.
          EnableManifestOutput: false,
          Filter: {
            ...(prefix ? { KeyNameConstraint: { MatchAnyPrefix: [prefix] } } : {}),
            ...(createdAfter ? { CreatedAfter: createdAfter } : {}),
            ...(createdBefore ? { CreatedBefore: createdBefore } : {}),
          },
        },
      },
    };
  }
  return {
    Manifest: {
      Spec: {
        Format: manifest.format,
        // A CSV manifest names its columns; an inventory report describes its own (its manifest.json).
        ...(manifest.format === ManifestFormat.CSV ? { Fields: ['Bucket', 'Key'] as ('Bucket' | 'Key')[] } : {}),
      },
      Location: { ObjectArn: `arn:aws:s3:::${manifest.bucket}/${manifest.key}`, ETag: manifest.etag.replace(/"/g, '') },
    },
  };
}

/**
 * The account of an IAM ARN (`arn:aws:iam::123456789012:role/x`): CreateJob and DescribeJob name
 * the account, and the job role's ARN already carries it, so no STS call is needed.
 *
 * @example
 * accountIdOfArn('arn:aws:iam::123456789012:role/job'); // '123456789012'
 */
export function accountIdOfArn(arn: string): string {
  const account = arn.split(':')[4];
  if (!account || !/^\d{12}$/.test(account)) {
    throw new BatchOperationsManifestError(
      `"${arn}" is not an ARN with an account id (arn:aws:iam::123456789012:role/NAME): pass the job role's ARN.`,
    );
  }
  return account;
}

/** One task the completion report lists as failed. */
export interface ReportedFailure {
  readonly bucket: string;
  /** Decoded (the report writes keys URL-encoded, as in the manifest). */
  readonly key: string;
  readonly resultCode: string;
  readonly resultString: string;
}

/**
 * The CSV files of a completion report's `manifest.json` (Format `Report_CSV_20180820`), with the
 * status of the tasks each holds.
 *
 * @example
 * reportResults('{"Format":"Report_CSV_20180820","Results":[...]}');
 */
export function reportResults(text: string): { status: string; bucket: string; key: string }[] {
  let manifest: { Format?: string; Results?: { TaskExecutionStatus?: string; Bucket?: string; Key?: string }[] };
  try {
    manifest = JSON.parse(text);
  } catch (error) {
    throw new BatchOperationsManifestError('the completion report manifest.json is not JSON', { cause: error });
  }
  if (manifest.Format !== 'Report_CSV_20180820' || !Array.isArray(manifest.Results)) {
    throw new BatchOperationsManifestError(
      `the completion report manifest.json has Format ${String(manifest.Format)}, not Report_CSV_20180820 with Results`,
    );
  }
  return manifest.Results.map((r) => ({
    status: String(r.TaskExecutionStatus ?? ''),
    // The report manifest names its bucket by name (User Guide example) or, in some reports, by ARN.
    bucket: String(r.Bucket ?? '').replace(/^arn:aws:s3:::/, ''),
    key: String(r.Key ?? ''),
  }));
}

/**
 * The rows of one report CSV: `Bucket, Key, VersionId, TaskStatus, ErrorCode, HTTPStatusCode,
 * ResultMessage`, where S3's own example rows put the HTTP status in the fifth column and the
 * result code in the sixth (see local/batchOperations/LocalBatchOperationsJob.ts): the result code
 * is whichever of the two is not a number.
 *
 * @example
 * reportRows('in,incoming/a%20b.csv,,failed,200,PermanentFailure,"too large"\n'); // [{ key: 'incoming/a b.csv', ... }]
 */
export function reportRows(csv: string): ReportedFailure[] {
  const rows: ReportedFailure[] = [];
  for (const line of csv.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const [bucket = '', key = '', , , fifth = '', sixth = '', message = ''] = splitCsvLine(line);
    rows.push({
      bucket,
      key: safeDecode(key),
      resultCode: /^\d+$/.test(fifth) ? sixth : fifth,
      resultString: message,
    });
  }
  return rows;
}

/**
 * A job id derived from the request token, for the local stand-in: the same plan is the same job
 * there too, shaped like the UUIDs S3 assigns.
 *
 * @example
 * localJobId('0123456789abcdef0123456789abcdef…'); // '01234567-89ab-cdef-0123-456789abcdef'
 */
export function localJobId(token: string): string {
  const h = token.slice(0, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function safeDecode(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** JSON with object keys sorted at every level, so the token does not depend on property order. */
function canonicalJson(value: unknown): string {
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
