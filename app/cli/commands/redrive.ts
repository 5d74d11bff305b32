import { type CliCommand, integerOption } from '../../common/command.js';
import { stringOption, targetOptions, targetOrExit } from '../../common/pipelineTarget.js';
import { redriveConsole } from '../../redrive/redriveConsole.js';
import { redriveTarget } from '../../redrive/redriveTarget.js';
import { liveLine } from '../liveLine.js';

/** `rerun redrive`: show why dead-lettered messages failed, then move them back to their queue. */
export const command: CliCommand = {
  name: 'redrive',
  summary: 'Show the DLQ messages with the reason each last failed, then move them back to their source queue.',
  usage: 'rerun redrive [--queue normalize|summarize|NAME|URL] [--max N] [--rate N] [--dry-run] [--json] [options]',
  options: {
    queue: {
      type: 'string',
      valueName: 'NAME',
      description:
        "A worker (normalize, summarize), a stage of the stack's pipeline or of the running rerun dev's, or a DLQ name or URL (default: every DLQ)",
    },
    max: {
      type: 'string',
      valueName: 'N',
      description: 'Inspect at most N messages; below the DLQ size, move exactly those',
    },
    rate: { type: 'string', valueName: 'N', description: 'Move at most N messages per second (move task: up to 500)' },
    'dry-run': { type: 'boolean', description: 'Show the messages and reasons only; move nothing' },
    'include-doomed': {
      type: 'boolean',
      description: 'Move the messages marked [WOULD FAIL AGAIN] too (default: they stay in the DLQ)',
    },
    'source-queue-url': {
      type: 'string',
      valueName: 'URL',
      description: 'Where a DLQ given by name or URL sends back to (default: its only source queue)',
    },
    ...targetOptions,
  },
  details: `Each message is shown with the reason its worker gave up on it, read from the failure record the
worker wrote at failures/<queue>/<messageId>.json in the output bucket (a message without a record failed
by timeout or crash: see the function's logs). Fix the cause first, then run without --dry-run.

A message marked [WOULD FAIL AGAIN] (its failure is deterministic, e.g. a body that is not an S3 event)
stays in the DLQ unless --include-doomed is given: moved back, it would only spend its receives and return.

Moving uses SQS StartMessageMoveTask where the endpoint supports it (detected by trying), else receives,
sends to the source queue and deletes from the DLQ only after the send succeeded, rate-limited. With
--max below the DLQ's size, exactly the inspected messages are moved, one by one. Inspecting receives
the messages, so the DLQ's own receive count of each grows, even with --dry-run; nothing else changes.

On a stack of your own (--stack, with the pipeline description RerunPipeline and RerunWindowStage publish
with outputs: true), every stage's DLQ is found from the stack's outputs (DeadLetterQueueUrl for the object
stage its worker runs, <Stage>WindowDeadLetterQueueUrl for each window stage) and named by its stage;
--queue NAME takes a stage's name. A stage whose DLQ has no output is named in a note.

Exit: 0 done; 1 when a message could not be moved.

Examples:
  rerun redrive --dry-run
  rerun redrive --queue summarize --rate 10
  rerun redrive --stack rerun --queue normalize --dry-run
  rerun redrive --stack Uploads --queue daily`,
  async run({ values }, io) {
    const max = integerOption(values, 'max', { min: 1, max: 100_000 });
    const rate = integerOption(values, 'rate', { min: 1, max: 500 });
    const target = await targetOrExit(values, io, 'redrive');
    if (typeof target === 'number') return target;
    const request = {
      queue: stringOption(values, 'queue'),
      sourceQueueUrl: stringOption(values, 'source-queue-url'),
      max,
      rate,
      dryRun: values['dry-run'] === true,
      includeDoomed: values['include-doomed'] === true,
      json: values.json === true,
    };
    return redriveTarget(target, request, io, redriveConsole({ io, json: request.json, liveLine }));
  },
};
