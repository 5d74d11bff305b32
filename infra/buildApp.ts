import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { topology } from '../app/topology.js';
import { RerunStack, type RerunStackProps, type RerunStackWebhook } from './RerunStack.js';

/** Options of {@link buildRerunApp}. */
export interface BuildRerunAppOptions {
  /** Props of the CDK app (context, outdir). @default {} (the CDK CLI passes cdk.json's context itself) */
  readonly appProps?: AppProps;
  /** Props of the stack. @default {} */
  readonly stackProps?: RerunStackProps;
  /**
   * Stack name. The queues are named `${stackName}-${worker}-queue`, so the default stack's queue
   * names equal the local ones of `rerun dev`.
   * @default the `rerun:stackName` context value, else topology.appName ('rerun')
   */
  readonly stackName?: string;
  /**
   * Register cdk-nag's AwsSolutions rules as a CDK validation plugin: an unacknowledged finding
   * fails `cdk synth` (cdk-nag v3: acknowledgements are `Validations.of(construct).acknowledge`).
   * @default true
   */
  readonly nag?: boolean;
}

/**
 * Builds the CDK app with the rerun stack; `infra/app.ts` (run by `cdk synth/deploy`) and the stack
 * tests both use it, so the tests check what gets deployed.
 *
 * @example
 * const { app, stack } = buildRerunApp();
 * app.synth();
 */
export function buildRerunApp(options: BuildRerunAppOptions = {}): { app: App; stack: RerunStack } {
  const app = new App(options.appProps);
  const contextName: unknown = app.node.tryGetContext('rerun:stackName');
  const stackName = options.stackName ?? (typeof contextName === 'string' ? contextName : topology.appName);
  const webhook = webhookFromContext(app);
  // `-c rerun:reserveConcurrency=false` for an account whose concurrency limit refuses any reservation.
  const reserve: unknown = app.node.tryGetContext('rerun:reserveConcurrency');
  const stack = new RerunStack(app, stackName, {
    ...(webhook ? { webhook } : {}),
    ...(reserve === false || reserve === 'false' ? { reserveConcurrency: false } : {}),
    ...options.stackProps,
  });
  if (options.nag ?? true) Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}

/**
 * The webhook from the CDK context: `rerun:webhookSecret` (a secret's name or full ARN; with
 * `rerun:webhookSecretField` when the SecretString is JSON) or `rerun:webhookParameter` (an SSM
 * String parameter's name). Never the URL itself: CloudFormation resolves it at deploy time.
 *
 * @example
 * // npx cdk deploy -c rerun:webhookSecret=rerun/webhook
 */
function webhookFromContext(app: App): RerunStackWebhook | undefined {
  const secret: unknown = app.node.tryGetContext('rerun:webhookSecret');
  const field: unknown = app.node.tryGetContext('rerun:webhookSecretField');
  const parameter: unknown = app.node.tryGetContext('rerun:webhookParameter');
  if (typeof secret === 'string' && secret !== '') {
    return { secret, ...(typeof field === 'string' && field !== '' ? { jsonField: field } : {}) };
  }
  if (typeof parameter === 'string' && parameter !== '') return { parameterName: parameter };
  return undefined;
}
