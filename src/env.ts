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

/**
 * Returns `name` as an integer in `min..max`, or `undefined` when it is unset or empty; any other
 * value throws, naming the variable.
 *
 * @example
 * const maxReceiveCount = optionalIntegerEnv('MAX_RECEIVE_COUNT', { min: 1, max: 1000 });
 */
export function optionalIntegerEnv(
  name: string,
  range: { readonly min: number; readonly max: number },
  env: NodeJS.ProcessEnv = process.env,
): number | undefined {
  const value = optionalEnv(name, '', env);
  if (value === '') return undefined;
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < range.min || n > range.max) {
    throw new Error(`Environment variable ${name} must be an integer in ${range.min}..${range.max}, not "${value}".`);
  }
  return n;
}
