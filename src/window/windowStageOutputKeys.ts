// No CDK import: the CLI reads these outputs without loading aws-cdk-lib.

/**
 * The stack output keys of a window stage (`outputs: true`), from its name: `daily-counts` gives
 * `DailyCountsWindowQueueUrl` and `DailyCountsWindowDeadLetterQueueUrl`.
 *
 * @example
 * windowStageOutputKeys('daily-counts').queueUrl; // 'DailyCountsWindowQueueUrl'
 */
export function windowStageOutputKeys(stage: string): { readonly queueUrl: string; readonly dlqUrl: string } {
  const pascal = stage
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part[0]?.toUpperCase() + part.slice(1))
    .join('');
  return { queueUrl: `${pascal}WindowQueueUrl`, dlqUrl: `${pascal}WindowDeadLetterQueueUrl` };
}
