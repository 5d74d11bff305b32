import { RerunError } from '../errors.js';

/**
 * A pipeline description (definePipeline's argument, a `--pipeline` file, a stack's published
 * PipelineDescription output) does not parse: a field is missing, mistyped or unknown, a stage names
 * a stage that does not exist, or stages read each other's outputs in a cycle. The message starts
 * with the field's path (`stages.daily.input.stage: ...`) and says what to change. Thrown at synth,
 * at a worker's start and by every tool before it plans anything; not retryable.
 *
 * @example
 * throw new PipelineDescriptionError('stages.daily.input.stage', 'no stage named "uper"; did you mean "upper"?');
 */
export class PipelineDescriptionError extends RerunError {
  /** The path of the field at fault, e.g. `stages.daily.input.stage` (`''` for the whole description). */
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`${path === '' ? 'pipeline description' : path}: ${problem}`, { retryable: false });
    this.name = 'PipelineDescriptionError';
    this.path = path;
  }
}
