import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, type ITable, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { LedgerTopology } from '../topology/WorkerTopology.js';
import { acknowledgeCheckov, CheckovCheck } from './checkovAcknowledgements.js';
import { checkProps, LEDGER_TABLE_PROP_NAMES } from './checkProps.js';
import { grantKeyUseVia, KeyService } from './keyGrants.js';

/** Props of {@link LedgerTable}. */
export interface LedgerTableProps {
  /** Key and TTL attribute names: the same object the ledger adapter and `rerun dev` use. */
  readonly ledger: LedgerTopology;
  /**
   * What CloudFormation does with the table when it leaves the stack. The ledger is the only record
   * of which side effects already ran: losing it means repeating them, so it is kept.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Encrypt with this customer managed KMS key instead of the AWS managed `aws/dynamodb` key. The
   * ledger's users then need the key through DynamoDB: `grantLedgerAccess` grants it.
   * @default the AWS managed key (callers need no KMS permission)
   */
  readonly encryptionKey?: IKey;
}

/**
 * The side-effect dedupe ledger: one item per dedupe key, on-demand capacity (no throttling to
 * tune, pay per request), point-in-time recovery on, encrypted at rest with the AWS managed key
 * `aws/dynamodb` (its use shows in CloudTrail; callers need no KMS permission), a TTL attribute so old records age out. TTL deletion is lazy (typically within days), so the
 * ledger's conditions compare timestamps themselves and never rely on an item being gone.
 *
 * @example
 * const ledger = new LedgerTable(this, 'Ledger', { ledger: topology.ledger });
 * ledger.grantLedgerAccess(worker.function);
 */
export class LedgerTable extends Construct {
  /** The DynamoDB table. */
  readonly table: Table;

  constructor(scope: Construct, id: string, props: LedgerTableProps) {
    checkProps('LedgerTable', props, LEDGER_TABLE_PROP_NAMES);
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: props.ledger.partitionKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: props.ledger.ttlAttribute,
      ...(props.encryptionKey
        ? { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.encryptionKey }
        : { encryption: TableEncryption.AWS_MANAGED }),
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
    if (!props.encryptionKey) {
      acknowledgeCheckov(
        this.table,
        CheckovCheck.DYNAMODB_CMK,
        'Encrypted with the AWS managed aws/dynamodb key (use shows in CloudTrail, callers need no key grant); ' +
          'encryptionKey switches to a customer managed key where policy requires one.',
      );
    }
  }

  /**
   * Grants exactly what the ledger adapter sends: PutItem (claim) and UpdateItem (complete, fail,
   * release). No GetItem, DeleteItem, Scan, Query or batch access.
   *
   * @example
   * ledger.grantLedgerAccess(worker.function);
   */
  grantLedgerAccess(grantee: IGrantable): void {
    grantLedgerAccess(this.table, grantee);
  }
}

/**
 * Grants `grantee` what the ledger adapter sends to `table`: PutItem and UpdateItem, and the table's
 * customer managed key through DynamoDB when it has one (CDK's `Table.grant` leaves key grants to the
 * caller). The adapter never reads an item on its own: a lost claim's current item comes back on the
 * failed write itself (`ReturnValuesOnConditionCheckFailure: ALL_OLD`), which the write's own action
 * authorizes (IAM's `dynamodb:ReturnValues` condition key exists to limit exactly that), so GetItem
 * and DeleteItem, which it never sends, are not granted.
 *
 * @example
 * grantLedgerAccess(Table.fromTableAttributes(this, 'Ledger', { tableName, encryptionKey }), worker.function);
 */
export function grantLedgerAccess(table: ITable, grantee: IGrantable): void {
  table.grant(grantee, 'dynamodb:PutItem', 'dynamodb:UpdateItem');
  if (table.encryptionKey) grantKeyUseVia(grantee, table.encryptionKey, KeyService.DYNAMODB, { write: true });
}
