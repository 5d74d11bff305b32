import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as dynamodb from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import * as s3 from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import * as sqs from '@aws-sdk/client-sqs';
import { DynamoModel } from '../model/DynamoModel.js';
import { S3Model } from '../model/S3Model.js';
import { SqsModel } from '../model/SqsModel.js';

/**
 * Differential conformance: one request sequence, replayed against the in-memory models and
 * against an emulator (moto, MiniStack) through the real SDK clients, answer by answer. The
 * sequences name their resources symbolically (`$bucket:in`, `$queue:work`, `$table:ledger`) and
 * refer to earlier answers (`$upload:3` is the UploadId step 3 returned, `$etag:3` its ETag,
 * `$handle:5` a receipt handle), so each side gets its own ids; what is compared is what a client
 * sees: the status, the error code, ETags, checksums, metadata, bodies, and in the end every
 * object's state.
 */
export interface Step {
  readonly service: 'S3' | 'SQS' | 'DynamoDB';
  /** The command's name without `Command`, e.g. `PutObject`. */
  readonly name: string;
  readonly input: Record<string, unknown>;
}

/** A named sequence, with what it is there to show. */
export interface Sequence {
  readonly name: string;
  readonly steps: readonly Step[];
}

/** What a client sees of one answer, normalized so two sides can be compared. */
export interface Answer {
  readonly status: number;
  readonly code?: string;
  readonly fields: Readonly<Record<string, string>>;
}

/** Where a sequence is replayed: the models, or an endpoint. */
export interface Side {
  readonly name: string;
  send(step: Step, bound: Record<string, unknown>): Promise<Record<string, unknown>>;
  createBucket(name: string): Promise<void>;
  createQueue(
    name: string,
    attributes: { visibilityTimeoutSeconds: number; deadLetter?: { url: string; maxReceiveCount: number } },
  ): Promise<string>;
  createTable(name: string): Promise<void>;
}

/** The in-memory models as a side. */
export function modelSide(): Side {
  const s3Model = new S3Model();
  const sqsModel = new SqsModel();
  const dynamoModel = new DynamoModel();
  const now = () => Date.now();
  return {
    name: 'model',
    async send(step, input) {
      const answer =
        step.service === 'S3'
          ? s3Model.handle(step.name, input, now())
          : step.service === 'SQS'
            ? sqsModel.handle(step.name, input, now())
            : dynamoModel.handle(step.name, input);
      // The SDK returns bodies as streams with a transformToByteArray; the model as a Readable.
      const body = answer.Body as AsyncIterable<Uint8Array> | undefined;
      if (body) {
        const chunks: Buffer[] = [];
        for await (const chunk of body) chunks.push(Buffer.from(chunk));
        return { ...answer, Body: Buffer.concat(chunks) };
      }
      return answer;
    },
    async createBucket(name) {
      s3Model.createBucket(name);
    },
    async createQueue(name, attributes) {
      return sqsModel.createQueue(name, attributes);
    },
    async createTable(name) {
      dynamoModel.createTable(name);
    },
  };
}

/** An emulator (or AWS) through the SDK clients as a side. */
export function endpointSide(name: string, clients: { s3: S3Client; sqs: SQSClient; dynamodb: DynamoDBClient }): Side {
  const commands: Record<Step['service'], Record<string, new (input: never) => unknown>> = {
    S3: s3 as unknown as Record<string, new (input: never) => unknown>,
    SQS: sqs as unknown as Record<string, new (input: never) => unknown>,
    DynamoDB: dynamodb as unknown as Record<string, new (input: never) => unknown>,
  };
  return {
    name,
    async send(step, input) {
      const Command = commands[step.service][`${step.name}Command`];
      if (!Command) throw new Error(`no ${step.name}Command in the ${step.service} client`);
      const client = step.service === 'S3' ? clients.s3 : step.service === 'SQS' ? clients.sqs : clients.dynamodb;
      const answer = (await (client as { send(c: unknown): Promise<Record<string, unknown>> }).send(
        new Command(input as never),
      )) as Record<string, unknown>;
      const body = answer.Body as { transformToByteArray?: () => Promise<Uint8Array> } | undefined;
      if (body?.transformToByteArray) return { ...answer, Body: Buffer.from(await body.transformToByteArray()) };
      return answer;
    },
    async createBucket(bucket) {
      await clients.s3.send(new s3.CreateBucketCommand({ Bucket: bucket }));
    },
    async createQueue(queue, attributes) {
      const out = await clients.sqs.send(
        new sqs.CreateQueueCommand({
          QueueName: queue,
          Attributes: {
            VisibilityTimeout: String(attributes.visibilityTimeoutSeconds),
            ...(attributes.deadLetter
              ? {
                  RedrivePolicy: JSON.stringify({
                    deadLetterTargetArn: await queueArn(clients.sqs, attributes.deadLetter.url),
                    maxReceiveCount: attributes.deadLetter.maxReceiveCount,
                  }),
                }
              : {}),
          },
        }),
      );
      return out.QueueUrl as string;
    },
    async createTable(table) {
      await clients.dynamodb.send(
        new dynamodb.CreateTableCommand({
          TableName: table,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        }),
      );
    },
  };
}

