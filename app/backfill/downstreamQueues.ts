import { CliUsageError, type OptionValues } from '../common/command.js';

/**
 * `--downstream-queue STAGE=URL`, repeatable: the queues of downstream window stages without a
 * stack, by stage. A value that is not STAGE=URL is a usage error.
 *
 * @example
 * parseDownstreamQueues(['weekly=https://sqs.eu-west-1.amazonaws.com/1/weekly']); // Map { 'weekly' => 'https://...' }
 */
export function parseDownstreamQueues(given: OptionValues[string]): Map<string, string> {
  const map = new Map<string, string>();
  for (const item of (Array.isArray(given) ? given : typeof given === 'string' ? [given] : []).map(String)) {
    const at = item.indexOf('=');
    if (at <= 0 || at === item.length - 1)
      throw new CliUsageError(`--downstream-queue takes STAGE=URL (got "${item}").`);
    map.set(item.slice(0, at), item.slice(at + 1));
  }
  return map;
}
