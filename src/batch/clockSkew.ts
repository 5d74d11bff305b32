/**
 * How far ahead of the function's clock an event's time may be and still be believed. The clocks of
 * S3 and Lambda differ by little, and AWS itself accepts 5 minutes of skew on a signed request
 * (Signature Version 4, "RequestTimeTooSkewed"); an eventTime further ahead is forged or mistimed,
 * and believing it would make a delete due for ever (removalLookAgain.ts) or a redelivery look
 * like a first one for ever (isFreshDelivery.ts).
 *
 * @example
 * if (Date.parse(eventTime) - now > CLOCK_SKEW_ALLOWANCE_MS) refuse('eventTime is in the future');
 */
export const CLOCK_SKEW_ALLOWANCE_MS = 300_000;
