import type { PartitionWindow } from '../../src/partitions/partitionScheme.js';
import type { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import type { WindowTask } from '../../src/window/defineWindowTask.js';
import { windowOutputKeys } from '../../src/window/windowOutputLayout.js';
import type { InputRules } from '../partition/inputCoverage.js';
import { PartitionStatus } from '../partition/judgePartition.js';
import { type WindowStageVerdict, windowStageStatus } from '../status/windowStageStatus.js';

/** What one {@link WindowPublishWatch.check} saw. */
export interface WindowPublishCheck {
  /** Planned windows seen published so far (a window seen published stays so for the wait). */
  readonly published: number;
  /** The last verdict of every planned window not seen published yet, in window order. */
  readonly remaining: readonly WindowStageVerdict[];
}

/**
 * A backfill's wait on one window stage's planned windows, made cheap: a window seen published is
 * not looked at again; the others' output folders are read with one listing of the key range they
 * span (their keys share the stage's output prefix), and only a window whose folder changed since
 * the last check (its output or a marker written) is judged again, by `rerun status`'s judgement
 * (windowStageStatus). A check told the queue was seen empty judges every remaining window (a
 * window can change state without a write to its folder: its inputs changed back, or an upstream
 * input got its output). So a wait costs about one listing per check plus a few judgements per
 * window, instead of every window's listings on every check.
 *
 * @example
 * const watch = new WindowPublishWatch({ task, windows, reader });
 * const seen = await watch.check(false); // seen.published of windows.length
 */
export class WindowPublishWatch {
  /** Requests its checks sent (listings; HEADs of the upstream coverage). */
  readonly requests = { list: 0, head: 0 };
  private readonly done = new Set<string>();
  private readonly folders = new Map<string, string>();
  private readonly signatures = new Map<string, string>();
  private readonly verdicts = new Map<string, WindowStageVerdict>();

  constructor(
    private readonly options: {
      readonly task: WindowTask<unknown, unknown>;
      /** The planned windows. */
      readonly windows: readonly PartitionWindow[];
      readonly reader: S3PartitionStore;
      /** windowStageInputRules of the stage, when it reads an object stage. */
      readonly upstreamInputs?: InputRules;
    },
  ) {
    const { definition } = options.task;
    for (const window of options.windows) {
      const { outputKey } = windowOutputKeys(options.task.scheme, window, definition.output);
      this.folders.set(window.name, outputKey.slice(0, outputKey.length - definition.output.fileName.length));
    }
  }

  /** One check; `everything` judges every remaining window whether its folder changed or not. */
  async check(everything: boolean): Promise<WindowPublishCheck> {
    const { reader, task } = this.options;
    const listBefore = reader.listRequests;
    const headBefore = reader.headRequests;
    const remaining = this.options.windows.filter((w) => !this.done.has(w.name));
    if (remaining.length > 0) {
      const seen = await this.folderSignatures(remaining);
      const changed = remaining.filter((w) => everything || this.signatures.get(w.name) !== (seen.get(w.name) ?? ''));
      for (const w of remaining) this.signatures.set(w.name, seen.get(w.name) ?? '');
      if (changed.length > 0) {
        const report = await windowStageStatus(task, changed, {
          reader,
          ...(this.options.upstreamInputs ? { upstreamInputs: this.options.upstreamInputs } : {}),
        });
        for (const verdict of report.windows) {
          this.verdicts.set(verdict.window, verdict);
          if (verdict.status === PartitionStatus.PUBLISHED) this.done.add(verdict.window);
        }
      }
    }
    this.requests.list += reader.listRequests - listBefore;
    this.requests.head += reader.headRequests - headBefore;
    return {
      published: this.done.size,
      remaining: this.options.windows
        .filter((w) => !this.done.has(w.name))
        .flatMap((w) => this.verdicts.get(w.name) ?? []),
    };
  }

  /**
   * Every window's folder as the listings show it (each key with its ETag, so a rewrite shows): one
   * listing of the key range from the first folder to the last, under their common prefix. A range
   * holding other windows' keys (a few windows far apart) is listed no further than one page per
   * window; the folders it did not reach are then listed one by one, as a listing per window would.
   */
  private async folderSignatures(windows: readonly PartitionWindow[]): Promise<Map<string, string>> {
    const { reader } = this.options;
    const bucket = this.options.task.definition.output.bucket;
    const byFolder = new Map<string, string>();
    for (const w of windows) byFolder.set(this.folders.get(w.name) ?? '', w.name);
    const folders = [...byFolder.keys()].sort(utf8Compare);
    const first = folders[0] ?? '';
    const last = folders.at(-1) ?? '';
    const lengths = [...new Set(folders.map((f) => f.length))];
    const seen = new Map<string, string[]>();
    const note = (window: string, object: { key: string; etag: string }) =>
      seen.set(window, [...(seen.get(window) ?? []), `${object.key} ${object.etag}`]);
    const budget = folders.length * KEYS_PER_PAGE;
    let listed = 0;
    let reached: string | undefined;
    const listing = reader.list(bucket, {
      prefix: commonPrefix(folders),
      startAfter: first,
      stopAt: (key) => !key.startsWith(last) && utf8Compare(key, last) > 0,
    });
    for await (const object of listing) {
      for (const length of lengths) {
        const window = byFolder.get(object.key.slice(0, length));
        if (window !== undefined) note(window, object);
      }
      // Stop at the end of a page, before the listing asks for the next one.
      if (++listed === budget) {
        reached = object.key;
        break;
      }
    }
    if (reached !== undefined) {
      const passed = reached;
      for (const folder of folders.filter((f) => passed.startsWith(f) || utf8Compare(f, passed) > 0)) {
        const window = byFolder.get(folder) as string;
        seen.delete(window);
        for await (const object of reader.list(bucket, { prefix: folder })) note(window, object);
      }
    }
    return new Map([...seen].map(([window, keys]) => [window, keys.join('\n')]));
  }
}

/** Keys a ListObjectsV2 page holds. */
const KEYS_PER_PAGE = 1000;

/** S3's key order (UTF-8 bytes), which differs from JavaScript's string order past the BMP. */
function utf8Compare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The longest prefix every string shares. */
function commonPrefix(strings: readonly string[]): string {
  let prefix = strings[0] ?? '';
  for (const s of strings) {
    let i = 0;
    while (i < prefix.length && i < s.length && prefix[i] === s[i]) i++;
    prefix = prefix.slice(0, i);
  }
  // Never end on half of a surrogate pair (it has no UTF-8 form).
  const last = prefix.charCodeAt(prefix.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? prefix.slice(0, -1) : prefix;
}
