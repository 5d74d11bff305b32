import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Exploration, SimConfig } from './explore.js';

/**
 * One mutation: a defect of one class, put back into a copy of the product by replacing exact
 * pieces of code (one rule may be written in more than one place). Each `find` must occur exactly
 * once in `file`, so a change of that code makes the suite fail loudly instead of testing nothing.
 */
export interface Mutation {
  readonly name: string;
  /** The class of defect, as people name it. */
  readonly defect: string;
  /** Relative to the repository root. */
  readonly file: string;
  readonly edits: readonly { readonly find: string; readonly replace: string }[];
  /**
   * The configuration whose exploration caught it in the last full run (`npm run test:sim`, which
   * tries every configuration in order). Inside `npm test` it is explored first and to the end,
   * and the others within the bounded budget.
   */
  readonly caughtBy: string;
  /**
   * The configurations that run the mutated code, when only some do: the summary stage's code runs
   * only where a summary task is delivered, so the full run explores those alone for it (the others
   * cannot reach the mutated lines, and would only add minutes to its time to catch).
   * @default every configuration
   */
  readonly runsIn?: RegExp;
}

/**
 * The mutations the explorer must catch: each one of the defect classes the publish protocol and
 * the ledger guard against.
 */
export const MUTATIONS: readonly Mutation[] = [
  {
    // A create is not followed by a check of the input (processObject's removalsLookAgain): only the
    // removal's look again removes what a create that read the input before its delete left.
    name: 'removal-does-not-look-again',
    caughtBy: 'create then delete single-part, crashes 0',
    defect: 'a removal that does not look again after the builds that read the input before the delete',
    file: 'src/batch/processSqsRecord.ts',
    edits: [
      {
        find: '  if (isFifo(delivery.record) || outsideInputs(options.worker, object)) return outcome;\n',
        replace: '  return outcome;\n',
      },
    ],
  },
  {
    // The orphan rule has two halves: only a side object the call created, and only one the output
    // in place does not list with that ETag. Taking accepted objects for orphans as well (the first
    // half, the defect the issue met) cannot be seen any more once every output lists its side
    // outputs: an accepted object has the bytes, hence the ETag, of the winner's own, which the
    // winner's output lists, so the second half keeps it; and where no output lists it yet, the
    // publisher's closing done-check repairs what the sweep removed. That mutant is equivalent;
    // this one removes the second half, which nothing else covers for free.
    name: 'orphan-rule',
    caughtBy: 'create single-part+side, crashes 0',
    defect: "the sweep takes a side object it created for an orphan even when the winner's output lists it",
    file: 'src/worker/sideOutputs.ts',
    edits: [
      { find: '    if (orphanEtag !== undefined && listedEtag === orphanEtag) continue;\n', replace: '' },
      { find: 'if (!existing || existing.etag === listedEtag) continue;', replace: 'if (!existing) continue;' },
    ],
  },
  {
    name: 'delete-without-if-match',
    caughtBy: 'delete single-part, crashes 0',
    defect: 'a delete without If-Match',
    file: 'src/s3/S3ObjectStore.ts',
    edits: [
      {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal, to find
        find: 'new DeleteObjectCommand({ Bucket: bucket, Key: key, IfMatch: `"${etag}"` })',
        replace: 'new DeleteObjectCommand({ Bucket: bucket, Key: key })',
      },
    ],
  },
  {
    name: 'multipart-side-check-skipped',
    caughtBy: 'overwrite multipart+side, crashes 0',
    defect: "the done-check skips a multipart output's side outputs",
    file: 'src/worker/doneCheck.ts',
    edits: [
      {
        find: 'verdict.state === OutputState.BUILT && listed ? checkListedSideOutputs(worker, store, object, listed) : undefined,',
        replace:
          "verdict.state === OutputState.BUILT && listed && !judged.head?.metadata['rerun-integrity']?.startsWith('sha256-parts') ? checkListedSideOutputs(worker, store, object, listed) : undefined,",
      },
    ],
  },
  {
    name: 'source-etag-check-skipped',
    caughtBy: 'overwrite single-part, crashes 0',
    defect: "the done-check does not compare the output's source ETag with the event's",
    file: 'src/done/eventProvesCurrent.ts',
    edits: [{ find: 'stripQuotes(event.eTag) === verdict.sourceEtag', replace: 'true' }],
  },
  {
    name: 'put-without-condition',
    caughtBy: 'create single-part, crashes 0',
    defect: 'a PUT without its condition',
    file: 'src/s3/S3ObjectStore.ts',
    edits: [
      {
        find: `              ...(options.contentType ? { ContentType: options.contentType } : {}),
              ...conditionHeaders(options.condition),`,
        replace: `              ...(options.contentType ? { ContentType: options.contentType } : {}),`,
      },
    ],
  },
  {
    name: 'no-closing-check',
    caughtBy: 'revert while building single-part+side, crashes 0',
    defect: 'a call that changed side objects returns without the closing done-check',
    file: 'src/worker/processObject.ts',
    edits: [{ find: '    if (changedSideObjects > 0) {', replace: '    if (false) {' }],
  },
  {
    name: 'no-input-check-after-publish',
    caughtBy: 'revert single-part, crashes 0',
    defect: 'a delivery trusts the content it read to still be the input once it has published',
    file: 'src/worker/processObject.ts',
    edits: [
      {
        find: "    const now = await options.store.get(object.bucket, object.key, { ifNoneMatch: published });\n    if (now.status === 'not-modified') return finish(settled);",
        replace:
          '    return finish(settled);\n    const now = await options.store.get(object.bucket, object.key, { ifNoneMatch: published });',
      },
    ],
  },
  {
    // The output a create-first round built is published after the 412 without a second read of the
    // input (src/worker/keptOutput.ts): only the check after the publish sees an input changed since
    // the create read it, whose own delivery may have built it before this round's HEAD.
    name: 'kept-output-trusted',
    caughtBy: 'overwrite single-part, crashes 0',
    defect: 'a delivery that published what its create built trusts it without the check after the publish',
    file: 'src/worker/processObject.ts',
    edits: [
      {
        find: "    kept = skipDoneCheck && 'lostRace' in result ? result.kept : undefined;\n",
        replace:
          "    if (kept && !('lostRace' in result) && result.outcome.status === 'processed') return finish(result.outcome);\n    kept = skipDoneCheck && 'lostRace' in result ? result.kept : undefined;\n",
      },
    ],
  },
  {
    name: 'repeat-trusts-event',
    caughtBy: 'revert single-part+side, crashes 1',
    defect: "a repeated delivery lets the event's eTag prove the output current",
    file: 'src/batch/processSqsRecord.ts',
    edits: [
      {
        find: '        freshDelivery: fresh,',
        replace: '        freshDelivery: true,',
      },
    ],
  },
  {
    // A redriven dead letter is a new message (receive count 1) carrying an old event: only the event's
    // age tells it from S3's first delivery. Without it, the redrive trusts the event's eTag, and the
    // output a delivery that died before its closing check left stays (issue 33: before the redrive
    // configuration, only a unit test of isFreshDelivery saw this).
    name: 'fresh-ignores-event-age',
    caughtBy: 'redrive of a stale dead letter single-part, crashes 0',
    defect: "a delivery is fresh by its receive count alone, whatever its event's age",
    file: 'src/batch/isFreshDelivery.ts',
    edits: [{ find: '  return now - eventTime < timeLimitMs;', replace: '  return true;' }],
  },
  {
    // In a non-versioned bucket two writes at the same time may send one event, naming the first
    // write's ETag: an output built from that ETag proves nothing about the input.
    name: 'unversioned-event-trusted',
    caughtBy: 'two writes at once, one event, non-versioned single-part, crashes 0',
    defect: "the event's eTag proves the output current without a versionId (a non-versioned bucket)",
    file: 'src/done/eventProvesCurrent.ts',
    edits: [{ find: '(eventOfVersionedWrite(event) || sentByRerun(event)) &&', replace: 'true &&' }],
  },
  {
    // Where a delete event's removal looks again later (src/batch/removalLookAgain.ts), that look again
    // repairs what this defect removes, so only the prune after a lost delete event shows it.
    name: 'remover-does-not-look-back',
    caughtBy: 'prune after a lost delete, racing the same bytes again single-part, crashes 0',
    defect: "the deletion path trusts the input's absence it saw before its deletes",
    file: 'src/worker/removeOutputs.ts',
    edits: [
      {
        find: 'if (removed.length > 0 && (await store.head(object.bucket, object.key)) !== undefined) {',
        replace: 'if (false) {',
      },
    ],
  },
  {
    name: 'seal-without-condition',
    caughtBy: 'create multipart, crashes 0',
    defect: "the seal's completion replaces whatever is at the key",
    file: 'src/s3/S3ObjectStore.ts',
    edits: [{ find: 'condition: { ifMatch: options.etag },', replace: "condition: { ifNoneMatch: '*' }," }],
  },
  {
    name: 'lease-released-too-early',
    caughtBy: 'notify single-part+side, crashes 0',
    defect: 'the ledger lease released too early (expired as it is taken)',
    file: 'src/ledger/ledgerCommands.ts',
    edits: [
      {
        find: "':leaseExpiresAt': { N: String(now + leaseMs) },",
        replace: "':leaseExpiresAt': { N: String(now - 1) },",
      },
    ],
  },
  {
    // The summary's publish is a compare-and-swap on what its done-check saw. Comparing instead with
    // a fresh HEAD taken just before the put makes it a blind overwrite of whatever is there (still
    // conditional, so the bucket policy lets it through): a delivery that lost the race to publish
    // the same lineage publishes it again instead of starting over and finding it current.
    name: 'summary-publish-without-its-condition',
    runsIn: /^summary /,
    caughtBy: 'summary of a built day single-part+side, crashes 0',
    defect: "the summary's publish overwrites whatever is there instead of what its done-check saw",
    file: 'src/window/publishWindowOutput.ts',
    edits: [
      {
        find: "  const published = await put(key, head ? { ifMatch: head.etag } : { ifNoneMatch: '*' });",
        replace:
          "  const there = await store.head(bucket, key);\n  const published = await put(key, there ? { ifMatch: there.etag } : { ifNoneMatch: '*' });",
      },
    ],
  },
  {
    // A delivery that loses the publish starts over with the lineage it lists next, under that
    // lineage's own staging key: the copy it staged is nobody's to remove any more.
    name: 'summary-staging-left-on-lost-publish',
    runsIn: /^summary /,
    caughtBy: 'summary of a built day single-part+side, crashes 0',
    defect: 'a summary writer that lost the publish leaves its staging copy behind',
    file: 'src/window/publishWindowOutput.ts',
    edits: [
      {
        find: `    // The next round stages under its own lineage hash: do not leave this copy behind.
    await store.deleteIfMatch(bucket, staged, stagedWrite.etag);
`,
        replace: '',
      },
    ],
  },
  {
    // The marker race the simulation tier found: a writer's marker step that deletes every marker
    // but its own lets an older writer delete the newer writer's marker, leaving one that names an
    // output no longer published.
    name: 'window-marker-deletes-the-newer-writers',
    runsIn: /^summary /,
    caughtBy: 'summary after create single-part+side, crashes 0',
    defect: "an older writer's marker step deletes the marker of the output published after it",
    file: 'src/window/publishWindowOutput.ts',
    edits: [{ find: '    if (names(candidate.marker)) continue;', replace: '    if (candidate === mine) continue;' }],
  },
  {
    // A user's window task reads each input with If-Match on the ETag its listing named, so the
    // output is exactly the function of the lineage it records. A read that takes whatever is there
    // publishes, under the old ETag, the counts of the version written after the listing.
    name: 'window-reads-not-pinned',
    runsIn: /^window task: /,
    caughtBy: 'window task: an input rewritten during the build, crashes 0',
    defect: "a window task's build reads the input as it is now, not the version its lineage names",
    file: 'src/s3/S3PartitionStore.ts',
    edits: [
      {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal, to find
        find: 'new GetObjectCommand({ Bucket: bucket, Key: key, IfMatch: `"${etag}"` })',
        replace: 'new GetObjectCommand({ Bucket: bucket, Key: key })',
      },
    ],
  },
  {
    // A window built from its parts takes a part as done only when it records its share of the
    // lineage listed now. A part judged by its integrity alone (any complete part is current)
    // combines a part built from an input's older version into a window that records the new one.
    name: 'window-part-trusted-stale',
    runsIn: /^window task from parts: /,
    caughtBy: 'window task from parts: an input rewritten during the build, crashes 1',
    defect: 'a part of a large window is taken as current though its inputs changed since it was built',
    file: 'src/window/buildFromParts.ts',
    edits: [
      {
        find: '    if (verdict.state === WindowOutputState.CURRENT) etag = verdict.etag;',
        replace: '    if (verdict.state !== WindowOutputState.MISSING) etag = verdict.etag;',
      },
    ],
  },
];

