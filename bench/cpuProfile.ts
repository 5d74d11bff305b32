import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join, relative } from 'node:path';

/** One function's share of a CPU profile. */
export interface ProfileEntry {
  /** The function's original name where the source map or the source tells it, else V8's. */
  readonly name: string;
  /** Where it is: `src/publish/OutputWriter.ts:120`, `@smithy/...`, `node:internal/...`, `(garbage collector)`. */
  readonly where: string;
  readonly area: ProfileArea;
  readonly selfMs: number;
  /** Share of the profile's busy time (idle left out), percent. */
  readonly percent: number;
}

/** What a function's time is spent on, by where its code lives. */
export const ProfileArea = {
  PARSE: 'CSV parsing, decoding and the normalizer loop (functions/normalize)',
  SERIALIZE: 'JSON serialization of records (src/normalize/csvHeader.ts)',
  HASH: 'SHA-256 (node:crypto)',
  COPY: 'our buffers and copies (OutputWriter, line batching, Buffer encode and Latin-1 copy)',
  SDK: 'AWS SDK (request building, signing, streaming)',
  STREAMS: 'node streams, sockets and HTTP',
  GC: 'garbage collection',
  OTHER_OURS: 'rerun, other (done-check, batch handler, runner)',
  OTHER: 'other (V8 builtins, module loading, program)',
} as const;
export type ProfileArea = (typeof ProfileArea)[keyof typeof ProfileArea];

/** A CPU profile summarized by self time. */
export interface ProfileSummary {
  readonly file: string;
  /** Sampled time less `(idle)`, ms. */
  readonly busyMs: number;
  readonly idleMs: number;
  /** Functions by self time, largest first. */
  readonly top: readonly ProfileEntry[];
  /** Self time by area, largest first. */
  readonly areas: readonly { readonly area: ProfileArea; readonly selfMs: number; readonly percent: number }[];
}

interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly children?: readonly number[];
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
      readonly columnNumber: number;
    };
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/**
 * The newest `.cpuprofile` in `dir` (what `node --cpu-prof --cpu-prof-dir=dir` wrote).
 *
 * @example
 * const file = newestCpuProfile('/tmp/prof');
 */
export function newestCpuProfile(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  files.sort();
  const last = files.at(-1);
  return last ? join(dir, last) : undefined;
}

/**
 * Summarizes a V8 CPU profile by self time. Positions in a minified bundle are mapped back through
 * the bundle's source map (`<bundle>.map`, as esbuild writes it beside the stack's asset) to the
 * original file, line and name, so the figures read as the code's own functions.
 *
 * @example
 * const summary = summarizeCpuProfile('/tmp/prof/CPU.cpuprofile', { bundle: '/tmp/.../normalize/index.mjs' });
 */
