/**
 * The change feed in AWS (docs/consistency.md, "The change feed"; docs/operating.md, "Events and history"):
 * the table's stream → the stream processor (functions/feed/handler.ts) → one event per
 * committed change on an EventBridge bus, and the allocation history in the table.
 *
 *   bus         a new bus `<stack>-changes`, or an existing one (-c eventBus=<name or ARN>)
 *   processor   a Lambda on the stream through an event source mapping that passes only
 *               feed items (inserts of `FEED#…`: one per committed change), one shard
 *               batch at a time in order (ParallelizationFactor 1: with one feed shard that
 *               is commit order), reporting the first failed record (ReportBatchItemFailures)
 *               and retrying it until it succeeds or the stream drops it (24 h): an event
 *               is never skipped silently. Batches split on error (bisect) to find a bad record.
 *   dead letters   what the stream drops unprocessed (its location in the stream) goes to an
 *               SQS queue; alarms: a message there, the iterator older than 5 minutes (the
 *               stack's Operations notify and show them with the others)
 *   example rule   allocation changes (Placement consumers and bare-metal allocations) to a
 *               CloudWatch log group kept a month: a starting point for billing or audit
 *
 * IAM: the processor reads the stream, writes the history's items only (HIST*, the
 * watermark META item), reads large descriptions' parts, and PutEvents on the bus.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FEED_PREFIX } from '../../functions/store/ddb/feed.js';
import { BerthFunction } from './function.js';
import { FEED_PROCESSOR_ACCESS, grantTableAccess } from './permissions.js';

export interface FeedOptions {
  /** an existing bus to publish to (name or ARN; -c eventBus=…); unset: a new one */
  eventBus?: string;
  /** how long closed allocation intervals are kept (days; -c historyRetentionDays=…) */
  historyRetentionDays?: number;
}

export class FeedConfigError extends Error {}

export function validateFeed(o: FeedOptions = {}): FeedOptions {
  if (o.eventBus !== undefined && !/^(arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:event-bus\/[\w.\-/]+|[\w.\-/]{1,256})$/.test(o.eventBus)) {
    throw new FeedConfigError(`-c eventBus=${o.eventBus}: the name or ARN of an EventBridge bus expected`);
  }
  const days = o.historyRetentionDays;
  if (days !== undefined && !(Number.isFinite(days) && days >= 1 && days <= 3650)) {
    throw new FeedConfigError(`-c historyRetentionDays=${days}: a number of days from 1 to 3650 expected`);
  }
  return o;
}

/** the thresholds of the feed's alarms, with their reasons */
export const FEED_THRESHOLDS = {
  /** the oldest record the processor has not done, in ms: a healthy processor is seconds behind */
  iteratorAgeMs: 5 * 60 * 1000,
  /** any record the stream dropped before it was done */
  deadLetters: 1,
};

export interface ChangeFeedProps {
  table: dynamodb.TableV2;
  options: FeedOptions;
  /** build its alarms (false with `-c alarms=off`, as for every other alarm) */
  alarms?: boolean;
}

export class ChangeFeed extends Construct {
  readonly bus: events.IEventBus;
  readonly processor: lambda.Function;
  readonly deadLetters: sqs.Queue;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly exampleRule: events.Rule;

  constructor(scope: Construct, id: string, props: ChangeFeedProps) {
    super(scope, id);
    const stackName = Stack.of(this).stackName;
    const o = props.options;
    if (!props.table.tableStreamArn) throw new Error('the change feed needs the table stream (berth-stack.ts: dynamoStream)');
    this.bus = o.eventBus
      ? o.eventBus.startsWith('arn:')
        ? events.EventBus.fromEventBusArn(this, 'Bus', o.eventBus)
        : events.EventBus.fromEventBusName(this, 'Bus', o.eventBus)
      : new events.EventBus(this, 'Bus', { eventBusName: `${stackName}-changes`, description: 'Berth: one event per committed change' });

    const processor = new BerthFunction(this, 'Processor', {
      entry: 'functions/feed/handler.ts',
      description: 'Change feed: the table stream to EventBridge and the allocation history',
      table: props.table,
      access: 'none',
      memoryMb: 512,
      timeout: Duration.seconds(60),
      environment: {
        EVENT_BUS_NAME: o.eventBus ?? this.bus.eventBusName,
        ...(o.historyRetentionDays !== undefined ? { HISTORY_RETENTION_DAYS: String(o.historyRetentionDays) } : {}),
      },
    });
    this.processor = processor.fn;
    grantTableAccess(processor.fn, props.table, FEED_PROCESSOR_ACCESS);
    this.bus.grantPutEventsTo(processor.fn);

    this.deadLetters = new sqs.Queue(this, 'DeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetters).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter destination of the change feed; an operator reads its messages (where in the stream), not a redrive.',
    });
    processor.fn.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(1),
        parallelizationFactor: 1,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        // retried until done or dropped by the stream (24 h): no event is skipped silently
        retryAttempts: -1,
        onFailure: new SqsDlq(this.deadLetters),
        filters: [
          lambda.FilterCriteria.filter({
            eventName: lambda.FilterRule.isEqual('INSERT'),
            dynamodb: { Keys: { pk: { S: lambda.FilterRule.beginsWith(FEED_PREFIX) } } },
          }),
        ],
      }),
    );

    const prefix = stackName;
    if (props.alarms !== false)
      this.alarms.push(
        new cloudwatch.Alarm(this, 'IteratorAge', {
          alarmName: `${prefix}-change-feed-iterator-age`,
          alarmDescription:
            'The change feed is more than 5 minutes behind the table: the processor fails a record again and again (its log group, ERROR lines), or is throttled. Events and the history wait; the stream keeps records 24 h.',
          metric: processor.fn.metric('IteratorAge', { period: Duration.minutes(5), statistic: 'Maximum' }),
          threshold: FEED_THRESHOLDS.iteratorAgeMs,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
        new cloudwatch.Alarm(this, 'DeadLetterAlarm', {
          alarmName: `${prefix}-change-feed-dead-letters`,
          alarmDescription:
            'The stream dropped records the change feed had not done (they were 24 h old): their events were not published and the history misses their changes. The message says where in the stream.',
          metric: this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
          threshold: FEED_THRESHOLDS.deadLetters,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );

    // the rules example (docs/operating.md, "Events and history"): every allocation change, kept a month
    const log = new logs.LogGroup(this, 'AllocationChanges', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.exampleRule = new events.Rule(this, 'AllocationChangesRule', {
      eventBus: this.bus,
      description: 'Example: every change of allocations (Placement consumers, bare-metal allocations) to a log group',
      eventPattern: {
        source: ['berth.placement', 'berth.baremetal'],
        detailType: [
          'consumer.allocations.update',
          'baremetal.allocation.create.end',
          'baremetal.allocation.update.end',
          'baremetal.allocation.delete.end',
        ],
      },
      targets: [new targets.CloudWatchLogGroup(log)],
    });
  }
}
