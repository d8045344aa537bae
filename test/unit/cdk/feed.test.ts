/**
 * The change feed in the template (cdk/lib/feed.ts; docs/operating.md, "Events and history"): the
 * table's stream, the processor (its event source mapping, IAM, dead-letter queue, alarms),
 * the bus (new, or an existing one) and the example rule.
 */
import { App, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { BerthStack, type BerthStackProps } from '../../../cdk/lib/berth-stack.js';
import { FEED_THRESHOLDS, FeedConfigError, validateFeed } from '../../../cdk/lib/feed.js';
import { acknowledgeNagFindings } from '../../../cdk/lib/nag.js';
import { allows, FEED_PROCESSOR_ACCESS, MAINTENANCE_ACCESS, PLACEMENT_ACCESS } from '../../../cdk/lib/permissions.js';
import { FEED_PREFIX } from '../../../functions/store/ddb/feed.js';
import { HK } from '../../../functions/store/history/history.js';
import { STREAM_VIEW_TYPE } from '../../../functions/store/ddb/table.js';

const IDENTITY = { mode: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] } as const;

function build(props: Omit<BerthStackProps, 'identity'> = {}, nag = false): BerthStack {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new BerthStack(app, 'Feed', { identity: { ...IDENTITY, jwtAudience: [...IDENTITY.jwtAudience] }, ...props });
  if (nag) {
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    acknowledgeNagFindings(stack);
  }
  return stack;
}

type Resource = { Type: string; Properties: Record<string, any> };
const resources = (t: Template): Record<string, Resource> => t.toJSON().Resources;
const ofType = (t: Template, type: string) => Object.entries(resources(t)).filter(([, r]) => r.Type === type);

let stack: BerthStack;
let t: Template;
let processorId: string;

beforeAll(() => {
  stack = build({}, true);
  t = Template.fromStack(stack);
  processorId = ofType(t, 'AWS::Lambda::Function').find(([, r]) => /^Change feed/.test(r.Properties.Description ?? ''))![0];
}, 120_000);

describe('the table stream', () => {
  it('carries new images (the definition local/ uses too: functions/store/ddb/table.ts)', () => {
    t.hasResourceProperties('AWS::DynamoDB::GlobalTable', { StreamSpecification: { StreamViewType: STREAM_VIEW_TYPE } });
  });
});

describe('the processor', () => {
  it('reads the stream in order, feed items only, reporting the first failed record and retrying it', () => {
    const [, esm] = ofType(t, 'AWS::Lambda::EventSourceMapping').find(([, r]) => JSON.stringify(r.Properties.FunctionName).includes(processorId))!;
    expect(esm.Properties).toMatchObject({
      StartingPosition: 'TRIM_HORIZON',
      ParallelizationFactor: 1,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: -1,
    });
    const filter = JSON.parse(esm.Properties.FilterCriteria.Filters[0].Pattern);
    expect(filter).toEqual({ eventName: ['INSERT'], dynamodb: { Keys: { pk: { S: [{ prefix: FEED_PREFIX }] } } } });
    // what the stream drops unprocessed goes to the dead-letter queue
    const dlq = esm.Properties.DestinationConfig.OnFailure.Destination;
    expect(JSON.stringify(dlq)).toMatch(/ChangeFeedDeadLetters/);
  });

  it('publishes to the bus and may write the history only (IAM)', () => {
    const fn = resources(t)[processorId]!;
    expect(fn.Properties.Environment.Variables.EVENT_BUS_NAME).toBeDefined();
    const policies = ofType(t, 'AWS::IAM::Policy').filter(([, r]) =>
      JSON.stringify(r.Properties.Roles).includes(processorId.replace(/Fn[A-F0-9]+$/, '')),
    );
    const statements = policies.flatMap(([, r]) => r.Properties.PolicyDocument.Statement as Array<Record<string, any>>);
    expect(statements.some((s) => [s.Action].flat().includes('events:PutEvents'))).toBe(true);
    expect(statements.some((s) => [s.Action].flat().includes('dynamodb:GetRecords'))).toBe(true);
    const table = statements.filter((s) => [s.Action].flat().some((a: string) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(a)));
    const keys = table.flatMap((s) => s.Condition['ForAllValues:StringLike']['dynamodb:LeadingKeys'] as string[]);
    expect(new Set(keys)).toEqual(new Set(['HIST#*', 'HISTP#*', 'HISTR#*', 'HISTPROJECTS', 'META']));
    // the rules name the history's own keys (store/history/history.ts)
    for (const k of [HK.interval('c', 'x').pk, HK.byProject('p', 'x', 'c').pk, HK.byProvider('r', 'x', 'c').pk, HK.project('p').pk]) {
      expect(allows(FEED_PROCESSOR_ACCESS, 'dynamodb:PutItem', k), k).toBe(true);
    }
    expect(allows(FEED_PROCESSOR_ACCESS, 'dynamodb:UpdateItem', HK.watermark.pk)).toBe(true);
    expect(allows(FEED_PROCESSOR_ACCESS, 'dynamodb:PutItem', 'RP#x')).toBe(false);
  });

  it('every writer may record its change, and only that (a feed item, parts of a large one)', () => {
    for (const [family, rules] of Object.entries(PLACEMENT_ACCESS)) {
      const writes = rules.some((r) => r.actions.includes('dynamodb:PutItem') && !r.keys.some((k) => k.startsWith('FEED')));
      expect(allows(rules, 'dynamodb:PutItem', `${FEED_PREFIX}0`), family).toBe(writes);
    }
    expect(allows(MAINTENANCE_ACCESS, 'dynamodb:PutItem', `${FEED_PREFIX}0`)).toBe(true);
    expect(allows(MAINTENANCE_ACCESS, 'dynamodb:BatchWriteItem', 'FEEDPART#x')).toBe(true);
  });

  it('raises an alarm when it falls 5 minutes behind, and when the stream drops a record', () => {
    const alarms = ofType(t, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);
    const age = alarms.find((a) => a.MetricName === 'IteratorAge')!;
    expect(age).toMatchObject({ Threshold: FEED_THRESHOLDS.iteratorAgeMs, Statistic: 'Maximum', Namespace: 'AWS/Lambda' });
    expect(JSON.stringify(age.Dimensions)).toContain(processorId);
    const dead = alarms.find((a) => a.AlarmName === 'Feed-change-feed-dead-letters')!;
    expect(dead).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: FEED_THRESHOLDS.deadLetters });
  });

  it('has the errors and throttles alarms every function has', () => {
    const names = ofType(t, 'AWS::CloudWatch::Alarm').map(([, r]) => String(r.Properties.AlarmName));
    expect(names).toContain('Feed-ChangeFeed-Processor-errors');
    expect(names).toContain('Feed-ChangeFeed-Processor-throttles');
  });

  it('notifies the alarm topic when there is one', () => {
    const withTopic = Template.fromStack(build({ operations: { alarmEmails: ['ops@example.com'] } }));
    const age = ofType(withTopic, 'AWS::CloudWatch::Alarm').find(([, r]) => r.Properties.MetricName === 'IteratorAge')![1];
    expect(age.Properties.AlarmActions).toHaveLength(1);
    expect(age.Properties.OKActions).toHaveLength(1);
  });
});

