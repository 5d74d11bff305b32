/**
 * rerun's local tooling: the runner that reproduces Lambda's SQS trigger, the embedded emulator
 * (moto server, installed into a project-local virtual environment) and the webhook sink.
 *
 * @example
 * import { LocalRunner, startMotoServer } from 'rerun/local';
 */

export { startMotoServer } from './emulator/motoServer.js';
export { ensureQueue, ensureQueueAttributes, ProvisionAction } from './provision.js';
export { LocalRunner } from './runner/LocalRunner.js';
export { loadHandler } from './runner/loadHandler.js';
export { startWebhookSink, type WebhookSink } from './sink/WebhookSink.js';
