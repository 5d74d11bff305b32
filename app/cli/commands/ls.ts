import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { parseS3Uri } from '../../../src/s3/s3Uri.js';
import { type CliCommand, CliUsageError } from '../../common/command.js';
import { s3OfTarget, sessionChoiceOption } from '../../common/devSessionTarget.js';
import { explainAwsError } from '../../common/pipelineResources.js';

/** `rerun ls s3://bucket/prefix`: the keys under a prefix, at the endpoint in use. */
export const command: CliCommand = {
  name: 'ls',
  summary:
    'List the objects under s3://bucket/prefix at the endpoint in use (AWS_ENDPOINT_URL, a running rerun dev, or AWS).',
  usage: 'rerun ls s3://BUCKET/[PREFIX] [--json] [--app-name NAME]',
  allowPositionals: true,
  options: {
    json: { type: 'boolean', description: 'One JSON line per object (key, size, lastModified)' },
    ...sessionChoiceOption,
  },
  details: `Lists with ListObjectsV2 against AWS_ENDPOINT_URL when set; else, when no credentials are set in the
environment, against the running rerun dev (with its emulator's keys; it says which on stderr); otherwise AWS,
with the default credential chain. One line per object: size, last modified, key.

Examples:
  rerun ls s3://rerun-output/normalized/
  rerun ls s3://rerun-output/quarantine/ --json`,
  async run({ values, positionals }, io) {
    const target = positionals.length === 1 ? parseS3Uri(positionals[0] ?? '') : undefined;
    if (!target) throw new CliUsageError('rerun ls takes one s3://bucket/prefix.');
    const { s3, where } = await s3OfTarget(values, io, 'ls');
    let token: string | undefined;
    let count = 0;
    try {
      do {
        const page = await s3.send(
          new ListObjectsV2Command({ Bucket: target.bucket, Prefix: target.key, ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) {
          count++;
          const when = o.LastModified?.toISOString() ?? '-';
          if (values.json) io.stdout(JSON.stringify({ key: o.Key, size: o.Size, lastModified: when }));
          else io.stdout(`${String(o.Size ?? 0).padStart(10)}  ${when}  ${o.Key}`);
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (error) {
      throw explainAwsError(error, {
        role: 'bucket',
        name: target.bucket,
        where,
        hint: 'Check the bucket name, and the endpoint: AWS_ENDPOINT_URL, or the running rerun dev named above.',
      });
    }
    if (count === 0) io.stderr(`No object under s3://${target.bucket}/${target.key}\n`);
    return 0;
  },
};