async function queueArn(client: SQSClient, url: string): Promise<string> {
  const out = await client.send(new sqs.GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return out.Attributes?.QueueArn as string;
}

/**
 * Replays a sequence on one side: creates its resources under unique names (`run` is part of each
 * name), binds the symbolic references, and returns each step's answer as a client sees it, then
 * the final state of every bucket.
 */
export async function replay(side: Side, sequence: Sequence, run: string): Promise<Replayed> {
  const names = new Map<string, string>();
  const answers: Answer[] = [];
  const raw: Record<string, unknown>[] = [];
  const resource = async (kind: string, name: string): Promise<string> => {
    const ref = `${kind}:${name}`;
    const known = names.get(ref);
    if (known) return known;
    const unique = `${name}-${run}`.toLowerCase().slice(0, 60);
    let value = unique;
    if (kind === 'bucket') await side.createBucket(unique);
    else if (kind === 'table') await side.createTable(unique);
    else {
      const dlq = name.endsWith('-dlq') ? undefined : await resource('queue', `${name}-dlq`);
      value = await side.createQueue(unique, {
        visibilityTimeoutSeconds: 1,
        ...(dlq ? { deadLetter: { url: dlq, maxReceiveCount: 2 } } : {}),
      });
    }
    names.set(ref, value);
    return value;
  };
  const bind = async (value: unknown): Promise<unknown> => {
    if (typeof value === 'string') {
      const ref = /^\$(bucket|queue|table):(.+)$/.exec(value);
      if (ref) return resource(ref[1] as string, ref[2] as string);
      const earlier = /^\$(upload|etag|quoted-etag|handle|copy-etag|copy-checksum):(\d+)$/.exec(value);
      if (earlier) {
        const answer = raw[Number(earlier[2])] ?? {};
        switch (earlier[1]) {
          case 'upload':
            return answer.UploadId;
          case 'etag':
            return answer.ETag;
          case 'quoted-etag':
            return `"${String(answer.ETag ?? '').replace(/"/g, '')}"`;
          case 'copy-etag':
            return (answer.CopyPartResult as { ETag?: string } | undefined)?.ETag;
          case 'copy-checksum':
            return (answer.CopyPartResult as { ChecksumSHA256?: string } | undefined)?.ChecksumSHA256;
          default:
            return ((answer.Messages as { ReceiptHandle?: string }[] | undefined) ?? [])[0]?.ReceiptHandle;
        }
      }
      const copy = /^\$copy-source:([^/]+)\/(.+)$/.exec(value);
      if (copy) return `${await resource('bucket', copy[1] as string)}/${copy[2]}`;
      return value;
    }
    if (Array.isArray(value)) return Promise.all(value.map(bind));
    if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = await bind(v);
      return out;
    }
    return value;
  };
  for (const step of sequence.steps) {
    const input = (await bind(step.input)) as Record<string, unknown>;
    try {
      const answer = await side.send(step, input);
      raw.push(answer);
      answers.push({ status: 200, fields: fieldsOf(step, answer) });
    } catch (error) {
      raw.push({});
      const e = error as { $metadata?: { httpStatusCode?: number }; name?: string; Code?: string };
      const status = e.$metadata?.httpStatusCode ?? 0;
      // A 304 has no body, so its code is the SDK's own guess, not the service's: only its status counts.
      answers.push({ status, ...(status === 304 ? {} : { code: e.Code ?? e.name ?? 'Error' }), fields: {} });
    }
  }
  return { answers, state: await stateOf(side, names) };
}

