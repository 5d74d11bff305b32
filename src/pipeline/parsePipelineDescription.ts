import { TimeGrain } from '../partitions/partitionSpec.js';
import type { DescribedKeyRule, OutputKeyRule } from './keyRule.js';
import { didYouMean } from './nearestName.js';
import { PipelineDescriptionError } from './PipelineDescriptionError.js';
import { PIPELINE_DESCRIPTION_VERSION, type PipelineDescription } from './pipelineDescription.js';

/** Stage and side-output names: what `--stage NAME` and a field path can carry as they are. */
const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** The fields of a time template, and those each grain needs to name one window. */
const TEMPLATE_FIELDS = ['yyyy', 'MM', 'dd', 'HH', 'ww'] as const;
const GRAIN_FIELDS: Record<TimeGrain, readonly string[]> = {
  [TimeGrain.HOURLY]: ['yyyy', 'MM', 'dd', 'HH'],
  [TimeGrain.DAILY]: ['yyyy', 'MM', 'dd'],
  [TimeGrain.WEEKLY]: ['yyyy', 'ww'],
  [TimeGrain.MONTHLY]: ['yyyy', 'MM'],
};

/**
 * Reads a pipeline description from JSON data (a stack's PipelineDescription output, a `--pipeline`
 * file), checked field by field: unknown fields, unknown stage references (with the nearest known
 * name), cycles, missing or mistyped fields each throw a {@link PipelineDescriptionError} whose
 * message starts with the field's path. Any other value throws that error too, never another.
 *
 * @example
 * const d = parsePipelineDescription(JSON.parse(outputs.PipelineDescription));
 * d.stages.upper; // { kind: 'object', input: { prefix: 'incoming/' }, outputKey: { prefix: 'upper/', ... } }
 */
export function parsePipelineDescription(value: unknown): PipelineDescription {
  return checkPipeline(value, { functions: false }) as PipelineDescription;
}

/**
 * The checks of {@link parsePipelineDescription} and definePipeline (which also accepts custom key
 * rules as functions): a normalized, frozen copy of the pipeline.
 */
export function checkPipeline(value: unknown, options: { readonly functions: boolean }): unknown {
  const top = record(value, '');
  fields(top, '', ['name', 'stages'], ['version']);
  const version = own(top, 'version');
  if (version !== undefined && version !== PIPELINE_DESCRIPTION_VERSION) {
    throw new PipelineDescriptionError(
      'version',
      `this rerun reads version ${PIPELINE_DESCRIPTION_VERSION} (got ${show(version)}): upgrade rerun, or publish the description again with this one`,
    );
  }
  const name = text(own(top, 'name'), 'name');
  const stagesValue = record(own(top, 'stages'), 'stages');
  const names = Object.keys(stagesValue);
  if (names.length === 0) throw new PipelineDescriptionError('stages', 'name at least one stage');
  const stages: Record<string, unknown> = {};
  for (const stageName of names) {
    const path = `stages.${stageName}`;
    if (!NAME.test(stageName)) {
      throw new PipelineDescriptionError(
        `stages[${JSON.stringify(stageName)}]`,
        'a stage name is a letter, then up to 63 letters, digits, "-" or "_"',
      );
    }
    stages[stageName] = checkStage(own(stagesValue, stageName), path, options);
  }
  checkReferences(stages as Record<string, { input: { stage?: string } }>, names);
  return Object.freeze({
    ...(options.functions ? {} : { version: PIPELINE_DESCRIPTION_VERSION }),
    name,
    stages: Object.freeze(stages),
  });
}

