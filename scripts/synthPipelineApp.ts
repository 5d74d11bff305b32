/**
 * Synthesizes a user's app with the README's RerunPipeline call (`outputPrefixes: ['upper/'],
 * outputs: true`) and the opt-in `batchOperations` into the folder given as the first argument,
 * for the template scanners (scripts/checkov.sh). The handlers are inline code instead of
 * `{ entry: 'worker.mjs' }`: the resources and policies are the same, and no bundling is needed.
 *
 * Usage: npx tsx scripts/synthPipelineApp.ts OUTDIR
 */
import { App, Stack } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { RerunPipeline } from '../src/cdk/RerunPipeline.js';

const outdir = process.argv[2];
if (!outdir) {
  console.error('usage: synthPipelineApp.ts OUTDIR');
  process.exit(2);
}
const app = new App({ outdir });
const stack = new Stack(app, 'Uploads');
new RerunPipeline(stack, 'Pipeline', {
  worker: {
    code: Code.fromInline('exports.handler = async () => ({ batchItemFailures: [] });'),
    handler: 'index.handler',
  },
  outputPrefixes: ['upper/'],
  outputs: true,
  // The opt-in Batch Operations handler and job role, so the scanners see them too.
  batchOperations: {
    handler: { code: Code.fromInline('exports.handler = async () => ({ results: [] });'), handler: 'index.handler' },
  },
});
app.synth();
