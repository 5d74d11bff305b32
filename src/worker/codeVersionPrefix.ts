/**
 * The prefix the tools (`rerun status`, `rerun reprocess`) list the code-version markers under, in a
 * worker's output bucket (src/worker/codeVersionMarker.ts). `RerunPipeline` sets it as
 * CODE_VERSION_PREFIX and grants the worker a conditional write there; `rerun dev` sets it too. A
 * module of its own, so that the construct reads it without loading the worker's runtime.
 *
 * @example
 * codeVersionMarkerKey(DEFAULT_CODE_VERSION_PREFIX, 'upper', 'upper@1'); // 'code-versions/upper/upper%401'
 */
export const DEFAULT_CODE_VERSION_PREFIX = 'code-versions/';