/** The directories a mutant copies: everything the simulation imports. */
const COPIED = ['src', 'app', 'test/sim'];

/**
 * Builds the mutant's tree under `.rerun/mutants/<name>/` (inside the checkout, so that its imports
 * of packages resolve from the checkout's node_modules) and returns the URL of its copy of `module`
 * (a path under test/sim/). The copy is made anew each time.
 */
export function buildMutant(root: string, mutation: Mutation, module: string): string {
  const dir = join(root, '.rerun', 'mutants', mutation.name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const sub of COPIED) cpSync(join(root, sub), join(dir, sub), { recursive: true });
  const target = join(dir, mutation.file);
  if (!existsSync(target)) throw new Error(`mutation ${mutation.name}: ${mutation.file} does not exist`);
  let text = readFileSync(target, 'utf8');
  for (const { find, replace } of mutation.edits) {
    const at = text.indexOf(find);
    if (at < 0 || text.indexOf(find, at + 1) >= 0) {
      throw new Error(
        `mutation ${mutation.name}: the code to replace must occur exactly once in ${mutation.file}; the product changed, update the mutation`,
      );
    }
    text = text.slice(0, at) + replace + text.slice(at + find.length);
  }
  writeFileSync(target, text);
  return pathToFileURL(join(dir, module)).href;
}

/** How a mutant fared: the configuration and schedule that caught it, and what it took. */
export interface MutantResult {
  readonly mutation: string;
  readonly caught: boolean;
  readonly config?: string;
  /** Executions (across the configurations tried) until the first violation. */
  readonly executions: number;
  readonly ms: number;
  readonly violation?: string;
}

/**
 * Explores the mutant's configurations in order, each exhaustively (or within `budget`
 * executions), until one finds a violation.
 */
export async function runMutant(
  explore: (config: SimConfig, budget: number) => Promise<Exploration>,
  configs: readonly SimConfig[],
  mutation: Mutation,
  budget: number,
  /** A configuration explored to the end, whatever the budget. */
  unbounded?: string,
): Promise<MutantResult> {
  const started = performance.now();
  let executions = 0;
  for (const config of configs) {
    const result = await explore(config, config.name === unbounded ? Number.POSITIVE_INFINITY : budget);
    executions += result.schedules + result.merged;
    if (result.failure) {
      return {
        mutation: mutation.name,
        caught: true,
        config: config.name,
        executions,
        ms: performance.now() - started,
        violation: result.failure.violations[0] ?? '',
      };
    }
  }
  return { mutation: mutation.name, caught: false, executions, ms: performance.now() - started };
}
