import { GetObjectCommand } from '@aws-sdk/client-s3';
import { httpStatus } from '../../../src/s3/errors.js';
import { parseS3Uri } from '../../../src/s3/s3Uri.js';
import { type CliCommand, CliUsageError } from '../../common/command.js';
import { s3OfTarget, sessionChoiceOption } from '../../common/devSessionTarget.js';
import { explainAwsError } from '../../common/pipelineResources.js';

/** `rerun cat s3://bucket/key`: an object's bytes on stdout, at the endpoint in use. */
export const command: CliCommand = {
  name: 'cat',
  summary: 'Print the object s3://bucket/key from the endpoint in use (AWS_ENDPOINT_URL, a running rerun dev, or AWS).',
  usage: 'rerun cat s3://BUCKET/KEY [--app-name NAME]',
  allowPositionals: true,
  options: { ...sessionChoiceOption },
  details: `Reads with GetObject against AWS_ENDPOINT_URL when set; else, when no credentials are set in the
environment, against the running rerun dev (with its emulator's keys; it says which on stderr); otherwise AWS,
with the default credential chain. Writes the bytes to stdout as they are.

Examples:
  rerun cat "s3://rerun-output/normalized/rerun-input/orders.csv.ndjson"
  rerun cat "s3://rerun-output/quarantine/rerun-input/orders.csv.ndjson"`,
  async run({ values, positionals }, io) {
    const target = positionals.length === 1 ? parseS3Uri(positionals[0] ?? '') : undefined;
    if (!target?.key) throw new CliUsageError('rerun cat takes one s3://bucket/key.');
    const { s3, where } = await s3OfTarget(values, io, 'cat');
    try {
      const out = await s3.send(new GetObjectCommand({ Bucket: target.bucket, Key: target.key }));
      const text = await (out.Body?.transformToString('utf8') ?? Promise.resolve(''));
      // stdout takes lines: an object's final newline is the last line's.
      for (const line of text.replace(/\n$/, '').split('\n')) io.stdout(line);
      return 0;
    } catch (error) {
      if (httpStatus(error) === 404 && (error as { name?: string }).name !== 'NoSuchBucket') {
        io.stderr(
          `No object s3://${target.bucket}/${target.key}: rerun ls s3://${target.bucket}/ lists what is there.\n`,
        );
        return 1;
      }
      throw explainAwsError(error, {
        role: 'bucket',
        name: target.bucket,
        where,
        hint: 'Check the bucket name, and the endpoint: AWS_ENDPOINT_URL, or the running rerun dev named above.',
      });
    }
  },
};