export function summarizeCpuProfile(
  file: string,
  options: { readonly bundle?: string; readonly top?: number } = {},
): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const mapFile = options.bundle ? `${options.bundle}.map` : undefined;
  const sourceMap =
    mapFile && existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : undefined;
  const selfByNode = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const sourceLines = new Map<string, string[] | undefined>();
  const lineOf = (path: string, line: number): string | undefined => {
    if (!sourceLines.has(path)) {
      sourceLines.set(path, existsSync(path) ? readFileSync(path, 'utf8').split('\n') : undefined);
    }
    return sourceLines.get(path)?.[line];
  };

  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
  const bundleName = options.bundle?.replace(/^.*\//, '');
  /** The function's original name, place and source file (through the source map for the bundle). */
  const resolve = (frame: CpuProfile['nodes'][number]['callFrame']) => {
    let name = frame.functionName || '(anonymous)';
    let where = frame.url ? `${frame.url}:${frame.lineNumber + 1}` : frame.functionName;
    let source = frame.url;
    if (sourceMap && bundleName && frame.url.endsWith(bundleName)) {
      const entry = sourceMap.findEntry(frame.lineNumber, frame.columnNumber) as {
        originalSource?: string;
        originalLine?: number;
        name?: string;
      };
      if (entry.originalSource) {
        source = entry.originalSource;
        const path = readablePath(entry.originalSource);
        where = `${path}:${(entry.originalLine ?? 0) + 1}`;
        const text = lineOf(localPath(path), entry.originalLine ?? -1);
        name = entry.name ?? (text ? functionNameIn(text) : undefined) ?? name;
      }
    }
    return { name, where, source };
  };

  const byFunction = new Map<string, { name: string; where: string; area: ProfileArea; selfMs: number }>();
  let idleMs = 0;
  for (const node of profile.nodes) {
    const selfMs = selfByNode.get(node.id) ?? 0;
    if (selfMs === 0) continue;
    const frame = node.callFrame;
    if (frame.functionName === '(idle)') {
      idleMs += selfMs;
      continue;
    }
    const { name, where, source } = resolve(frame);
    // A native frame (a RegExp, a socket write, TextDecoder) works for its caller: its area is the
    // nearest JavaScript ancestor's, and its place says who called it.
    let areaSource = source;
    let shown = where;
    if (!frame.url && !frame.functionName.startsWith('(')) {
      for (let up = parentOf.get(node.id); up !== undefined; up = parentOf.get(up)) {
        const caller = nodes.get(up)?.callFrame;
        if (!caller?.url) continue;
        const resolved = resolve(caller);
        areaSource = resolved.source;
        shown = `native, called by ${resolved.name} (${resolved.where})`;
        break;
      }
    }
    const key = `${name}@${shown}`;
    const seen = byFunction.get(key);
    if (seen) seen.selfMs += selfMs;
    else byFunction.set(key, { name, where: shown, area: areaOf(areaSource, name), selfMs });
  }
  const busyMs = [...byFunction.values()].reduce((n, f) => n + f.selfMs, 0);
  const pct = (ms: number) => Math.round((ms / Math.max(busyMs, 0.001)) * 1000) / 10;
  const entries = [...byFunction.values()].sort((a, b) => b.selfMs - a.selfMs);
  const areas = new Map<ProfileArea, number>();
  for (const e of entries) areas.set(e.area, (areas.get(e.area) ?? 0) + e.selfMs);
  return {
    file,
    busyMs: Math.round(busyMs),
    idleMs: Math.round(idleMs),
    top: entries
      .slice(0, options.top ?? 20)
      .map((e) => ({ ...e, selfMs: Math.round(e.selfMs), percent: pct(e.selfMs) })),
    areas: [...areas]
      .sort((a, b) => b[1] - a[1])
      .map(([area, ms]) => ({ area, selfMs: Math.round(ms), percent: pct(ms) })),
  };
}

/** `../../node_modules/@smithy/x.js` -> `@smithy/x.js`; a project file -> its path in the repository. */
function readablePath(source: string): string {
  const modules = source.lastIndexOf('node_modules/');
  if (modules >= 0) return source.slice(modules + 'node_modules/'.length);
  for (const top of ['src/', 'functions/', 'test/', 'bench/', 'infra/', 'app/', 'local/']) {
    const at = source.lastIndexOf(`/${top}`);
    if (at >= 0) return source.slice(at + 1);
  }
  return relative(process.cwd(), source);
}

function localPath(path: string): string {
  return path.startsWith('@') || !path.includes('/') ? join('node_modules', path) : path;
}

/** The name a source line declares at its start: `function f(`, `f(...) {`, `const f = (`, `get f(`. */
function functionNameIn(line: string): string | undefined {
  const match =
    /(?:function\*?\s+|(?:async\s+|get\s+|set\s+|static\s+|private\s+|protected\s+)*)([A-Za-z_$][\w$]*)\s*(?:=\s*(?:async\s*)?\(|\(|=\s*function|<)/.exec(
      line,
    );
  return match?.[1];
}

function areaOf(source: string, name: string): ProfileArea {
  if (name === '(garbage collector)') return ProfileArea.GC;
  if (/node:internal\/crypto|^digest$|^update$/.test(source) || /^(digest|update|Hash)$/.test(name)) {
    return ProfileArea.HASH;
  }
  if (/@smithy|@aws-sdk|@aws-crypto|fast-xml-parser|bowser|strnum/.test(source)) return ProfileArea.SDK;
  if (
    /node:internal\/(streams|stream_base|net|http|_http|js_stream|tls|dns|timers|event_target)|node:(net|http|_http)/.test(
      source,
    )
  ) {
    return ProfileArea.STREAMS;
  }
  if (/normalize\/csvHeader\.ts/.test(source) || name === 'stringify') return ProfileArea.SERIALIZE;
  if (/normalize\/normalizeWorker\.ts|src\/publish\/|^node:buffer$/.test(source)) return ProfileArea.COPY;
  if (/(functions|src)\/normalize\//.test(source)) return ProfileArea.PARSE;
  if (/(^|\/)(src|app|local|test)\//.test(source)) return ProfileArea.OTHER_OURS;
  return ProfileArea.OTHER;
}
