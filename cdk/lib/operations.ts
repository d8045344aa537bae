/**
 * Operating Berth in AWS: a CloudWatch alarm for each condition that needs a person,
 * optionally notifying an SNS topic (a new, KMS-encrypted one with e-mail subscriptions,
 * or an existing one), and on request a CloudWatch dashboard (`-c dashboard=true`,
 * cdk/lib/operations-dashboard.ts) and DynamoDB Contributor Insights on the table and its
 * indexes (`-c insights=true`, which brings the dashboard too); the settings are checked in
 * cdk/lib/operations-options.ts. docs/operating.md ("Operating in AWS") says what each alarm means and
 * what to do; test/unit/cdk/operations.test.ts holds the template to it.
 *
 * Every threshold is here, with its reason. Metrics that AWS only emits when something
 * happens (errors, throttles, 5xx) treat a missing period as "nothing happened"; the one
 * alarm on something that must keep happening (maintenance runs) treats it as breaching.
 */
import { Annotations, Duration, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { BerthFunction } from './function.js';
import { operationsDashboard } from './operations-dashboard.js';
import { NO_ALARM_DESTINATION_WARNING, type OperationsOptions } from './operations-options.js';

/** What the alarms watch. */
export interface OperationsProps {
  options: OperationsOptions;
  table: dynamodb.TableV2;
  /** the table's global secondary indexes (each has its own throttling) */
  indexNames: string[];
  apis: Record<string, apigw.HttpApi>;
  machines: Record<string, sfn.StateMachine>;
  maintenance: lambda.Function;
  maintenanceFailures: sqs.IQueue;
  /** alarms other constructs made (the change feed's): notified and shown like these */
  alarms?: cloudwatch.Alarm[];
}

/**
 * The DynamoDB operations Berth's functions and operators' CLI call (store/, ddb/):
 * DynamoDB reports throttled requests and system errors per operation. At most 8, so an
 * alarm summing them and the two throttle-event metrics stays within CloudWatch's 10
 * metrics per alarm.
 */
export const TABLE_OPERATIONS = ['GetItem', 'BatchGetItem', 'Query', 'Scan', 'PutItem', 'UpdateItem', 'BatchWriteItem', 'TransactWriteItems'];

const FIVE_MINUTES = Duration.minutes(5);

/** the thresholds, each with its reason (docs/operating.md's alarm list repeats them for the operator) */
export const THRESHOLDS = {
  /**
   * any function error in 5 minutes: the APIs answer their own failures as 5xx, so a
   * Lambda error is a crash, a timeout, an out-of-memory or a failed init
   */
  functionErrors: 1,
  /** any throttle in 5 minutes: only maintenance reserves concurrency, so the account's limit was reached */
  functionThrottles: 1,
  /**
   * any throttle event in 5 minutes: on an on-demand table that is a hot partition (or a
   * table/account maximum), beyond what Berth's key design allows (docs/items.md, "The partition map")
   */
  tableThrottles: 1,
  /** 5 internal errors in 5 minutes: DynamoDB returns the odd one (the SDK retries it); a run of them is an outage */
  tableSystemErrors: 5,
  /** any failed, timed-out or aborted execution: the machines catch expected failures and end in Succeed */
  executions: 1,
  /** 5 answers 5xx in 5 minutes: each is a request Berth failed; a few in a row is more than a blip */
  api5xx: 5,
  /** fewer than 1 maintenance invocation in each of 2 periods of 5 minutes (it runs every minute) */
  maintenanceRuns: 1,
  /** any message: a maintenance run failed or could not start */
  maintenanceFailures: 1,
};

export class Operations extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly topic?: sns.ITopic;
  readonly dashboard?: cloudwatch.Dashboard;
  private readonly actions: cloudwatch.IAlarmAction[] = [];
  private readonly prefix: string;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: OperationsProps,
  ) {
    super(scope, id);
    const stack = Stack.of(this);
    this.prefix = stack.stackName;
    const { options } = props;

    // ---- where alarms go
    if (options.alarms && !options.alarmEmails.length && !options.alarmTopicArn) {
      Annotations.of(stack).addWarningV2('@berth/operations:alarms-notify-nobody', NO_ALARM_DESTINATION_WARNING);
    }
    if (options.alarmEmails.length) {
      // SNS encrypted with a key of our own: CloudWatch cannot publish to a topic encrypted
      // with the AWS managed key, whose policy cannot name it
      const key = new kms.Key(this, 'AlarmTopicKey', {
        description: `${this.prefix}: alarm notifications`,
        enableKeyRotation: true,
      });
      key.addToResourcePolicy(
        new iam.PolicyStatement({
          principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          resources: ['*'],
          conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
        }),
      );
      const topic = new sns.Topic(this, 'AlarmTopic', { displayName: `${this.prefix} alarms`, masterKey: key, enforceSSL: true });
      for (const e of options.alarmEmails) topic.addSubscription(new subscriptions.EmailSubscription(e));
      this.topic = topic;
      this.actions.push(new actions.SnsAction(topic));
    }
    if (options.alarmTopicArn) {
      const existing = sns.Topic.fromTopicArn(this, 'ExistingAlarmTopic', options.alarmTopicArn);
      this.topic ??= existing;
      this.actions.push(new actions.SnsAction(existing));
    }

    // ---- every function: errors and throttles
    const functions = stack.node
      .findAll()
      .filter((c): c is BerthFunction => c instanceof BerthFunction)
      .map((f) => ({ name: f.node.path.slice(stack.node.path.length + 1).replace(/\//g, '-'), fn: f.fn }));
    for (const f of functions) {
      const name = f.name;
      this.alarm(`${name}-errors`, f.fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }), {
        threshold: THRESHOLDS.functionErrors,
        description: `${name} failed an invocation (crash, timeout, out of memory or failed init): read its log group's ERROR lines and REPORT lines.`,
      });
      this.alarm(`${name}-throttles`, f.fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }), {
        threshold: THRESHOLDS.functionThrottles,
        description: `${name} was throttled: the account's (or its reserved) concurrency ran out. Check ConcurrentExecutions; raise the quota or reserve concurrency.`,
      });
    }

    // ---- the table and its indexes
    const table = props.table;
    const dynamo = (metricName: string, dimensionsMap: Record<string, string>) =>
      new cloudwatch.Metric({ namespace: 'AWS/DynamoDB', metricName, dimensionsMap, period: FIVE_MINUTES, statistic: 'Sum' });
    const sum = (metrics: Record<string, cloudwatch.IMetric>, label: string) =>
      // FILL: a metric DynamoDB did not emit in a period counts 0, so one quiet operation
      // cannot blank the sum (plain "a + b" is missing wherever either is)
      new cloudwatch.MathExpression({
        expression: `SUM([${Object.keys(metrics)
          .map((k) => `FILL(${k}, 0)`)
          .join(', ')}])`,
        usingMetrics: metrics,
        label,
        period: FIVE_MINUTES,
      });
    const perOperation = (metricName: string) =>
      Object.fromEntries(
        TABLE_OPERATIONS.map((op) => [op.charAt(0).toLowerCase() + op.slice(1), dynamo(metricName, { TableName: table.tableName, Operation: op })]),
      );
    this.alarm(
      'table-throttles',
      sum(
        {
          ...perOperation('ThrottledRequests'),
          // event-level: a batch or transaction with one throttled item counts here
          readEvents: dynamo('ReadThrottleEvents', { TableName: table.tableName }),
          writeEvents: dynamo('WriteThrottleEvents', { TableName: table.tableName }),
        },
        'throttled requests and events',
      ),
      {
        threshold: THRESHOLDS.tableThrottles,
        description:
          'DynamoDB throttled the table: a partition key over its 3,000 read / 1,000 write units per second, or the table/account maximum. Find the key with Contributor Insights (-c insights=true).',
      },
    );
    for (const index of props.indexNames) {
      const dims = { TableName: table.tableName, GlobalSecondaryIndexName: index };
      this.alarm(
        `${index}-throttles`,
        sum({ read: dynamo('ReadThrottleEvents', dims), write: dynamo('WriteThrottleEvents', dims) }, `${index} throttle events`),
        {
          threshold: THRESHOLDS.tableThrottles,
          description: `DynamoDB throttled index ${index} (reads, or the writes that keep it in step with the table, which then throttle the table's writes too).`,
        },
      );
    }
    this.alarm('table-system-errors', sum(perOperation('SystemErrors'), 'system errors'), {
      threshold: THRESHOLDS.tableSystemErrors,
      description: 'DynamoDB answered internal errors (HTTP 500) to the table or its indexes. Check the AWS Health Dashboard; the SDK retries them.',
    });

    // ---- the state machines
    for (const [machine, sm] of Object.entries(props.machines)) {
      for (const [what, metric] of [
        ['failed', sm.metricFailed({ period: FIVE_MINUTES, statistic: 'Sum' })],
        ['timed-out', sm.metricTimedOut({ period: FIVE_MINUTES, statistic: 'Sum' })],
        ['aborted', sm.metricAborted({ period: FIVE_MINUTES, statistic: 'Sum' })],
      ] as const) {
        this.alarm(`${machine}-executions-${what}`, metric, {
          threshold: THRESHOLDS.executions,
          description: `A ${machine} state-machine execution ${what.replace('-', ' ')}: look it up in the Step Functions console; orphan recovery resumes its allocation or node action.`,
        });
      }
    }

    // ---- the APIs
    for (const [name, api] of Object.entries(props.apis)) {
      this.alarm(`${name}-api-5xx`, api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }), {
        threshold: THRESHOLDS.api5xx,
        description: `The ${name} API answered 5xx: find the ERROR access lines (message "request", status >= 500) in the functions' logs, and integrationError in the API's access log.`,
      });
    }

    // ---- maintenance keeps running
    this.alarm('maintenance-not-running', props.maintenance.metricInvocations({ period: FIVE_MINUTES, statistic: 'Sum' }), {
      threshold: THRESHOLDS.maintenanceRuns,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 2,
      // no data is exactly what a schedule that stopped looks like
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      description:
        'The maintenance function was not invoked for 10 minutes: orphaned allocations stay stuck and no forest image is written. Check the schedule (enabled?) and the function (deployed, not throttled).',
    });
    this.alarm(
      'maintenance-failures',
      props.maintenanceFailures.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      {
        threshold: THRESHOLDS.maintenanceFailures,
        description:
          'A maintenance run failed or could not start: its event is in the failure queue (requestContext.condition, responsePayload). Read it, fix the cause, then purge the queue.',
      },
    );

    for (const alarm of props.alarms ?? []) {
      for (const a of this.actions) {
        alarm.addAlarmAction(a);
        alarm.addOkAction(a);
      }
      this.alarms.push(alarm);
    }

    if (options.dashboard) {
      this.dashboard = operationsDashboard(this, {
        ...props,
        prefix: this.prefix,
        alarms: this.alarms,
        functions,
        dynamo,
        insights: options.insights,
      });
    }
  }

  private alarm(
    id: string,
    metric: cloudwatch.IMetric,
    o: {
      threshold: number;
      description: string;
      comparisonOperator?: cloudwatch.ComparisonOperator;
      evaluationPeriods?: number;
      treatMissingData?: cloudwatch.TreatMissingData;
    },
  ): cloudwatch.Alarm | undefined {
    if (!this.props.options.alarms) return undefined;
    const alarm = new cloudwatch.Alarm(this, id, {
      alarmName: `${this.prefix}-${id}`,
      alarmDescription: o.description,
      metric,
      threshold: o.threshold,
      comparisonOperator: o.comparisonOperator ?? cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: o.evaluationPeriods ?? 1,
      treatMissingData: o.treatMissingData ?? cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    for (const a of this.actions) {
      alarm.addAlarmAction(a);
      alarm.addOkAction(a);
    }
    this.alarms.push(alarm);
    return alarm;
  }
}