function checkStage(value: unknown, path: string, options: { readonly functions: boolean }): unknown {
  const stage = record(value, path);
  const kind = own(stage, 'kind');
  if (kind === 'window') {
    fields(stage, path, ['kind', 'input', 'partitions', 'outputPrefix', 'codeVersion'], ['fileName']);
    const input = record(own(stage, 'input'), `${path}.input`);
    if (!Object.hasOwn(input, 'stage')) {
      throw new PipelineDescriptionError(
        `${path}.input`,
        'a window stage reads another stage\'s outputs: give { "stage": NAME }',
      );
    }
    const fileName = own(stage, 'fileName');
    if (fileName !== undefined && (text(fileName, `${path}.fileName`).includes('/') || fileName === '_manifest')) {
      throw new PipelineDescriptionError(
        `${path}.fileName`,
        `is the last segment of each window's output key: no "/", not "_manifest" (got ${show(fileName)})`,
      );
    }
    return Object.freeze({
      kind,
      input: checkInput(input, `${path}.input`),
      partitions: checkPartitions(own(stage, 'partitions'), `${path}.partitions`),
      outputPrefix: prefix(own(stage, 'outputPrefix'), `${path}.outputPrefix`),
      codeVersion: text(own(stage, 'codeVersion'), `${path}.codeVersion`),
      ...(fileName !== undefined ? { fileName } : {}),
    });
  }
  if (kind !== 'object') {
    throw new PipelineDescriptionError(`${path}.kind`, `must be "object" or "window" (got ${show(kind)})`);
  }
  fields(stage, path, ['kind', 'input', 'outputKey'], ['sideOutputs', 'partitions', 'codeVersion']);
  const input = checkInput(record(own(stage, 'input'), `${path}.input`), `${path}.input`);
  const outputKey = checkKeyRule(own(stage, 'outputKey'), `${path}.outputKey`, options);
  if ('prefix' in input) checkStrip(outputKey, input.prefix, `${path}.outputKey`);
  const result: Record<string, unknown> = { kind, input, outputKey };
  const sides = own(stage, 'sideOutputs');
  if (sides !== undefined) {
    const sideRecord = record(sides, `${path}.sideOutputs`);
    const checked: Record<string, unknown> = {};
    for (const sideName of Object.keys(sideRecord)) {
      if (!NAME.test(sideName)) {
        throw new PipelineDescriptionError(
          `${path}.sideOutputs[${JSON.stringify(sideName)}]`,
          'a side output name is a letter, then up to 63 letters, digits, "-" or "_"',
        );
      }
      const rule = checkKeyRule(own(sideRecord, sideName), `${path}.sideOutputs.${sideName}`, options);
      if ('prefix' in input) checkStrip(rule, input.prefix, `${path}.sideOutputs.${sideName}`);
      checked[sideName] = rule;
    }
    result.sideOutputs = Object.freeze(checked);
  }
  const partitions = own(stage, 'partitions');
  if (partitions !== undefined) result.partitions = checkPartitions(partitions, `${path}.partitions`);
  const codeVersion = own(stage, 'codeVersion');
  if (codeVersion !== undefined) result.codeVersion = text(codeVersion, `${path}.codeVersion`);
  return Object.freeze(result);
}

function checkInput(input: Record<string, unknown>, path: string): { prefix: string } | { stage: string } {
  const hasPrefix = Object.hasOwn(input, 'prefix');
  const hasStage = Object.hasOwn(input, 'stage');
  if (hasPrefix === hasStage) {
    throw new PipelineDescriptionError(
      path,
      'give either { "prefix": P } (a prefix of the input bucket) or { "stage": NAME } (another stage\'s outputs)',
    );
  }
  if (hasStage) {
    fields(input, path, ['stage'], []);
    return Object.freeze({ stage: text(own(input, 'stage'), `${path}.stage`) });
  }
  fields(input, path, ['prefix'], []);
  const p = own(input, 'prefix');
  if (typeof p !== 'string') throw new PipelineDescriptionError(`${path}.prefix`, `must be a string (got ${show(p)})`);
  return Object.freeze({ prefix: p });
}

/**
 * One output key rule, checked as a stage's is (declarative parameters, or a custom pair of
 * functions when `functions`): what `defineWorker({ outputKey: { prefix, ... } })` accepts.
 *
 * @example
 * const rule = checkKeyRule({ prefix: 'upper/', stripPrefix: 'incoming/' }, 'outputKey', { functions: true });
 */
