/**
 * Names of the rerun stack's CloudFormation outputs: what `rerun --stack NAME` (app/common/stackTarget.ts),
 * the deployed tier and users read after a deploy. Part of the application: infra/RerunStack.ts writes
 * them and the CLI reads them. No CDK import, so the CLI reads them without loading aws-cdk-lib.
 *
 * @example
 * import { StackOutput } from './stackOutputs.js';
 * outputs[StackOutput.OUTPUT_BUCKET]; // the output bucket's generated name
 */
export const StackOutput = {
  INPUT_BUCKET: 'InputBucketName',
  OUTPUT_BUCKET: 'OutputBucketName',
  QUEUE_URL: 'QueueUrl',
  DLQ_URL: 'DeadLetterQueueUrl',
  LEDGER_TABLE: 'LedgerTableName',
  FUNCTION_NAME: 'NormalizeFunctionName',
  LOG_GROUP: 'NormalizeLogGroupName',
  SUMMARY_QUEUE_URL: 'SummaryQueueUrl',
  SUMMARY_DLQ_URL: 'SummaryDeadLetterQueueUrl',
  SUMMARIZE_FUNCTION_NAME: 'SummarizeFunctionName',
  SUMMARIZE_LOG_GROUP: 'SummarizeLogGroupName',
  SUMMARY_SCHEDULE_RULES: 'SummaryScheduleRuleNames',
  SCHEDULE_DLQ_URL: 'ScheduleDeadLetterQueueUrl',
  ALARM_TOPIC_ARN: 'AlarmTopicArn',
  /** The pipeline as data (src/pipeline/): the key rules the tools plan with. */
  PIPELINE_DESCRIPTION: 'PipelineDescription',
  /** The stage of the description the stack's worker runs (the default `--stage`). */
  PIPELINE_STAGE: 'PipelineStage',
} as const;
export type StackOutput = (typeof StackOutput)[keyof typeof StackOutput];
