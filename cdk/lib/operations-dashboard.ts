/**
 * The CloudWatch dashboard of Operations (`-c dashboard=true`, or `-c insights`): one page
 * of alarm states, then the APIs, functions, table, state machines and maintenance over
 * time (cdk/lib/operations.ts builds it after the alarms it shows).
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { InsightsMode } from './operations-options.js';
import type { OperationsProps } from './operations.js';

/** What the dashboard shows: what the alarms watch (OperationsProps), and what the alarms' construct built. */
export interface OperationsDashboardProps
  extends Pick<OperationsProps, 'table' | 'indexNames' | 'apis' | 'machines' | 'maintenance' | 'maintenanceFailures'> {
  /** the stack's name: the dashboard's name and title */
  prefix: string;
  /** the alarms built so far (their states head the page) */
  alarms: cloudwatch.Alarm[];
  /** every Berth function, named as its alarms name it */
  functions: Array<{ name: string; fn: lambda.Function }>;
  /** a DynamoDB metric of the table (or an index) */
  dynamo: (metricName: string, dimensionsMap: Record<string, string>) => cloudwatch.Metric;
  insights: InsightsMode | false;
}

/** one page: alarm states, then the APIs, functions, table, state machines and maintenance over time */
export function operationsDashboard(scope: Construct, props: OperationsDashboardProps): cloudwatch.Dashboard {
  const { prefix, alarms, functions, dynamo } = props;
  const minute = Duration.minutes(1);
  const graph = (title: string, left: cloudwatch.IMetric[], width = 8) => new cloudwatch.GraphWidget({ title, left, width, height: 6 });
  const perFunction = (f: (fn: lambda.Function) => cloudwatch.Metric) => functions.map(({ name, fn }) => f(fn).with({ label: name, period: minute }));
  const apis = Object.entries(props.apis);
  const machines = Object.entries(props.machines);
  const table = props.table.tableName;
  const d = new cloudwatch.Dashboard(scope, 'Dashboard', { dashboardName: `${prefix}-operations`, defaultInterval: Duration.hours(3) });
  d.addWidgets(
    new cloudwatch.TextWidget({
      markdown: `# ${prefix}\nAlarms, then traffic and errors per minute. docs/operating.md, "Operating in AWS", says what each alarm means and what to do.`,
      width: 24,
      height: 2,
    }),
  );
  if (alarms.length) d.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: alarms, width: 24, height: 6 }));
  d.addWidgets(
    graph(
      'API requests',
      apis.map(([n, api]) => api.metricCount({ period: minute, label: n })),
    ),
    graph(
      'API 4xx / 5xx',
      apis.flatMap(([n, api]) => [
        api.metricClientError({ period: minute, label: `${n} 4xx` }),
        api.metricServerError({ period: minute, label: `${n} 5xx` }),
      ]),
    ),
    graph(
      'API latency p99 (ms)',
      apis.map(([n, api]) => api.metricLatency({ period: minute, statistic: 'p99', label: n })),
    ),
  );
  d.addWidgets(
    graph(
      'Function errors',
      perFunction((fn) => fn.metricErrors({ statistic: 'Sum' })),
      6,
    ),
    graph(
      'Function throttles',
      perFunction((fn) => fn.metricThrottles({ statistic: 'Sum' })),
      6,
    ),
    graph(
      'Function duration p99 (ms)',
      perFunction((fn) => fn.metricDuration({ statistic: 'p99' })),
      6,
    ),
    graph(
      'Concurrent executions',
      perFunction((fn) => fn.metric('ConcurrentExecutions', { statistic: 'Maximum' })),
      6,
    ),
  );
  const indexed = (metricName: string, statistic = 'Sum') => [
    dynamo(metricName, { TableName: table }).with({ label: 'table', period: minute, statistic }),
    ...props.indexNames.map((i) =>
      dynamo(metricName, { TableName: table, GlobalSecondaryIndexName: i }).with({ label: i, period: minute, statistic }),
    ),
  ];
  d.addWidgets(
    graph('DynamoDB read units', indexed('ConsumedReadCapacityUnits'), 6),
    graph('DynamoDB write units', indexed('ConsumedWriteCapacityUnits'), 6),
    graph('DynamoDB throttle events', [...indexed('ReadThrottleEvents'), ...indexed('WriteThrottleEvents')], 6),
    graph(
      'DynamoDB latency (ms, avg)',
      ['GetItem', 'Query', 'BatchGetItem', 'TransactWriteItems'].map((op) =>
        dynamo('SuccessfulRequestLatency', { TableName: table, Operation: op }).with({ label: op, period: minute, statistic: 'Average' }),
      ),
      6,
    ),
  );
  d.addWidgets(
    graph(
      'Executions',
      machines.flatMap(([n, sm]) => [
        sm.metricStarted({ period: minute, label: `${n} started` }),
        sm.metricSucceeded({ period: minute, label: `${n} succeeded` }),
        sm.metricFailed({ period: minute, label: `${n} failed` }),
        sm.metricTimedOut({ period: minute, label: `${n} timed out` }),
        sm.metricAborted({ period: minute, label: `${n} aborted` }),
      ]),
    ),
    graph('Maintenance runs', [
      props.maintenance.metricInvocations({ period: minute, label: 'invocations' }),
      props.maintenance.metricErrors({ period: minute, label: 'errors' }),
      props.maintenanceFailures.metricApproximateNumberOfMessagesVisible({ period: minute, label: 'failed runs queued', statistic: 'Maximum' }),
    ]),
    graph('Maintenance duration (ms, max)', [props.maintenance.metricDuration({ period: minute, statistic: 'Maximum', label: 'duration' })]),
  );
  if (props.insights) {
    d.addWidgets(
      new cloudwatch.TextWidget({
        markdown:
          "## Contributor Insights\nThe table's and each index's " +
          (props.insights === 'throttled' ? 'most throttled' : 'most accessed and most throttled') +
          ' partition keys: DynamoDB console → the table → Monitor → Contributor Insights (CloudWatch → Contributor Insights lists the rules as DynamoDBContributorInsights-*).',
        width: 24,
        height: 2,
      }),
    );
  }
  return d;
}