export function checkKeyRule(
  value: unknown,
  path: string,
  options: { readonly functions: boolean },
): OutputKeyRule | DescribedKeyRule {
  const rule = record(value, path);
  if (Object.hasOwn(rule, 'outputKeyOf') || Object.hasOwn(rule, 'inputKeyOf')) {
    if (!options.functions) {
      throw new PipelineDescriptionError(
        path,
        'a description is data: a custom key rule is published as { "custom": true }, its functions stay in code',
      );
    }
    fields(rule, path, ['outputKeyOf', 'inputKeyOf'], ['prefix']);
    for (const f of ['outputKeyOf', 'inputKeyOf']) {
      if (typeof own(rule, f) !== 'function') {
        throw new PipelineDescriptionError(
          `${path}.${f}`,
          'a custom key rule is a pair of functions, outputKeyOf(source) and its inverse inputKeyOf(outputKey)',
        );
      }
    }
    const p = own(rule, 'prefix');
    // The functions are the user's object: keep it (and its `this`), only the prefix is checked.
    if (p !== undefined) prefix(p, `${path}.prefix`);
    return rule as unknown as OutputKeyRule;
  }
  if (Object.hasOwn(rule, 'custom')) {
    fields(rule, path, ['custom'], ['prefix']);
    if (own(rule, 'custom') !== true) {
      throw new PipelineDescriptionError(`${path}.custom`, `must be true (got ${show(own(rule, 'custom'))})`);
    }
    const p = own(rule, 'prefix');
    return Object.freeze(
      p === undefined ? { custom: true as const } : { custom: true as const, prefix: prefix(p, `${path}.prefix`) },
    );
  }
  fields(rule, path, ['prefix'], ['stripPrefix', 'suffix']);
  const result: { prefix: string; stripPrefix?: string; suffix?: string } = {
    prefix: prefix(own(rule, 'prefix'), `${path}.prefix`),
  };
  for (const f of ['stripPrefix', 'suffix'] as const) {
    const v = own(rule, f);
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new PipelineDescriptionError(`${path}.${f}`, `must be a string (got ${show(v)})`);
    if (f === 'suffix' && v.includes('/')) {
      throw new PipelineDescriptionError(
        `${path}.suffix`,
        `is appended to the key's last segment: no "/" (got ${show(v)})`,
      );
    }
    if (v !== '') result[f] = v;
  }
  return Object.freeze(result);
}

/**
 * A declarative rule's stripPrefix must start every input key of the stage, or some keys are
 * stripped and others not, and the tools could not invert the rule from a listing.
 */
function checkStrip(rule: OutputKeyRule | DescribedKeyRule, inputPrefix: string, path: string): void {
  const strip = (rule as { stripPrefix?: unknown }).stripPrefix;
  if (typeof strip === 'string' && !inputPrefix.startsWith(strip)) {
    throw new PipelineDescriptionError(
      `${path}.stripPrefix`,
      `${show(strip)} does not start the stage's input prefix ${show(inputPrefix)}: some input keys would keep it and ` +
        'others lose it. Use the input prefix or a start of it',
    );
  }
}

function checkPartitions(value: unknown, path: string): unknown {
  const spec = record(value, path);
  const kind = own(spec, 'kind');
  if (kind === 'none') {
    fields(spec, path, ['kind'], []);
    return Object.freeze({ kind });
  }
  if (kind === 'static') {
    fields(spec, path, ['kind', 'keys'], []);
    const keys = own(spec, 'keys');
    if (!Array.isArray(keys) || keys.length === 0) {
      throw new PipelineDescriptionError(`${path}.keys`, `must list at least one partition name (got ${show(keys)})`);
    }
    const seen = new Set<string>();
    keys.forEach((k: unknown, i: number) => {
      if (typeof k !== 'string' || k === '' || k.includes('/')) {
        throw new PipelineDescriptionError(
          `${path}.keys[${i}]`,
          `must be a non-empty path segment, no "/" (got ${show(k)})`,
        );
      }
      if (seen.has(k)) throw new PipelineDescriptionError(`${path}.keys[${i}]`, `"${k}" is listed twice`);
      seen.add(k);
    });
    return Object.freeze({ kind, keys: Object.freeze([...keys]) });
  }
  if (kind !== 'time') {
    throw new PipelineDescriptionError(`${path}.kind`, `must be "time", "static" or "none" (got ${show(kind)})`);
  }
  fields(spec, path, ['kind', 'grain', 'template'], []);
  const grain = own(spec, 'grain');
  const grains = Object.values(TimeGrain) as string[];
  if (typeof grain !== 'string' || !grains.includes(grain)) {
    throw new PipelineDescriptionError(
      `${path}.grain`,
      `must be one of ${grains.join(', ')} (got ${show(grain)})${typeof grain === 'string' ? didYouMean(grain, grains) : ''}`,
    );
  }
  const template = text(own(spec, 'template'), `${path}.template`);
  const used = [...template.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1] as string);
  const unknown = used.find((f) => !(TEMPLATE_FIELDS as readonly string[]).includes(f));
  if (unknown !== undefined) {
    throw new PipelineDescriptionError(
      `${path}.template`,
      `has no field {${unknown}}: the fields are ${TEMPLATE_FIELDS.map((f) => `{${f}}`).join(', ')}`,
    );
  }
  const missing = GRAIN_FIELDS[grain as TimeGrain].filter((f) => !used.includes(f));
  if (missing.length > 0) {
    throw new PipelineDescriptionError(
      `${path}.template`,
      `a ${grain} window needs ${missing.map((f) => `{${f}}`).join(', ')} in the template (got ${show(template)})`,
    );
  }
  return Object.freeze({ kind, grain, template });
}

