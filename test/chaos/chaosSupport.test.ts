import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SUMMARIZE_CODE_VERSION } from '../../app/partition/codeVersion.js';
import { SummaryAccumulator, serializeSummary } from '../../app/partition/dailySummary.js';
import { InputClass } from '../../app/partition/inputCoverage.js';
import { lineageHash } from '../../app/partition/lineage.js';
import { referenceInputRules } from '../../app/partition/referenceInputRules.js';
import { summaryCoverageOf } from '../../app/partition/summaryCoverage.js';
import { LineageKind, markerKey, stagingKey, summaryKey, summaryLayout } from '../../app/partition/summaryLayout.js';
import { buildSummaryMetadata } from '../../app/partition/summaryMetadata.js';
import { topology } from '../../app/topology.js';
import type { SinkDelivery } from '../../local/sink/WebhookSink.js';
import { buildOutputMetadata } from '../../src/done/outputMetadata.js';
import { FAILURE_RECORD_SCHEMA, LAST_ATTEMPT_STARTED_REASON } from '../../src/failures/failureRecord.js';
import { createNormalizeWorker, NORMALIZE_CODE_VERSION } from '../../src/normalize/normalizeWorker.js';
import { outputNotificationKey } from '../../src/notify/outputNotification.js';
import { classifyAwsRequest } from './support/awsRequest.js';
import type { PipelineSnapshot, SnapshotObject } from './support/ChaosPipeline.js';
import { formatChaosTable } from './support/chaosTable.js';
import { killPointsOf } from './support/itemBoundaryKills.js';
import { createPrng } from './support/prng.js';
import { type RunnerEvent, RunnerSupervisor, receivesThatDied } from './support/RunnerSupervisor.js';
import { chaosTopology, fullScenarios, withSummarizeTimeout } from './support/scenarios.js';
import {
  type CleanReference,
  checkDlqHoldsPoison,
  contentSha256,
  verifyAgainstClean,
} from './support/verifyAgainstClean.js';
import { lineageIds, verifySummaries } from './support/verifySummaries.js';

const S3_AUTH = 'AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=x';

describe('classifyAwsRequest: the operation from what is on the wire', () => {
  const s3 = (method: string, url: string, headers: Record<string, string> = {}) =>
    classifyAwsRequest({ method, url, headers: { authorization: S3_AUTH, ...headers } });

  it('names S3 object operations from method, path and sub-resources', () => {
    expect(s3('HEAD', '/out/normalized/a%20b.ndjson')).toEqual({
      service: 'S3',
      operation: 'HeadObject',
      conditionalWrite: false,
      bucket: 'out',
    });
    expect(s3('GET', '/in/incoming/a.csv?x-id=GetObject').operation).toBe('GetObject');
    expect(s3('PUT', '/out/k', { 'if-none-match': '*' })).toMatchObject({
      operation: 'PutObject',
      conditionalWrite: true,
    });
    expect(s3('PUT', '/out/k')).toMatchObject({ operation: 'PutObject', conditionalWrite: false });
    expect(s3('POST', '/out/k?uploads').operation).toBe('CreateMultipartUpload');
    expect(s3('PUT', '/out/k?partNumber=1&uploadId=u').operation).toBe('UploadPart');
    expect(s3('POST', '/out/k?uploadId=u', { 'if-match': '"e"' })).toMatchObject({
      operation: 'CompleteMultipartUpload',
      conditionalWrite: true,
    });
    expect(s3('DELETE', '/out/k?uploadId=u').operation).toBe('AbortMultipartUpload');
    expect(s3('DELETE', '/out/k').operation).toBe('DeleteObject');
    expect(s3('GET', '/out?list-type=2&prefix=a').operation).toBe('ListObjectsV2');
    expect(s3('PUT', '/out').operation).toBe('CreateBucket');
  });

  it('names JSON-protocol operations from X-Amz-Target, and anything unsigned is plain HTTP', () => {
    expect(
      classifyAwsRequest({ method: 'POST', url: '/', headers: { 'x-amz-target': 'DynamoDB_20120810.UpdateItem' } }),
    ).toMatchObject({ service: 'DynamoDB', operation: 'UpdateItem' });
    expect(
      classifyAwsRequest({ method: 'POST', url: '/', headers: { 'x-amz-target': 'AmazonSQS.DeleteMessageBatch' } }),
    ).toMatchObject({ service: 'SQS', operation: 'DeleteMessageBatch' });
    expect(classifyAwsRequest({ method: 'POST', url: '/notify', headers: {} })).toMatchObject({
      service: 'HTTP',
      operation: 'POST',
    });
  });
});

