import { GetObjectCommand, type GetObjectCommandOutput, type S3Client } from '@aws-sdk/client-s3';

/**
 * How many times a whole-object read sends its GET when the body is cut off mid-read: the SDK's
 * own default number of attempts for a request (src/aws/clients.ts).
 */
export const WHOLE_OBJECT_READ_ATTEMPTS = 3;

/** A small object read whole: its bytes and the response's headers. */
export interface WholeObject {
  readonly bytes: Buffer;
  readonly output: Omit<GetObjectCommandOutput, 'Body'>;
}

/**
 * GetObject of a small object, read into memory. The SDK retries a request whose answer never
 * arrived, but it hands the body over as a stream once the headers are in, so a connection dropped
 * mid-body ("aborted", ECONNRESET) reaches the reader, and no SDK retry covers it. Reading a
 * small object whole has no partial state to keep, so this sends the GET again, up to
 * {@link WHOLE_OBJECT_READ_ATTEMPTS} times in all, when the body fails after a 200. An error of the
 * request itself (a 404, a 403, a 412) is thrown at once, as the SDK gave it, for the caller to classify.
 *
 * @example
 * const { bytes, output } = await readWholeObject(client, { Bucket: 'out', Key: 'daily/_staging/ab12.json' });
 */
export async function readWholeObject(
  client: S3Client,
  input: { readonly Bucket: string; readonly Key: string; readonly IfMatch?: string },
): Promise<WholeObject> {
  for (let attempt = 1; ; attempt++) {
    const { Body, ...output } = await client.send(new GetObjectCommand({ ...input }));
    try {
      return { bytes: Buffer.from((await Body?.transformToByteArray()) ?? new Uint8Array()), output };
    } catch (error) {
      if (attempt >= WHOLE_OBJECT_READ_ATTEMPTS) throw error;
    }
  }
}