/** The fields of an answer a client acts on, as strings. */
function fieldsOf(step: Step, answer: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (k: string, v: unknown) => {
    if (v !== undefined && v !== null && v !== '') out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  };
  put('ETag', answer.ETag);
  put('ChecksumSHA256', answer.ChecksumSHA256);
  put('ContentLength', answer.ContentLength);
  put('ContentType', step.name === 'HeadObject' || step.name === 'GetObject' ? answer.ContentType : undefined);
  if (answer.Metadata) put('Metadata', sortedJson(answer.Metadata));
  if (Buffer.isBuffer(answer.Body)) put('Body', createHash('sha256').update(answer.Body).digest('hex').slice(0, 16));
  const copy = answer.CopyPartResult as { ETag?: string; ChecksumSHA256?: string } | undefined;
  if (copy) {
    put('CopyPartResult.ETag', copy.ETag);
    put('CopyPartResult.ChecksumSHA256', copy.ChecksumSHA256);
  }
  if (answer.Contents)
    put('Keys', (answer.Contents as { Key: string; ETag: string }[]).map((c) => `${c.Key}=${c.ETag}`).join(','));
  if (answer.Messages) {
    put(
      'Messages',
      (answer.Messages as { Body: string; Attributes?: Record<string, string> }[])
        .map((m) => `${m.Body}#${m.Attributes?.ApproximateReceiveCount ?? '?'}`)
        .join(','),
    );
  }
  if (step.service === 'SQS' && step.name === 'ReceiveMessage' && !answer.Messages) put('Messages', 'none');
  if (answer.Attributes && step.service === 'DynamoDB') put('Attributes', sortedJson(answer.Attributes));
  if (answer.Item) put('Item', sortedJson(answer.Item));
  return out;
}

/** What one side answered, and every object's state at the end (`bucket/key` to what a HEAD shows). */
export interface Replayed {
  readonly answers: Answer[];
  readonly state: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

async function stateOf(side: Side, names: ReadonlyMap<string, string>): Promise<Map<string, Record<string, string>>> {
  const state = new Map<string, Record<string, string>>();
  for (const [ref, bucket] of names) {
    if (!ref.startsWith('bucket:')) continue;
    const listing = await side.send({ service: 'S3', name: 'ListObjectsV2', input: {} }, { Bucket: bucket });
    for (const object of (listing.Contents ?? []) as { Key: string }[]) {
      const head = await side.send(
        { service: 'S3', name: 'HeadObject', input: {} },
        { Bucket: bucket, Key: object.Key, ChecksumMode: 'ENABLED' },
      );
      state.set(`${ref.slice(7)}/${object.Key}`, fieldsOf({ service: 'S3', name: 'HeadObject', input: {} }, head));
    }
  }
  return state;
}

function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/** One place where the two sides answered differently. */
export interface Difference {
  readonly sequence: string;
  readonly step: number;
  readonly request: string;
  readonly field: string;
  readonly model: string;
  readonly emulator: string;
}

/**
 * The differences of two replays, answer by answer: every field that differs. After an answer
 * whose status differs the two sides no longer hold the same state, so the comparison ends there;
 * when every status agreed, the final states are compared too.
 */
export function compare(sequence: Sequence, model: Replayed, emulator: Replayed): Difference[] {
  const diffs: Difference[] = [];
  for (const [i, step] of sequence.steps.entries()) {
    const a = model.answers[i] as Answer;
    const b = emulator.answers[i] as Answer;
    const request = `${step.service} ${step.name}`;
    const note = (field: string, x: string, y: string) => {
      if (x !== y) diffs.push({ sequence: sequence.name, step: i, request, field, model: x, emulator: y });
    };
    const statusA = `${a.status}${a.code ? ` ${a.code}` : ''}`;
    const statusB = `${b.status}${b.code ? ` ${b.code}` : ''}`;
    note('status', statusA, statusB);
    if (statusA !== statusB) return diffs;
    for (const field of new Set([...Object.keys(a.fields), ...Object.keys(b.fields)])) {
      note(field, a.fields[field] ?? '(absent)', b.fields[field] ?? '(absent)');
    }
  }
  for (const key of new Set([...model.state.keys(), ...emulator.state.keys()])) {
    const a = model.state.get(key);
    const b = emulator.state.get(key);
    const request = `final state ${key}`;
    if (!a || !b) {
      diffs.push({
        sequence: sequence.name,
        step: -1,
        request,
        field: 'exists',
        model: String(!!a),
        emulator: String(!!b),
      });
      continue;
    }
    for (const field of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const x = a[field] ?? '(absent)';
      const y = b[field] ?? '(absent)';
      if (x !== y) diffs.push({ sequence: sequence.name, step: -1, request, field, model: x, emulator: y });
    }
  }
  return diffs;
}