describe('the bus and the example rule', () => {
  it('a new bus by default, named after the stack, and its name as an output', () => {
    t.hasResourceProperties('AWS::Events::EventBus', { Name: 'Feed-changes' });
    expect(JSON.stringify(t.toJSON().Outputs.EventBusName)).toContain('ChangeFeedBus');
  });

  it('routes allocation changes to a log group kept a month', () => {
    const [, rule] = ofType(t, 'AWS::Events::Rule')[0]!;
    expect(rule.Properties.EventPattern).toEqual({
      source: ['berth.placement', 'berth.baremetal'],
      'detail-type': [
        'consumer.allocations.update',
        'baremetal.allocation.create.end',
        'baremetal.allocation.update.end',
        'baremetal.allocation.delete.end',
      ],
    });
    expect(JSON.stringify(rule.Properties.Targets)).toMatch(/AllocationChanges/);
    t.hasResourceProperties('AWS::Logs::LogGroup', Match.objectLike({ RetentionInDays: 30 }));
  });

  it('-c eventBus=NAME or ARN publishes to an existing bus (none created)', () => {
    const byName = Template.fromStack(build({ feed: { eventBus: 'ops-bus' } }));
    expect(ofType(byName, 'AWS::Events::EventBus')).toHaveLength(0);
    const fn = ofType(byName, 'AWS::Lambda::Function').find(([, r]) => /^Change feed/.test(r.Properties.Description ?? ''))![1];
    expect(fn.Properties.Environment.Variables.EVENT_BUS_NAME).toBe('ops-bus');
    const arn = 'arn:aws:events:eu-west-1:123456789012:event-bus/shared';
    const byArn = Template.fromStack(build({ feed: { eventBus: arn } }));
    const policy = JSON.stringify(ofType(byArn, 'AWS::IAM::Policy').map(([, r]) => r.Properties.PolicyDocument));
    expect(policy).toContain(arn);
  });

  it('refuses a bus or a retention that cannot work, before anything is built', () => {
    expect(() => validateFeed({ eventBus: 'not a bus!' })).toThrow(FeedConfigError);
    expect(() => validateFeed({ historyRetentionDays: 0 })).toThrow(FeedConfigError);
    expect(validateFeed({ eventBus: 'b', historyRetentionDays: 90 })).toEqual({ eventBus: 'b', historyRetentionDays: 90 });
  });
});

describe('cdk-nag', () => {
  it('finds nothing unacknowledged in the feed', () => {
    const errors = Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*'));
    expect(errors.filter((e) => e.id.includes('ChangeFeed')).map((e) => `${e.id}: ${e.entry.data}`)).toEqual([]);
  });
});
