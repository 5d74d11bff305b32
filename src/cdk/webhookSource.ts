import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';

/**
 * Where the webhook URL comes from. It never sits in the template as text nor in a CloudFormation
 * parameter: CloudFormation resolves a dynamic reference (`{{resolve:secretsmanager:...}}` or
 * `{{resolve:ssm:...}}`) at deploy time into the function's `NOTIFY_URL` variable.
 *
 * Why a dynamic reference and not a read at run time: the worker then needs no Secrets Manager
 * or SSM client in its bundle (cold start and memory, issue 15), no extra IAM permission and no
 * network call (or VPC endpoint) on its hot path, and works with every worker that reads
 * NOTIFY_URL. What it costs: the resolved URL is stored in the function's configuration
 * (encrypted at rest by Lambda, readable with lambda:GetFunctionConfiguration), and a changed
 * secret reaches the function at the next deploy that updates it.
 * SSM: a `String` parameter (CloudFormation does not resolve `SecureString` into Lambda variables).
 */
export type RerunWebhookSource =
  | {
      /** The secret holding the URL. */
      readonly secret: ISecret;
      /**
       * The JSON key of the URL inside the secret.
       * @default the whole SecretString is the URL
       */
      readonly jsonField?: string;
    }
  | {
      /** Name of an SSM `String` parameter holding the URL (`/rerun/webhook-url`). */
      readonly parameterName: string;
    };

/** The webhook URL as a dynamic reference that CloudFormation resolves at deploy time (see {@link RerunWebhookSource}). */
export function webhookUrl(scope: Construct, webhook: RerunWebhookSource): string {
  if ('secret' in webhook) {
    const value = webhook.jsonField
      ? webhook.secret.secretValueFromJson(webhook.jsonField)
      : webhook.secret.secretValue;
    // A {{resolve:secretsmanager:...}} reference, resolved by CloudFormation at deploy time.
    return value.unsafeUnwrap();
  }
  return StringParameter.fromStringParameterAttributes(scope, 'WebhookUrlParameter', {
    parameterName: webhook.parameterName,
    forceDynamicReference: true,
  }).stringValue;
}
