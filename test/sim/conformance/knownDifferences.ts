import type { Difference } from './replay.js';

/**
 * A difference between the in-memory models and an emulator that the conformance replays find,
 * with the side that matches AWS's documentation. docs/EMULATORS.md lists each one; the
 * conformance tests fail on a difference that is not listed here, and on one listed here that no
 * replay shows any more (then the emulator changed, and so must the page).
 */
export interface KnownDifference {
  readonly id: string;
  readonly emulator: 'moto' | 'ministack';
  /** What the difference is, in a sentence. */
  readonly what: string;
  /** Which side matches AWS's documentation: the models, the emulator, or either (AWS allows both). */
  readonly aws: 'model' | 'emulator' | 'either';
  /** Where AWS says so. */
  readonly source: string;
  matches(d: Difference): boolean;
}

const is = (d: Difference, request: string, field: string) => d.request === request && d.field === field;
const absent = (d: Difference) => d.emulator === '(absent)';
const status = (d: Difference, model: RegExp, emulator: RegExp) =>
  d.field === 'status' && model.test(d.model) && emulator.test(d.emulator);

const CONTENT_TYPE: Omit<KnownDifference, 'emulator'> = {
  id: 'default-content-type',
  what: 'An object uploaded without a Content-Type is stored as application/octet-stream, not binary/octet-stream.',
  aws: 'model',
  source:
    'S3 stores binary/octet-stream when no type is sent (what HeadObject returns on AWS); neither type is used by rerun, which always sends one.',
  matches: (d) =>
    d.field === 'ContentType' && d.model === 'binary/octet-stream' && d.emulator === 'application/octet-stream',
};

/** What the replays show for each emulator, and what AWS documents. */
export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  { ...CONTENT_TYPE, emulator: 'moto' },
  {
    id: 'complete-ignores-if-match',
    emulator: 'moto',
    what: 'CompleteMultipartUpload ignores If-Match: it completes over an object with another ETag (answers 200, not 412).',
    aws: 'model',
    source:
      'S3 User Guide, "How to prevent object overwrites with conditional writes": If-Match on CompleteMultipartUpload, 412 Precondition Failed when the ETag differs.',
    matches: (d) => d.request === 'S3 CompleteMultipartUpload' && status(d, /^412 /, /^200$/),
  },
  {
    id: 'part-copy-ignores-copy-source-if-match',
    emulator: 'moto',
    what: 'UploadPartCopy ignores x-amz-copy-source-if-match: it copies a source with another ETag (200, not 412).',
    aws: 'model',
    source:
      'S3 API reference, UploadPartCopy: x-amz-copy-source-if-match, "Copies the object if its entity tag (ETag) matches the specified tag", else 412.',
    matches: (d) => d.request === 'S3 UploadPartCopy' && status(d, /^412 /, /^200$/),
  },
  {
    id: 'complete-answer-without-checksum',
    emulator: 'moto',
    what: "CompleteMultipartUpload's answer carries no ChecksumSHA256 (HeadObject does).",
    aws: 'model',
    source:
      'S3 API reference, CompleteMultipartUpload response: x-amz-checksum-sha256, present when the upload was created with SHA-256.',
    matches: (d) => is(d, 'S3 CompleteMultipartUpload', 'ChecksumSHA256') && absent(d),
  },
  {
    id: 'composite-checksum-without-part-count',
    emulator: 'moto',
    what: "A multipart object's composite SHA-256 comes back without its part count (`…=`, not `…=-2`).",
    aws: 'model',
    source:
      'S3 User Guide, "Checking object integrity" (multipart uploads): the composite checksum ends with -<number of parts>.',
    matches: (d) =>
      d.field === 'ChecksumSHA256' && d.model.replace(/-\d+$/, '') === d.emulator && d.model !== d.emulator,
  },
  {
    id: 'copy-part-result-without-checksum',
    emulator: 'moto',
    what: 'UploadPartCopy computes no checksum of the copied part: CopyPartResult has no ChecksumSHA256 (the completion takes the one the client sends).',
    aws: 'model',
    source:
      'S3 API reference, CopyPartResult: ChecksumSHA256, "present if the multipart upload request was created with the SHA256 checksum algorithm".',
    matches: (d) => is(d, 'S3 UploadPartCopy', 'CopyPartResult.ChecksumSHA256') && absent(d),
  },
  {
    id: 'delete-with-old-receipt-handle-deletes',
    emulator: 'moto',
    what: 'DeleteMessage with the receipt handle of an earlier receive deletes the message (later uses of the newer handle then fail).',
    aws: 'either',
    source:
      'SQS Developer Guide, "Amazon SQS visibility timeout": with an older receipt handle "the request succeeds, but the message might not be deleted".',
    matches: (d) => d.request === 'SQS ChangeMessageVisibility' && status(d, /^200$/, /^400 ReceiptHandleIsInvalid$/),
  },
  { ...CONTENT_TYPE, emulator: 'ministack' },
  {
    id: 'put-answer-without-checksum',
    emulator: 'ministack',
    what: "PutObject's answer carries no ChecksumSHA256 (HeadObject does).",
    aws: 'model',
    source: 'S3 API reference, PutObject response: x-amz-checksum-sha256.',
    matches: (d) => is(d, 'S3 PutObject', 'ChecksumSHA256') && absent(d),
  },
  {
    id: 'copy-part-result-without-checksum',
    emulator: 'ministack',
    what: "UploadPartCopy computes no checksum of the copied part, and the completion then refuses the part's SHA-256 the client computed (400 InvalidPart): a multipart output cannot be sealed on MiniStack.",
    aws: 'model',
    source:
      'S3 API reference, CopyPartResult: ChecksumSHA256, "present if the multipart upload request was created with the SHA256 checksum algorithm".',
    matches: (d) =>
      (is(d, 'S3 UploadPartCopy', 'CopyPartResult.ChecksumSHA256') && absent(d)) ||
      (d.request === 'S3 CompleteMultipartUpload' && status(d, /^200$/, /^400 InvalidPart$/)),
  },
  {
    id: 'complete-again-completes',
    emulator: 'ministack',
    what: 'CompleteMultipartUpload of an upload completed before completes it again (200), where the models answer 404 NoSuchUpload.',
    aws: 'either',
    source:
      'S3 API reference, CompleteMultipartUpload: NoSuchUpload when the upload "might have been aborted or completed"; rerun never completes an upload twice.',
    matches: (d) => d.request === 'S3 CompleteMultipartUpload' && status(d, /^404 NoSuchUpload$/, /^200$/),
  },
  {
    id: 'delete-with-old-receipt-handle-fails',
    emulator: 'ministack',
    what: 'DeleteMessage with the receipt handle of an earlier receive fails with 400 ReceiptHandleIsInvalid.',
    aws: 'model',
    source:
      'SQS Developer Guide, "Amazon SQS visibility timeout": with an older receipt handle "the request succeeds, but the message might not be deleted".',
    matches: (d) => d.request === 'SQS DeleteMessage' && status(d, /^200$/, /^400 ReceiptHandleIsInvalid$/),
  },
];