describe('the chaos topology against the deployed one', () => {
  it.each(
    fullScenarios(0)
      .filter((s) => s.awsFaults !== undefined)
      .map((s) => [s.name, s] as const),
  )(
    'gives %s (HTTP faults) a summarize timeout scaled from the deployed topology like normalize, with the visibility timeout Lambda requires',
    (_name, scenario) => {
      const seconds = scenario.summarizeTimeoutSeconds ?? chaosTopology.summarize.functionTimeoutSeconds;
      // As deployed, summarize has 5 times normalize's time (300 s against 60 s); 8 s for both
      // starved summary tasks behind the faults beside the CPU hog (everything-at-once, then
      // http-faults in CI on 2026-12-06; issue 33).
      expect(seconds / chaosTopology.normalize.functionTimeoutSeconds).toBe(
        topology.summarize.functionTimeoutSeconds / topology.normalize.functionTimeoutSeconds,
      );
      const scaled = withSummarizeTimeout(chaosTopology, seconds);
      expect(scaled.summarize).toMatchObject({ functionTimeoutSeconds: seconds, visibilityTimeoutSeconds: seconds });
      expect(scaled.summarize.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(scaled.summarize.functionTimeoutSeconds);
      expect(scaled.normalize).toEqual(chaosTopology.normalize);
      expect(scaled.summarize.maxReceiveCount).toBe(topology.summarize.maxReceiveCount);
    },
  );
});

describe('createPrng: seeded and reproducible', () => {
  it('gives the same sequence for the same seed and another for another seed', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, createPrng(seed).next.bind(null));
    const a = createPrng(7);
    const b = createPrng(7);
    expect(Array.from({ length: 20 }, () => a.int(0, 1000))).toEqual(Array.from({ length: 20 }, () => b.int(0, 1000)));
    expect(draw(1)).not.toEqual(draw(2));
    expect(createPrng(7).fork('x').next()).toBe(createPrng(7).fork('x').next());
    expect(createPrng(7).fork('x').next()).not.toBe(createPrng(7).fork('y').next());
  });

  it('stays in range and shuffles without losing elements', () => {
    const rng = createPrng(3);
    for (let i = 0; i < 1000; i++) {
      const n = rng.int(2, 5);
      expect(n).toBeGreaterThanOrEqual(2);
      expect(n).toBeLessThanOrEqual(5);
    }
    expect(rng.shuffle([1, 2, 3, 4, 5]).sort()).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('killPointsOf: before and after every request of the item', () => {
  it('takes only "after" for the receive that brings the message', () => {
    const points = killPointsOf([
      { service: 'SQS', operation: 'ReceiveMessage', occurrence: 1 },
      { service: 'S3', operation: 'HeadObject', occurrence: 1 },
    ]);
    expect(points.map((p) => `${p.phase} ${p.operation}`)).toEqual([
      'after-response ReceiveMessage',
      'before-forward HeadObject',
      'after-response HeadObject',
    ]);
  });
});

describe('verifyAgainstClean: the final state against the clean run', () => {
  const worker = createNormalizeWorker({ outputBucket: 'out' });
  const key = 'incoming/a.csv';
  const outKey = worker.outputKey({ bucket: 'in', key });
  const quarantineKey = worker.sideOutputs?.quarantine?.({ bucket: 'in', key }) ?? '';
  const bytes = Buffer.from('{"id":"1"}\n');
  const checksum = createHash('sha256').update(bytes).digest('base64');
  const object = (k: string, body: Buffer, etag = 'e1', digest = checksum): SnapshotObject => ({
    key: k,
    bytes: body,
    lastModified: 0,
    head: {
      etag: 'o1',
      contentLength: body.length,
      checksumSHA256: digest,
      metadata: buildOutputMetadata({
        source: { bucket: 'in', key, etag },
        codeVersion: NORMALIZE_CODE_VERSION,
        integrity: { kind: 'sha256', sha256Base64: digest, bytes: body.length },
      }),
    },
  });
  const notification = outputNotificationKey({
    bucket: 'out',
    key: outKey,
    sha256: checksum,
    codeVersion: NORMALIZE_CODE_VERSION,
    source: { bucket: 'in', key },
  });
  const delivery = (overrides: Partial<SinkDelivery> = {}): SinkDelivery => ({
    key: notification,
    missingKey: false,
    path: '/notify',
    body: { output: { key: outKey, sha256: checksum } },
    attempts: 1,
    applied: true,
    repeats: 0,
    conflicts: 0,
    response: { status: 200, body: '{}' },
    firstReceivedAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  });
  const snapshot = (overrides: Partial<PipelineSnapshot> = {}): PipelineSnapshot => ({
    inputBucket: 'in',
    outputBucket: 'out',
    objects: [object(outKey, bytes)],
    inputs: [{ key, lastModified: 0 }],
    inputRules: referenceInputRules({ inputBucket: 'in' }),
    deliveries: [delivery()],
    dlq: [],
    summaryDlq: [],
    openUploads: 0,
    ...overrides,
  });
  const clean: CleanReference = { byEtag: new Map([['e1', { output: bytes, checksum }]]), dlqBodies: [] };
  const verify = (s: PipelineSnapshot, state: 'current' | 'deleted' = 'current', poison: string[] = []) =>
    verifyAgainstClean({
      snapshot: s,
      history: [{ key, etags: ['e1'], finalEtag: state === 'deleted' ? undefined : 'e1' }],
      clean,
      worker,
      codeVersion: NORMALIZE_CODE_VERSION,
      poison,
      failurePrefix: 'failures/',
    });

  it('accepts a state equal to the clean run', () => {
    expect(verify(snapshot())).toMatchObject({ itemsVerified: 1, lost: 0, duplicated: 0, problems: [] });
  });

  it('counts a missing output, other bytes, and a missing notification as lost', () => {
    expect(verify(snapshot({ objects: [] })).lost).toBe(1);
    const other = Buffer.from('{"id":"2"}\n');
    expect(verify(snapshot({ objects: [object(outKey, other)] })).lost).toBe(1);
    expect(verify(snapshot({ deliveries: [] })).problems).toEqual([
      expect.stringMatching(/^LOST .*notification .* never applied/),
    ]);
  });

  it('counts an output that fails the done-check (truncated) as lost', () => {
    const torn = object(outKey, bytes);
    const truncated = { ...torn, bytes: bytes.subarray(1), head: { ...torn.head, contentLength: bytes.length - 1 } };
    expect(verify(snapshot({ objects: [truncated] })).problems[0]).toMatch(/done-check/);
  });

  it('counts extra objects, a stale quarantine and a content notified twice as duplicated', () => {
    const extra = verify(snapshot({ objects: [object(outKey, bytes), object('normalized/in/zzz.ndjson', bytes)] }));
    expect(extra.duplicated).toBe(1);
    expect(verify(snapshot({ objects: [object(outKey, bytes), object(quarantineKey, bytes)] })).duplicated).toBe(1);
    const twice = verify(snapshot({ deliveries: [delivery(), delivery({ key: 'another-key' })] }));
    expect(twice.problems).toContainEqual(expect.stringMatching(/notified 2 times/));
  });

  it('accepts a deleted input with no output, or with its valid output written before the delete', () => {
    expect(verify(snapshot({ objects: [], deliveries: [] }), 'deleted')).toMatchObject({ lost: 0, duplicated: 0 });
    expect(verify(snapshot(), 'deleted')).toMatchObject({ lost: 0, duplicated: 0, keptForDeleted: 1 });
  });

  it('requires the DLQ to hold exactly the poison', () => {
    expect(verify(snapshot({ dlq: [{ messageId: 'm1', body: 'junk' }] }), 'current', ['junk'])).toMatchObject({
      dlqNonPoison: 0,
      dlqMissingPoison: 0,
      dlqWithoutFailureRecord: 1,
    });
    expect(verify(snapshot({ dlq: [{ messageId: 'm1', body: '{"Records":[]}' }] }), 'current', ['junk'])).toMatchObject(
      { dlqNonPoison: 1, dlqMissingPoison: 1 },
    );
  });

  it('accepts a healthy dead letter only with proof of a crash storm: every receive died with it', () => {
    const healthy = [{ messageId: 'm7', body: '{"Records":[]}' }];
    const storm = (died: number) => {
      const verdict = { lost: 0, duplicated: 0, dlqNonPoison: 0, dlqMissingPoison: 0, problems: [] as string[] };
      checkDlqHoldsPoison(verdict, 'DLQ', healthy, [], { maxReceiveCount: 5, diedWhileHeld: { m7: died } });
      return verdict;
    };
    expect(storm(5)).toMatchObject({
      dlqNonPoison: 0,
      crashStorm: ['DLQ m7: 5 of its 5 receives died with it (kills/timeouts)'],
    });
    expect(storm(4)).toMatchObject({
      dlqNonPoison: 1,
      problems: [expect.stringMatching(/4 attempt\(s\) died with it/)],
    });
  });

  it('accepts a failure record of a dead-lettered message, and flags one of a message not in the DLQ', () => {
    const record = object('failures/q/m1.json', Buffer.from('{}'));
    const recorded = snapshot({ objects: [object(outKey, bytes), record], dlq: [{ messageId: 'm1', body: 'junk' }] });
    expect(verify(recorded, 'current', ['junk'])).toMatchObject({
      duplicated: 0,
      failureRecords: 1,
      dlqWithoutFailureRecord: 0,
    });
    const orphan = snapshot({ objects: [object(outKey, bytes), record] });
    expect(verify(orphan).problems).toEqual([
      expect.stringMatching(/failure record of a message that is not in the DLQ/),
    ]);
  });

  describe('a multipart output: S3 stores a composite checksum, the notification names the whole content', () => {
    // A sealed 2-part output (src/done/integrity.ts, sha256-parts): S3's stored SHA-256 is the
    // composite (digest of the parts' digests, `-2`), the worker notifies the whole content's SHA-256.
    const large = Buffer.from(`${'{"id":"1"}\n'.repeat(40)}`);
    const whole = contentSha256(large);
    const composite = createHash('sha256').update('the parts digests').digest('base64');
    const multipart: SnapshotObject = {
      key: outKey,
      bytes: large,
      lastModified: 0,
      head: {
        etag: 'o2-2',
        contentLength: large.length,
        checksumSHA256: `${composite}-2`,
        metadata: buildOutputMetadata({
          source: { bucket: 'in', key, etag: 'e1' },
          codeVersion: NORMALIZE_CODE_VERSION,
          integrity: {
            kind: 'sha256-parts',
            sha256Base64: whole,
            compositeBase64: composite,
            parts: 2,
            bytes: large.length,
          },
        }),
      },
    };
    const notified = (sha256: string) =>
      delivery({
        key: outputNotificationKey({
          bucket: 'out',
          key: outKey,
          sha256,
          codeVersion: NORMALIZE_CODE_VERSION,
          source: { bucket: 'in', key },
        }),
        body: { output: { key: outKey, sha256 } },
      });
    const verifyLarge = (deliveries: SinkDelivery[]) =>
      verifyAgainstClean({
        snapshot: snapshot({ objects: [multipart], deliveries }),
        history: [{ key, etags: ['e1'], finalEtag: 'e1' }],
        clean: { byEtag: new Map([['e1', { output: large, checksum: whole }]]), dlqBodies: [] },
        worker,
        codeVersion: NORMALIZE_CODE_VERSION,
        poison: [],
        failurePrefix: 'failures/',
      });

    it("accepts the notification of the whole content's SHA-256, as the worker documents it", () => {
      expect(verifyLarge([notified(whole)])).toMatchObject({ lost: 0, duplicated: 0, problems: [] });
    });

    it('flags a notification of the composite checksum: never applied for the output, and for content no input had', () => {
      const verdict = verifyLarge([notified(composite)]);
      expect(verdict).toMatchObject({ lost: 1, duplicated: 1 });
      expect(verdict.problems).toEqual([
        expect.stringMatching(/^LOST .*notification .* never applied at the sink/),
        expect.stringMatching(/^DUPLICATED notification .* for output content no input ever had/),
      ]);
    });

    it("flags a notification of another content's SHA-256 beside the right one", () => {
      const verdict = verifyLarge([notified(whole), notified(contentSha256(Buffer.from('other')))]);
      expect(verdict).toMatchObject({ lost: 0, duplicated: 1 });
      expect(verdict.problems).toEqual([expect.stringMatching(/for output content no input ever had/)]);
    });
  });

  it('counts sink repeats as absorbed, not duplicated', () => {
    expect(verify(snapshot({ deliveries: [delivery({ attempts: 3, repeats: 2 })] }))).toMatchObject({
      sinkRepeats: 2,
      duplicated: 0,
    });
  });
});

describe('verifySummaries: the summary stage against the final lineage and the clean run', () => {
  const day = '2026-01-05';
  const layout = summaryLayout('in');
  const codeVersion = SUMMARIZE_CODE_VERSION;
  const line = '{"id":"1","amount":"2.50"}';
  const lineageObject = (path: string, etag: string): SnapshotObject => {
    const bytes = Buffer.from(`${line}\n`);
    return {
      key: `normalized/in/${path}`,
      bytes,
      lastModified: 2000,
      head: { etag, contentLength: bytes.length, metadata: {} },
    };
  };
  const input = lineageObject(`dt=${day}/a.csv.ndjson`, 'n1');
  const entries = [{ kind: LineageKind.NORMALIZED, path: `dt=${day}/a.csv.ndjson`, etag: 'n1' }];
  // The day's one input, with its output written after it: the summary covers it.
  const inputKey = `incoming/dt=${day}/a.csv`;
  const coverage = summaryCoverageOf([{ key: inputKey, class: InputClass.COVERED }]);
  const hash = lineageHash({ day, codeVersion, entries });
  /** The summary the worker publishes for `entries`, with its metadata, as a snapshot object. */
  const summaryOf = (lineage: typeof entries, etag = 's1'): SnapshotObject => {
    const accumulator = new SummaryAccumulator();
    for (const entry of lineage) {
      accumulator.startFile(entry, line.length + 1);
      accumulator.addLine(line);
    }
    const h = lineageHash({ day, codeVersion, entries: lineage });
    const bytes = serializeSummary(accumulator.finish({ day, codeVersion, lineageHash: h, lineage, coverage }));
    const sha = createHash('sha256').update(bytes).digest('base64');
    return {
      key: summaryKey(layout, day),
      bytes,
      lastModified: 3000,
      head: {
        etag,
        contentLength: bytes.length,
        checksumSHA256: sha,
        metadata: buildSummaryMetadata({
          day,
          lineageHash: h,
          codeVersion,
          sha256Base64: sha,
          bytes: bytes.length,
          coverageDigest: coverage.digest,
        }),
      },
    };
  };
  const marker = (summaryEtag = 's1', lineage = hash): SnapshotObject => ({
    key: markerKey(layout, day, { lineageHash: lineage, summaryEtag, codeVersion, coverageDigest: coverage.digest }),
    bytes: Buffer.alloc(0),
    lastModified: 2000,
    head: { etag: 'm', contentLength: 0, metadata: {} },
  });
  const summary = summaryOf(entries);
  const cleanSummaries = new Map([[day, { bytes: summary.bytes, lineageHash: hash, lineage: lineageIds(entries) }]]);
  const verify = (
    objects: SnapshotObject[],
    options: { clean?: typeof cleanSummaries; deleted?: string[]; summaryDlq?: string[] } = {},
  ) =>
    verifySummaries({
      snapshot: {
        inputBucket: 'in',
        outputBucket: 'out',
        objects,
        inputs: [{ key: inputKey, lastModified: 1000 }],
        inputRules: referenceInputRules({ inputBucket: 'in' }),
        deliveries: [],
        dlq: [],
        summaryDlq: (options.summaryDlq ?? ['not a task']).map((body, i) => ({ messageId: `m${i}`, body })),
        openUploads: 0,
      },
      layout,
      window: { from: day, to: day },
      codeVersion,
      clean: options.clean ?? cleanSummaries,
      deleted: new Set(options.deleted ?? []),
      poison: ['not a task'],
    });

  it('accepts the current summary of the final lineage with its one marker, equal to the clean run', async () => {
    expect(await verify([input, summary, marker()])).toMatchObject({
      summariesVerified: 1,
      summariesEqualToClean: 1,
      lost: 0,
      duplicated: 0,
      dlqNonPoison: 0,
      dlqMissingPoison: 0,
      problems: [],
    });
  });

  it('counts a missing summary, a summary of a superseded lineage and a missing marker as lost', async () => {
    expect((await verify([input, marker()])).problems).toContainEqual(expect.stringMatching(/no summary/));
    // An input was added after the summary was published: it is stale against the final lineage.
    const later = lineageObject(`dt=${day}/b.csv.ndjson`, 'n2');
    const stale = await verify([input, later, summary, marker()]);
    expect(stale.lost).toBe(1);
    expect(stale.problems[0]).toMatch(/outdated against the final lineage/);
    expect((await verify([input, summary])).problems).toEqual([expect.stringMatching(/manifest marker .* missing/)]);
  });

  it('flags a second marker and other objects as duplicated, and counts staging copies apart', async () => {
    const staged = { ...marker(), key: stagingKey(layout, day, hash) };
    const result = await verify([input, summary, marker(), marker('old', 'oldhash'), staged]);
    expect(result).toMatchObject({ duplicated: 1, stagingLeftovers: 1, lost: 0 });
    expect(result.problems).toEqual([expect.stringMatching(/a second manifest marker/)]);
  });

  it('accepts a lineage that differs from the clean run only by outputs of inputs deleted mid-run', async () => {
    const cleanWithout = new Map([[day, { bytes: Buffer.from('{}'), lineageHash: 'other', lineage: [] }]]);
    const kept = await verify([input, summary, marker()], {
      clean: cleanWithout,
      deleted: [`normalized/dt=${day}/a.csv.ndjson`],
    });
    expect(kept).toMatchObject({ summariesWithKeptDeleted: 1, lost: 0 });
    const notDeleted = await verify([input, summary, marker()], { clean: cleanWithout });
    expect(notDeleted.problems).toEqual([expect.stringMatching(/lineage differs from the clean run/)]);
  });

  it('reports a healthy summary dead letter with what its failure record says, as rerun redrive shows it', async () => {
    // The last receive wrote its provisional record before it started, then timed out.
    const record: SnapshotObject = {
      key: 'failures/sum-q.fifo/m1.json',
      bytes: Buffer.from(
        JSON.stringify({
          schema: FAILURE_RECORD_SCHEMA,
          queueName: 'sum-q.fifo',
          messageId: 'm1',
          receiveCount: 5,
          maxReceiveCount: 5,
          givenUp: 'last-receive',
          retryable: true,
          reason: LAST_ATTEMPT_STARTED_REASON,
        }),
      ),
      lastModified: 4000,
      head: { etag: 'f', contentLength: 0, metadata: {} },
    };
    const healthy = '{"type":"summarize","partition":"dt=2026-01-05"}';
    const withRecord = await verify([input, summary, marker(), record], { summaryDlq: ['not a task', healthy] });
    expect(withRecord.problems).toEqual([
      expect.stringContaining(`failure record: 5/5: ${LAST_ATTEMPT_STARTED_REASON}`),
    ]);
    const without = await verify([input, summary, marker()], { summaryDlq: ['not a task', healthy] });
    expect(without.problems).toEqual([expect.stringContaining('failure record: none')]);
  });

  it('requires the summarize DLQ to hold exactly the summary poison', async () => {
    expect(await verify([input, summary, marker()], { summaryDlq: [] })).toMatchObject({ dlqMissingPoison: 1 });
    expect(
      await verify([input, summary, marker()], {
        summaryDlq: ['not a task', '{"type":"summarize","partition":"dt=2026-01-05"}'],
      }),
    ).toMatchObject({ dlqNonPoison: 1, dlqMissingPoison: 0 });
  });
});

describe('formatChaosTable', () => {
  it('prints one row per scenario and a totals row', () => {
    const table = formatChaosTable([
      {
        scenario: 'a',
        seed: 1,
        faultsInjected: 10,
        kills: 2,
        itemsVerified: 5,
        summariesVerified: 4,
        lost: 0,
        duplicated: 0,
        dlqOnlyPoison: true,
        durationMs: 1500,
      },
      {
        scenario: 'b',
        seed: 2,
        faultsInjected: 5,
        kills: 0,
        itemsVerified: 3,
        lost: 0,
        duplicated: 1,
        dlqOnlyPoison: false,
        durationMs: 500,
      },
    ]);
    const lines = table.trim().split('\n');
    expect(lines[0]).toMatch(
      /scenario\s+seed\s+faults injected\s+kills\s+items verified\s+summaries verified\s+lost\s+duplicated/,
    );
    expect(lines[3]).toMatch(/^b\s+2\s+5\s+0\s+3\s+-\s+0\s+1\s+NO/);
    expect(lines.at(-1)).toMatch(/^total \(2 scenarios\)\s+15\s+2\s+8\s+4\s+0\s+1\s+NO\s+2\.0 s$/);
  });
});

describe('RunnerSupervisor: the receives that died with a message', () => {
  const notStarted = (messageId: string) => ({
    event: 'record',
    messageId,
    status: 'failed',
    reason: 'not started: function deadline is near (less than 800 ms left)',
  });
  it('names the messages of a timed-out invocation and a record not started for want of time, not a failure of its own', () => {
    expect(receivesThatDied({ event: 'invocation', outcome: 'timeout', messageIds: ['m1', 'm2'] })).toEqual([
      'm1',
      'm2',
    ]);
    expect(receivesThatDied({ event: 'invocation', outcome: 'success', messageIds: ['m1'] })).toEqual([]);
    expect(receivesThatDied(notStarted('m3') as RunnerEvent)).toEqual(['m3']);
    expect(
      receivesThatDied({ event: 'record', messageId: 'm4', status: 'failed', reason: 'PublishConflictError: lost' }),
    ).toEqual([]);
    expect(
      receivesThatDied({
        event: 'record',
        messageId: 'm5',
        status: 'failed',
        reason: 'not started: an earlier record of this FIFO batch failed',
      }),
    ).toEqual([]);
  });

  it('counts each receive once: a starved record, a timeout, and a timed-out handler that reports a starved record late', async () => {
    const events = [
      { event: 'received', messageIds: ['m1', 'm2'] },
      notStarted('m1'),
      { event: 'invocation', outcome: 'success', messageIds: ['m1', 'm2'] },
      { event: 'received', messageIds: ['m3'] },
      { event: 'invocation', outcome: 'timeout', messageIds: ['m3'] },
      notStarted('m3'),
      { event: 'received', messageIds: ['m4'] },
      notStarted('m4'),
      { event: 'invocation', outcome: 'timeout', messageIds: ['m4'] },
    ];
    const runner = new RunnerSupervisor({
      restart: false,
      script: fileURLToPath(new URL('./fixtures/eventReplay.ts', import.meta.url)),
      env: { RUNNER_EVENTS: JSON.stringify(events) },
    });
    runner.start();
    await runner.waitForExit();
    expect(runner.totals.diedWhileHeld).toEqual({ m1: 1, m3: 1, m4: 1 });
  });
});
