import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type AwsClientOptions, type AwsClients, createAwsClients } from '../aws/clients.js';
import { createDynamoDBClient } from './createDynamoDBClient.js';

/** The clients of a whole pipeline: a worker's S3 and SQS, and the dedupe ledger's DynamoDB. */
export interface PipelineClients extends AwsClients {
  readonly dynamodb: DynamoDBClient;
}

/**
 * S3, SQS and DynamoDB clients with one endpoint and region, for the reference application, its
 * handlers, the tests and the bench, which all run the ledger. Not part of the package's entry
 * points: a worker of yours calls `createAwsClients`, and `createDynamoDBClient` only if it has a ledger.
 *
 * @example
 * const { s3, sqs, dynamodb } = createPipelineClients({ endpoint: process.env.AWS_ENDPOINT_URL });
 */
export function createPipelineClients(options: AwsClientOptions = {}): PipelineClients {
  return { ...createAwsClients(options), dynamodb: createDynamoDBClient(options) };
}