/** Every `input.stage` names a stage, and no stage reads its own outputs through others. */
function checkReferences(stages: Record<string, { input: { stage?: string } }>, names: readonly string[]): void {
  for (const name of names) {
    const ref = stages[name]?.input.stage;
    if (ref !== undefined && !Object.hasOwn(stages, ref)) {
      throw new PipelineDescriptionError(
        `stages.${name}.input.stage`,
        `no stage named "${ref}"${didYouMean(ref, names)}`,
      );
    }
  }
  for (const name of names) {
    const path = [name];
    let next = stages[name]?.input.stage;
    while (next !== undefined) {
      if (next === name) {
        throw new PipelineDescriptionError(
          `stages.${name}.input.stage`,
          `the stages ${[...path, name].join(' -> ')} read each other's outputs in a cycle: one of them must read ` +
            'a prefix of the input bucket',
        );
      }
      // A cycle that does not pass through `name` is reported from one of its own stages.
      if (path.includes(next)) break;
      path.push(next);
      next = stages[next]?.input.stage;
    }
  }
}

/** The object at `path`: a plain JSON object (not null, not an array). */
function record(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PipelineDescriptionError(path, `must be an object (got ${show(value)})`);
  }
  return value as Record<string, unknown>;
}

/** An own property (never one inherited from Object.prototype, such as `constructor`). */
function own(value: Record<string, unknown>, field: string): unknown {
  return Object.hasOwn(value, field) ? value[field] : undefined;
}

/** Refuses unknown fields (naming the nearest known one) and missing required ones. */
function fields(
  value: Record<string, unknown>,
  path: string,
  required: readonly string[],
  optional: readonly string[],
): void {
  const known = [...required, ...optional];
  for (const field of Object.keys(value)) {
    if (!known.includes(field)) {
      throw new PipelineDescriptionError(
        join(path, field),
        `unknown field${didYouMean(field, known)} (known here: ${known.join(', ')})`,
      );
    }
  }
  for (const field of required) {
    if (own(value, field) === undefined) throw new PipelineDescriptionError(join(path, field), 'is missing');
  }
}

function join(path: string, field: string): string {
  const segment = NAME.test(field) ? field : `[${JSON.stringify(field)}]`;
  return path === '' ? segment : segment.startsWith('[') ? `${path}${segment}` : `${path}.${segment}`;
}

function text(value: unknown, path: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new PipelineDescriptionError(path, `must be a non-empty string (got ${show(value)})`);
  }
  return value;
}

/** An output prefix: non-empty and ending with `/`, as the worker's outputPrefixes (its role's grant). */
function prefix(value: unknown, path: string): string {
  if (typeof value !== 'string' || !value.endsWith('/') || value === '/') {
    throw new PipelineDescriptionError(
      path,
      `must be a key prefix ending with "/", e.g. "upper/" (got ${show(value)})`,
    );
  }
  return value;
}

/** A value for a message, whatever it is (never throws: no toString of a foreign object is called). */
function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  return `${typeof value} ${String(value)}`;
}
