import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createAwsClients } from '../../../src/aws/clients.js';
import { httpStatus } from '../../../src/s3/errors.js';
import { parseS3Uri } from '../../../src/s3/s3Uri.js';
import { explainAwsError } from '../../status/pipelineResources.js';
import { checkedEndpoint } from '../checkedEndpoint.js';
import { type CliCommand, CliUsageError } from '../command.js';

/** `rerun cat s3://bucket/key`: an object's bytes on stdout, at the endpoint in use. */
export const command: CliCommand = {
  name: 'cat',
  summary: 'Print the object s3://bucket/key from the endpoint in use (AWS_ENDPOINT_URL or AWS).',
  usage: 'rerun cat s3://BUCKET/KEY',
  allowPositionals: true,
  options: {},
  details: `Reads with GetObject against AWS_ENDPOINT_URL when set (the endpoint rerun dev prints in its READY
line), otherwise the default credential chain, and writes the bytes to stdout as they are.

Examples:
  rerun cat "s3://rerun-output/normalized/rerun-input/orders.csv.ndjson"
  rerun cat "s3://rerun-output/quarantine/rerun-input/orders.csv.ndjson"`,
  async run({ positionals }, io) {
    const target = positionals.length === 1 ? parseS3Uri(positionals[0] ?? '') : undefined;
    if (!target?.key) throw new CliUsageError('rerun cat takes one s3://bucket/key.');
    const endpoint = await checkedEndpoint(io.env);
    const { s3 } = createAwsClients({ endpoint, region: io.env.AWS_REGION || 'us-east-1' });
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
        where: endpoint ?? `AWS (${io.env.AWS_REGION || 'us-east-1'})`,
        hint: 'Check the bucket name, and AWS_ENDPOINT_URL (rerun dev prints it in its READY line).',
      });
    }
  },
};
