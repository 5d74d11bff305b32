/**
 * Environment variables are read at the edges only (handlers, CLI), through these helpers,
 * so a missing setting fails at start-up with its name instead of deep inside a run.
 */

/** Error thrown when a required environment variable is missing or empty. */
export class MissingEnvironmentVariableError extends Error {
  constructor(
    readonly variable: string,
    hint?: string,
  ) {
    super(`Environment variable ${variable} is required but not set.${hint ? ` ${hint}` : ''}`);
    this.name = 'MissingEnvironmentVariableError';
  }
}

/**
 * Returns the value of `name`, or throws {@link MissingEnvironmentVariableError}.
 *
 * @example
 * const outputBucket = requireEnv('OUTPUT_BUCKET');
 */
export function requireEnv(name: string, env: NodeJS.ProcessEnv = process.env, hint?: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new MissingEnvironmentVariableError(name, hint);
  return value;
}

/**
 * Returns the value of `name`, or `fallback` when it is unset or empty.
 *
 * @example
 * const concurrency = Number(optionalEnv('CONCURRENCY', '4'));
 */
export function optionalEnv(name: string, fallback: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}
