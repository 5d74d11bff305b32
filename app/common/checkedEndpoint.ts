import { checkEndpoint } from '../../src/aws/endpointPreflight.js';

/**
 * `AWS_ENDPOINT_URL`, read at the edge and checked before any AWS call (src/aws/endpointPreflight.ts):
 * a value without a scheme, a port where nothing listens, a server that never answers and one that
 * is not an AWS API each fail within a few seconds with an EndpointUnusableError that says so and
 * what to change, instead of `TypeError: Invalid URL`, a minute and a half of SDK retries, or
 * "bucket does not exist" from a web server. Undefined when the variable is unset (the default AWS
 * endpoints, which need no check).
 *
 * @example
 * const endpoint = await checkedEndpoint(io.env);
 */
export async function checkedEndpoint(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const endpoint = env.AWS_ENDPOINT_URL || undefined;
  if (endpoint !== undefined) await checkEndpoint(endpoint);
  return endpoint;
}
