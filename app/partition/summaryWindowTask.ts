import { createInterface } from 'node:readline';
import { partitionName } from '../../src/keys/partition.js';
import type { TimePartitionSpec } from '../../src/partitions/partitionSpec.js';
import { defineWindowTask, type WindowTask } from '../../src/window/defineWindowTask.js';
import { type DailySummary, parseSummary, SummaryAccumulator, serializeSummary } from './dailySummary.js';
import type { InputRules } from './inputCoverage.js';
import type { LineageEntry } from './lineage.js';
import { listDayCoverage } from './listPartitions.js';
import type { SummaryCoverage } from './summaryCoverage.js';
import { LineageKind, lineageRoot, type SummaryLayout, stagingRoot, summaryRoot } from './summaryLayout.js';

/**
 * The reference daily summary as a window task of the library (src/window/): a daily window over two
 * inputs of the same daily scheme (the normalized outputs and the quarantine objects of one source),
 * built by {@link SummaryAccumulator} into one canonical JSON document. What is the summary's own is
 * here: its layout, its format, its validation (parseSummary) and its record of the day's raw
 * inputs (the coverage); the lineage, the done-check, the publish and the marker are the library's.
 */

/** Lines read between two checks of the time left. */
export const LINES_PER_TIME_CHECK = 1000;

/** The summary's windows and its inputs' scheme: a UTC day, `dt=YYYY-MM-DD`. */
export const SUMMARY_PARTITIONS: TimePartitionSpec = { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' };

/** What a summary's build reports. */
export interface SummaryCounts {
  readonly files: number;
  readonly records: number;
  readonly quarantined: number;
}

/**
 * The summary of one source as a window task. With `inputs`, its record of the day's raw inputs (the
 * coverage) joins the done-check, the metadata and the marker.
 *
 * @example
 * const task = summaryWindowTask({ bucket: 'rerun-output', layout: summaryLayout('rerun-input'), codeVersion: 'summarize@1' });
 * await task.run('2026-01-05', { store, reader });
 */
export function summaryWindowTask(options: {
  readonly bucket: string;
  readonly layout: SummaryLayout;
  readonly codeVersion: string;
  readonly inputs?: InputRules;
}): WindowTask<SummaryCounts, SummaryCoverage> {
  const { bucket, layout, codeVersion, inputs: rules } = options;
  return defineWindowTask<SummaryCounts, SummaryCoverage>({
    name: 'summary',
    codeVersion,
    partitions: SUMMARY_PARTITIONS,
    inputs: [LineageKind.NORMALIZED, LineageKind.QUARANTINE].map((kind) => ({
      name: kind,
      prefix: lineageRoot(layout, kind),
      partitions: SUMMARY_PARTITIONS,
    })),
    output: {
      bucket,
      prefix: summaryRoot(layout),
      fileName: 'summary.json',
      contentType: 'application/json',
      stagingPrefix: `${stagingRoot(layout)}${layout.source}/`,
    },
    partitionLabel: (window) => partitionName(window.name),
    words: {
      output: 'summary',
      window: 'day',
      built: 'summarized',
      functionName: 'summarize function',
      entries: 'normalized outputs and quarantine objects',
      maxBytesOption: 'maxSummaryBytes',
    },
    ...(rules
      ? {
          recordInputs: async (window, { lineage, reader }) => {
            const outputs = new Map(lineage.map((entry) => [entry.key, entry.lastModified]));
            const coverage = await listDayCoverage(reader, bucket, window.name, rules, outputs);
            return { digest: coverage.digest, value: coverage };
          },
        }
      : {}),
    async build(inputs, writer, context) {
      const accumulator = new SummaryAccumulator();
      for await (const input of inputs) {
        accumulator.startFile(
          { kind: input.source as LineageKind, path: input.path, etag: input.etag },
          input.contentLength,
        );
        const lines = createInterface({ input: input.body, crlfDelay: Number.POSITIVE_INFINITY });
        try {
          let count = 0;
          for await (const line of lines) {
            accumulator.addLine(line);
            if (++count % LINES_PER_TIME_CHECK === 0) context.checkDeadline();
          }
        } finally {
          lines.close();
        }
      }
      const lineage: LineageEntry[] = context.lineage.map((e) => ({
        kind: e.source as LineageKind,
        path: e.path,
        etag: e.etag,
      }));
      const summary: DailySummary = accumulator.finish({
        day: context.window.name,
        codeVersion: context.codeVersion,
        lineageHash: context.lineageHash,
        lineage,
        ...(context.record ? { coverage: context.record } : {}),
      });
      writer.write(serializeSummary(summary));
      return { files: summary.files, records: summary.records, quarantined: summary.quarantined };
    },
    validate(bytes, context) {
      const day = context.partition.slice('dt='.length);
      const checked = parseSummary(bytes, { day, lineageHash: context.lineageHash, codeVersion: context.codeVersion });
      return checked.ok ? undefined : checked.reason;
    },
  });
}
