import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AWS_CLIENT_OPTION_NAMES, type AwsClientOptions, awsClientConfig } from '../aws/clients.js';
import { checkOptions } from '../options/checkOptions.js';
import { LedgerConfigurationError } from './errors.js';

/**
 * The dedupe ledger's DynamoDB client, built with the same options (endpoint, region, retries,
 * timeouts, logger) as `createAwsClients`. It lives in `rerun-pipeline/ledger`, beside the ledger,
 * so that a worker without a ledger neither loads nor bundles `@aws-sdk/client-dynamodb` (an
 * optional peer dependency of the package).
 *
 * @example
 * const ledger = new DynamoDBLedger({
 *   client: createDynamoDBClient({ endpoint: process.env.AWS_ENDPOINT_URL }),
 *   tableName: 'rerun-ledger',
 * });
 */
export function createDynamoDBClient(options: AwsClientOptions = {}): DynamoDBClient {
  checkOptions('createDynamoDBClient', options, AWS_CLIENT_OPTION_NAMES, (m) => new LedgerConfigurationError(m));
  return new DynamoDBClient(awsClientConfig(options));
}
