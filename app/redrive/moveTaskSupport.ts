/**
 * Whether an error from StartMessageMoveTask or ListMessageMoveTasks means "this endpoint cannot do
 * it" (so the receive -> send -> delete fallback should run), decided from the answer, never from the
 * endpoint's name: a 501, an unknown or unsupported operation, or a 500 whose body is not an SQS
 * answer at all (moto 5.2 answers these operations with an HTML 500 page). Access denied also falls
 * back: the fallback needs only ReceiveMessage, SendMessage and DeleteMessage.
 *
 * @example
 * if (isMoveTaskUnsupported(error)) return resendOneByOne();
 */
export function isMoveTaskUnsupported(error: unknown): boolean {
  const e = error as { name?: string; Code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  const name = e?.Code ?? e?.name ?? '';
  if (status === 501) return true;
  if (
    [
      'NotImplemented',
      'UnknownOperationException',
      'InvalidAction',
      'UnsupportedOperation',
      'AWS.SimpleQueueService.UnsupportedOperation',
      'AccessDenied',
      'AccessDeniedException',
    ].includes(name)
  ) {
    return true;
  }
  // A 500 that the SDK could not even parse as an SQS error: the operation is not implemented there.
  return status === 500 && (name === 'SyntaxError' || /not (yet )?implemented/i.test(e?.message ?? ''));
}
