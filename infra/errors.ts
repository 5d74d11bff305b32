import { RerunError } from '../src/errors.js';

/**
 * The stack was given settings that AWS would refuse or that break a safety rule (for example a queue
 * visibility timeout below 6 x the function timeout). Thrown at synth time; retrying cannot help.
 *
 * @example
 * throw new StackConfigurationInvalidError(['worker "normalize": maxReceiveCount must be ...']);
 */
export class StackConfigurationInvalidError extends RerunError {
  readonly violations: readonly string[];
  constructor(violations: readonly string[]) {
    super(`Invalid stack configuration; fix src/topology.ts or the construct props:\n- ${violations.join('\n- ')}`, {
      retryable: false,
    });
    this.name = 'StackConfigurationInvalidError';
    this.violations = violations;
  }
}
