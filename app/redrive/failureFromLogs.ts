import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { FAILURE_RECORD_SCHEMA, type FailureRecord, GiveUpReason } from '../../src/failures/failureRecord.js';
import { RECORDER_WRITE_FAILED_MESSAGE } from '../../src/failures/S3FailureRecorder.js';
import { StackOutput } from '../stackOutputs.js';

/** Reads a message's failure record; undefined when there is none. */
export interface FailureReader {
  read(queueName: string, messageId: string): Promise<FailureRecord | undefined>;
}

/** Where the worker's log lines are, and how far back to look. */
export interface WorkerLogs {
  readonly logs: Pick<CloudWatchLogsClient, 'send'>;
  readonly logGroup: string;
  /** @default 14 days (a message stays in a DLQ for at most 14 days: SQS's longest retention) */
  readonly lookBackMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

const FOURTEEN_DAYS_MS = 14 * 24 * 3_600_000;
/** Pages of FilterLogEvents read per message at most: the pattern matches one message id's lines. */
const MAX_PAGES = 5;

/**
 * Failure records, and where a message has none, the cause the worker left in its log when it
 * could not write one. A failure record that cannot be written (a 403 on the failure prefix: a
 * bucket policy, a KMS key) cannot be put anywhere else the worker may write, and a message's own
 * attributes cannot change on its way to the DLQ; but the worker logs the recorder's error and the
 * record's outcome, both with the message id, and the function's log group keeps them. So redrive,
 * given the log group (`--stack`), reads them back instead of blaming "a timeout, a crash, or no
 * recorder".
 *
 * @example
 * const failures = failuresWithLogFallback(recorder, { logs, logGroup: '/aws/lambda/normalize' });
 */
export function failuresWithLogFallback(records: FailureReader, workerLogs: WorkerLogs): FailureReader {
  return {
    async read(queueName, messageId) {
      const record = await records.read(queueName, messageId);
      if (record) return record;
      return fromLogs(workerLogs, queueName, messageId);
    },
  };
}

async function fromLogs(source: WorkerLogs, queueName: string, messageId: string): Promise<FailureRecord | undefined> {
  const { FilterLogEventsCommand } = await import('@aws-sdk/client-cloudwatch-logs');
  const now = (source.now ?? Date.now)();
  let recorderError: { text: string; reason: unknown; at: number } | undefined;
  let outcome: { line: Record<string, unknown>; at: number } | undefined;
  let token: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const out = await source.logs.send(
      new FilterLogEventsCommand({
        logGroupName: source.logGroup,
        startTime: now - (source.lookBackMs ?? FOURTEEN_DAYS_MS),
        // A quoted term: the lines naming this message id.
        filterPattern: `"${messageId.replace(/"/g, '')}"`,
        ...(token ? { nextToken: token } : {}),
      }),
    );
    for (const event of out.events ?? []) {
      const line = parseLine(event.message ?? '');
      if (!line || line.messageId !== messageId) continue;
      const at = event.timestamp ?? 0;
      if (line.message === RECORDER_WRITE_FAILED_MESSAGE && at >= (recorderError?.at ?? 0)) {
        recorderError = { text: describe(line.error), reason: line.reason, at };
      } else if (line.message === 'record failed' && at >= (outcome?.at ?? 0)) {
        outcome = { line, at };
      }
    }
    token = out.nextToken;
    if (!token) break;
  }
  if (!recorderError) return undefined;
  const logged = recorderError.reason ?? outcome?.line.reason;
  const reason = typeof logged === 'string' ? logged : 'not in the log';
  const source_ = outcome?.line.source as { bucket?: unknown; key?: unknown } | undefined;
  return {
    schema: FAILURE_RECORD_SCHEMA,
    queueName,
    queueArn: '',
    messageId,
    receiveCount: typeof outcome?.line.receiveCount === 'number' ? outcome.line.receiveCount : 0,
    givenUp: outcome?.line.retryable === false ? GiveUpReason.NON_RETRYABLE : GiveUpReason.LAST_RECEIVE,
    retryable: outcome?.line.retryable !== false,
    reason: `no failure record: the worker could not write it (${recorderError.text}); its last reason, from the function's log: ${reason}`,
    ...(typeof source_?.bucket === 'string' && typeof source_.key === 'string'
      ? { subject: `s3://${source_.bucket}/${source_.key}` }
      : {}),
    failedAt: new Date(recorderError.at).toISOString(),
  };
}

function parseLine(text: string): Record<string, unknown> | undefined {
  const start = text.indexOf('{');
  if (start < 0) return undefined;
  try {
    const value = JSON.parse(text.slice(start)) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  if (error && typeof error === 'object') {
    const { name, message } = error as { name?: unknown; message?: unknown };
    if (typeof message === 'string') return typeof name === 'string' ? `${name}: ${message}` : message;
  }
  return typeof error === 'string' ? error : 'an error the log does not describe';
}

/**
 * The failure records of a stage's messages; with `--stack` (its log groups in the outputs) and
 * @aws-sdk/client-cloudwatch-logs installed, a message without one is looked up in the stage's log
 * group, where the worker left the recorder's error when it could not write the record.
 */
export async function failureReaders(
  target: {
    readonly region: string;
    readonly endpoint?: string | undefined;
    readonly stack?: { readonly outputs: Readonly<Record<string, string>> } | undefined;
  },
  recorder: FailureReader,
): Promise<(stage: 'normalize' | 'summarize' | undefined) => FailureReader> {
  const outputs = target.stack?.outputs ?? {};
  const groups = { normalize: outputs[StackOutput.LOG_GROUP], summarize: outputs[StackOutput.SUMMARIZE_LOG_GROUP] };
  const cwl =
    groups.normalize || groups.summarize
      ? await import('@aws-sdk/client-cloudwatch-logs').catch(() => undefined)
      : undefined;
  if (!cwl) return () => recorder;
  const logs = new cwl.CloudWatchLogsClient({
    region: target.region,
    ...(target.endpoint ? { endpoint: target.endpoint } : {}),
  });
  return (stage) => {
    const logGroup = stage ? groups[stage] : undefined;
    return logGroup ? failuresWithLogFallback(recorder, { logs, logGroup }) : recorder;
  };
}
