/**
 * Operating Berth in AWS (docs/operating.md, "Operating in AWS"): what the template says about
 * logging, bundles, alarms, the maintenance function, the dashboard and Contributor
 * Insights, by default and with each context flag.
 */
import { App, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BerthStack, type BerthStackProps } from '../../../cdk/lib/berth-stack.js';
import { BerthFunction, FunctionSettingsError, LAMBDA_RUNTIME, setFunctionSettings } from '../../../cdk/lib/function.js';
import { acknowledgeNagFindings } from '../../../cdk/lib/nag.js';
import { OperationsConfigError, parseInsights } from '../../../cdk/lib/operations-options.js';
import { SAM_CONTEXT } from '../../../cdk/lib/sam.js';
import { GSIS } from '../../../functions/store/ddb/table.js';

const IDENTITY = { mode: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] } as const;

/** a stack (bundling skipped: the template is under test), optionally under cdk-nag as `cdk synth` runs it */
function build(props: Omit<BerthStackProps, 'identity'> = {}, id = 'Ops', nag = false): BerthStack {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new BerthStack(app, id, { identity: { ...IDENTITY, jwtAudience: [...IDENTITY.jwtAudience] }, ...props });
  if (nag) {
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    acknowledgeNagFindings(stack);
  }
  return stack;
}
const synth = (props: Omit<BerthStackProps, 'identity'> = {}, id = 'Ops') => Template.fromStack(build(props, id));

type Resource = { Type: string; Properties: Record<string, any>; Metadata?: Record<string, any> };
const resources = (t: Template): Record<string, Resource> => t.toJSON().Resources;
/** Berth's own functions (BerthFunction), not CDK's custom-resource helpers */
const berthFunctions = (t: Template) =>
  Object.entries(resources(t)).filter(
    ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Runtime === LAMBDA_RUNTIME.name && r.Properties.Description,
  );

let byDefault: Template;

beforeAll(() => {
  byDefault = synth();
}, 120_000);

describe('application logs', () => {
  it('are at WARN with 1 % of invocations sampled, and Lambda imposes no level of its own', () => {
    const fns = berthFunctions(byDefault);
    expect(fns.length).toBeGreaterThan(20);
    for (const [id, f] of fns) {
      expect(f.Properties.Environment.Variables, id).toMatchObject({ LOG_LEVEL: 'WARN', LOG_SAMPLE_RATE: '0.01' });
      // the JSON format would set AWS_LAMBDA_LOG_LEVEL, which the Logger obeys over both
      expect(f.Properties.LoggingConfig.LogFormat, id).toBe('Text');
      expect(f.Properties.LoggingConfig.ApplicationLogLevel, id).toBeUndefined();
    }
  });

  it('take the level and the sample rate from the deployment (-c logLevel, -c logSampleRate)', () => {
    const t = synth({ functions: { logLevel: 'INFO', logSampleRate: 0.1 } }, 'Verbose');
    for (const [id, f] of berthFunctions(t)) {
      expect(f.Properties.Environment.Variables, id).toMatchObject({ LOG_LEVEL: 'INFO', LOG_SAMPLE_RATE: '0.1' });
    }
  });

  it('refuse a level Powertools does not know or a rate outside 0-1, in the app too', () => {
    expect(() => synth({ functions: { logLevel: 'LOUD' as never } }, 'Bad1')).toThrow(FunctionSettingsError);
    expect(() => synth({ functions: { logSampleRate: 2 } }, 'Bad2')).toThrow(/logSampleRate/);
    expect(() => synth({ functions: { logSampleRate: Number.NaN } }, 'Bad3')).toThrow(/logSampleRate/);
    const r = spawnSync('node_modules/.bin/tsx', ['cdk/bin/app.ts'], {
      env: {
        ...process.env,
        CDK_CONTEXT_JSON: JSON.stringify({ identity: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: 'berth', logLevel: 'loud' }),
        CDK_OUTDIR: '/nonexistent-berth-cdk-out',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('refusing to synthesise: logLevel "LOUD" is not one of');
  }, 120_000);
});

describe('bundles', () => {
  /** one function synthesised with bundling (esbuild), as `cdk synth` builds it */
  function bundle(sourceMaps?: boolean) {
    // SAM's metadata says where each function's bundle was staged (cdk/lib/sam.ts)
    const app = new App({ postCliContext: SAM_CONTEXT });
    const stack = new Stack(app, 'Bundle');
    if (sourceMaps !== undefined) setFunctionSettings(stack, { sourceMaps });
    const table = new dynamodb.TableV2(stack, 'T', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
    new BerthFunction(stack, 'Root', { entry: 'functions/placement/root.ts', description: 'root', table, access: 'none' });
    new BerthFunction(stack, 'Big', {
      entry: 'functions/placement/root.ts',
      description: 'big',
      table,
      access: 'none',
      memoryMb: 3008,
      largeHeap: true,
    });
    const outdir = app.synth().directory;
    const fns = Object.values(Template.fromStack(stack).toJSON().Resources as Record<string, Resource>).filter(
      (r) => r.Type === 'AWS::Lambda::Function',
    );
    const env = (d: string) => fns.find((f) => f.Properties.Description === d)!.Properties.Environment.Variables;
    const dir = join(outdir, fns[0]!.Metadata!['aws:asset:path']);
    return { files: readdirSync(dir), code: readFileSync(join(dir, 'index.mjs'), 'utf8'), small: env('root'), big: env('big') };
  }

  it('carry no source map and do not ask Node for them, unless -c sourceMaps=true', () => {
    const plain = bundle();
    expect(plain.files.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(plain.code).not.toContain('sourceMappingURL');
    expect(plain.small.NODE_OPTIONS).toBeUndefined();
    expect(plain.big.NODE_OPTIONS).toBe('--max-old-space-size=2624');
    const mapped = bundle(true);
    expect(mapped.files).toContain('index.mjs.map');
    expect(mapped.code).toContain('sourceMappingURL=index.mjs.map');
    expect(mapped.small.NODE_OPTIONS).toBe('--enable-source-maps');
    expect(mapped.big.NODE_OPTIONS).toBe('--enable-source-maps --max-old-space-size=2624');
  }, 180_000);

  it('none of the stack’s functions enables source maps by default', () => {
    for (const [id, f] of berthFunctions(byDefault))
      expect(String(f.Properties.Environment.Variables.NODE_OPTIONS ?? ''), id).not.toContain('source-maps');
  });
});

describe('the maintenance function', () => {
  const maintenanceId = (t: Template) =>
    Object.entries(resources(t)).find(([, r]) => r.Type === 'AWS::Lambda::Function' && /^Scheduled maintenance/.test(r.Properties.Description))![0];

  it('runs one instance at a time; no other function reserves concurrency', () => {
    const id = maintenanceId(byDefault);
    for (const [fid, f] of berthFunctions(byDefault)) {
      expect(f.Properties.ReservedConcurrentExecutions, fid).toBe(fid === id ? 1 : undefined);
    }
  });

  it('sends the event of a failed or stale run to an encrypted queue, without retrying it', () => {
    const id = maintenanceId(byDefault);
    const configs = Object.values(resources(byDefault)).filter((r) => r.Type === 'AWS::Lambda::EventInvokeConfig');
    expect(configs).toHaveLength(1);
    const c = configs[0]!.Properties;
    expect(c.FunctionName).toEqual({ Ref: id });
    expect(c.MaximumRetryAttempts).toBe(0);
    expect(c.MaximumEventAgeInSeconds).toBe(120);
    const queueId = c.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0];
    const queue = resources(byDefault)[queueId]!;
    expect(queue.Type).toBe('AWS::SQS::Queue');
    expect(queue.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    // TLS only
    byDefault.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: queueId }],
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    // the schedule hands its undeliverable events to the same queue, after a bounded retry
    byDefault.hasResourceProperties('AWS::Scheduler::Schedule', {
      Target: Match.objectLike({
        Arn: { 'Fn::GetAtt': [id, 'Arn'] },
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queueId, 'Arn'] } },
        RetryPolicy: { MaximumEventAgeInSeconds: 120, MaximumRetryAttempts: 2 },
      }),
    });
  });
});

describe('alarms', () => {
  type Alarm = Resource['Properties'];
  const alarms = (t: Template): Alarm[] =>
    Object.values(resources(t))
      .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
      .map((r) => r.Properties);
  /** the metrics an alarm reads: its own, or those of its math expression */
  const metricsOf = (a: Alarm): Array<{ MetricName: string; Namespace: string; Dimensions: Array<{ Name: string; Value: unknown }> }> =>
    a.Metrics
      ? a.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat.Metric)
      : [{ MetricName: a.MetricName, Namespace: a.Namespace, Dimensions: a.Dimensions }];
  const dim = (m: { Dimensions: Array<{ Name: string; Value: unknown }> }, name: string) => m.Dimensions.find((d) => d.Name === name)?.Value;
  const watching = (t: Template, metricName: string, dimension: string, value: unknown) =>
    alarms(t).filter((a) => metricsOf(a).some((m) => m.MetricName === metricName && JSON.stringify(dim(m, dimension)) === JSON.stringify(value)));
  const idsOf = (t: Template, type: string) =>
    Object.entries(resources(t))
      .filter(([, r]) => r.Type === type)
      .map(([id]) => id);

  it('watch every function for errors and throttles, any one in 5 minutes', () => {
    const fns = berthFunctions(byDefault);
    for (const [id] of fns) {
      for (const metric of ['Errors', 'Throttles']) {
        const found = watching(byDefault, metric, 'FunctionName', { Ref: id });
        expect(found, `${id} ${metric}`).toHaveLength(1);
        expect(found[0]).toMatchObject({
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          Period: 300,
          Statistic: 'Sum',
          TreatMissingData: 'notBreaching',
        });
      }
    }
  });

  it('watch the table and each of its indexes for throttling, and the table for system errors', () => {
    const table = { Ref: idsOf(byDefault, 'AWS::DynamoDB::GlobalTable')[0] };
    const throttles = alarms(byDefault).find((a) => /-table-throttles$/.test(a.AlarmName))!;
    const m = metricsOf(throttles);
    expect(m.filter((x) => x.MetricName === 'ThrottledRequests').map((x) => dim(x, 'Operation'))).toEqual(
      expect.arrayContaining(['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'TransactWriteItems']),
    );
    expect(m.map((x) => x.MetricName)).toEqual(expect.arrayContaining(['ReadThrottleEvents', 'WriteThrottleEvents']));
    for (const x of m) expect(dim(x, 'TableName')).toEqual(table);
    // a quiet operation counts 0 instead of blanking the sum
    expect(throttles.Metrics.find((q: any) => q.ReturnData !== false).Expression).toMatch(/^SUM\(\[FILL\(\w+, 0\)(, FILL\(\w+, 0\))+\]\)$/);
    expect(throttles).toMatchObject({ Threshold: 1, TreatMissingData: 'notBreaching' });
    for (const index of GSIS.map((g) => g.name)) {
      const found = watching(byDefault, 'ReadThrottleEvents', 'GlobalSecondaryIndexName', index);
      expect(found, index).toHaveLength(1);
      expect(
        metricsOf(found[0]!)
          .map((x) => x.MetricName)
          .sort(),
      ).toEqual(['ReadThrottleEvents', 'WriteThrottleEvents']);
    }
    const errors = alarms(byDefault).find((a) => /-table-system-errors$/.test(a.AlarmName))!;
    expect(metricsOf(errors).every((x) => x.MetricName === 'SystemErrors' && JSON.stringify(dim(x, 'TableName')) === JSON.stringify(table))).toBe(
      true,
    );
    expect(metricsOf(errors).length).toBeGreaterThanOrEqual(6);
    expect(errors.Threshold).toBe(5);
  });

  it('watch both state machines for failed, timed-out and aborted executions', () => {
    const machines = idsOf(byDefault, 'AWS::StepFunctions::StateMachine');
    expect(machines).toHaveLength(2);
    for (const id of machines) {
      for (const metric of ['ExecutionsFailed', 'ExecutionsTimedOut', 'ExecutionsAborted']) {
        const found = watching(byDefault, metric, 'StateMachineArn', { Ref: id });
        expect(found, `${id} ${metric}`).toHaveLength(1);
        expect(found[0]).toMatchObject({ Threshold: 1, TreatMissingData: 'notBreaching' });
      }
    }
  });

  it('watch both HTTP APIs for 5xx answers', () => {
    const apis = idsOf(byDefault, 'AWS::ApiGatewayV2::Api');
    expect(apis).toHaveLength(2);
    for (const id of apis) {
      const found = watching(byDefault, '5xx', 'ApiId', { Ref: id });
      expect(found, id).toHaveLength(1);
      expect(found[0]).toMatchObject({ Namespace: 'AWS/ApiGateway', Statistic: 'Sum', Threshold: 5, TreatMissingData: 'notBreaching' });
    }
  });

  it('go off when maintenance stops running (no invocation in 10 minutes, no data counting as none) or a run fails', () => {
    const [id] = berthFunctions(byDefault).find(([, f]) => /^Scheduled maintenance/.test(f.Properties.Description))!;
    const found = watching(byDefault, 'Invocations', 'FunctionName', { Ref: id });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: 2,
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
    });
    const queue = idsOf(byDefault, 'AWS::SQS::Queue')[0]!;
    const depth = watching(byDefault, 'ApproximateNumberOfMessagesVisible', 'QueueName', { 'Fn::GetAtt': [queue, 'QueueName'] });
    expect(depth).toHaveLength(1);
    expect(depth[0]).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
  });

  it('stay within CloudWatch’s 10 metrics per alarm, carry a description, and notify nobody unless asked', () => {
    for (const a of alarms(byDefault)) {
      expect(metricsOf(a).length, a.AlarmName).toBeLessThanOrEqual(10);
      expect(String(a.AlarmDescription).length, a.AlarmName).toBeGreaterThan(40);
      expect(a.AlarmActions, a.AlarmName).toBeUndefined();
    }
    byDefault.resourceCountIs('AWS::SNS::Topic', 0);
  });

  it('notify a new encrypted topic with e-mail subscriptions (-c alarmEmail), when the alarm fires and when it clears', () => {
    const t = synth({ operations: { alarmEmails: ['ops@example.com', 'oncall@example.com'] } }, 'Mail');
    const topic = idsOf(t, 'AWS::SNS::Topic');
    expect(topic).toHaveLength(1);
    const key = idsOf(t, 'AWS::KMS::Key')[0]!;
    t.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [key, 'Arn'] } });
    t.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({ Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: ['kms:Decrypt', 'kms:GenerateDataKey*'] }),
        ]),
      },
    });
    t.resourceCountIs('AWS::SNS::Subscription', 2);
    t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
    const all = alarms(t);
    expect(all.length).toBeGreaterThan(50);
    for (const a of all) {
      expect(a.AlarmActions, a.AlarmName).toEqual([{ Ref: topic[0] }]);
      expect(a.OKActions, a.AlarmName).toEqual([{ Ref: topic[0] }]);
    }
  });

  it('notify an existing topic (-c alarmTopicArn)', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:ops-pager';
    const t = synth({ operations: { alarmTopicArn: arn } }, 'Pager');
    t.resourceCountIs('AWS::SNS::Topic', 0);
    for (const a of alarms(t)) expect(a.AlarmActions, a.AlarmName).toEqual([arn]);
  });

  it('refuse an address or topic ARN that cannot work', () => {
    expect(() => synth({ operations: { alarmEmails: ['ops'] } }, 'BadMail')).toThrow(OperationsConfigError);
    expect(() => synth({ operations: { alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops.fifo' } }, 'Fifo')).toThrow(/standard SNS topic/);
    expect(() => synth({ operations: { alarmTopicArn: 'ops-pager' } }, 'Name')).toThrow(/alarmTopicArn/);
  });
});

describe('cdk-nag', () => {
  it('finds nothing unacknowledged with every operations option on', () => {
    const stack = build(
      { operations: { alarmEmails: ['ops@example.com'], alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops-pager' } },
      'NagAll',
      true,
    );
    Template.fromStack(stack);
    expect(Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
  }, 120_000);
});

describe('the dashboard and Contributor Insights', () => {
  const replica = (t: Template) => Object.values(resources(t)).find((r) => r.Type === 'AWS::DynamoDB::GlobalTable')!.Properties.Replicas[0];
  /** the dashboard's JSON body, references to resources written as they are in the template */
  const body = (t: Template) => {
    const join = Object.values(resources(t)).find((r) => r.Type === 'AWS::CloudWatch::Dashboard')!.Properties.DashboardBody['Fn::Join'];
    return (join[1] as unknown[]).map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join('');
  };

  it('are off by default', () => {
    byDefault.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    const r = replica(byDefault);
    expect(r.ContributorInsightsSpecification).toBeUndefined();
    for (const g of r.GlobalSecondaryIndexes ?? []) expect(g.ContributorInsightsSpecification).toBeUndefined();
  });

  it('-c dashboard=true: one dashboard with every alarm, every function, the table, both APIs and machines, and maintenance', () => {
    const t = synth({ operations: { dashboard: true } }, 'Dash');
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    t.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'Dash-operations' });
    const b = body(t);
    const alarmIds = Object.entries(resources(t))
      .filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm')
      .map(([id]) => id);
    for (const id of alarmIds) expect(b, id).toContain(`"${id}","Arn"`);
    for (const [id] of berthFunctions(t)) expect(b, id).toContain(`"Ref":"${id}"`);
    for (const metric of [
      'ConsumedReadCapacityUnits',
      'ConsumedWriteCapacityUnits',
      'ReadThrottleEvents',
      '5xx',
      'ExecutionsFailed',
      'ApproximateNumberOfMessagesVisible',
      'Invocations',
    ]) {
      expect(b, metric).toContain(`"${metric}"`);
    }
    for (const index of GSIS.map((g) => g.name)) expect(b, index).toContain(`"GlobalSecondaryIndexName","${index}"`);
    // Contributor Insights stays off: it has its own flag and its own cost
    expect(replica(t).ContributorInsightsSpecification).toBeUndefined();
  });

  it('-c insights=true: Contributor Insights on the table and every index, and the dashboard', () => {
    const t = synth({ operations: { insights: 'all' } }, 'Insights');
    const r = replica(t);
    const on = { Enabled: true, Mode: 'ACCESSED_AND_THROTTLED_KEYS' };
    expect(r.ContributorInsightsSpecification).toEqual(on);
    expect(r.GlobalSecondaryIndexes.map((g: any) => g.IndexName).sort()).toEqual(GSIS.map((g) => g.name).sort());
    for (const g of r.GlobalSecondaryIndexes) expect(g.ContributorInsightsSpecification, g.IndexName).toEqual(on);
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    expect(body(t)).toContain('Contributor Insights');
  });

  it('-c insights=throttled: throttled keys only (billed only when something is throttled)', () => {
    const r = replica(synth({ operations: { insights: 'throttled' } }, 'Throttled'));
    expect(r.ContributorInsightsSpecification).toEqual({ Enabled: true, Mode: 'THROTTLED_KEYS' });
    for (const g of r.GlobalSecondaryIndexes) expect(g.ContributorInsightsSpecification.Mode).toBe('THROTTLED_KEYS');
  });

  it('take their flags from the app, refusing values they do not know', () => {
    expect(parseInsights(undefined)).toBe(false);
    expect(parseInsights('false')).toBe(false);
    expect(parseInsights('true')).toBe('all');
    expect(parseInsights('throttled')).toBe('throttled');
    expect(() => parseInsights('yes')).toThrow(OperationsConfigError);
    const run = (context: Record<string, string>) =>
      spawnSync('node_modules/.bin/tsx', ['cdk/bin/app.ts'], {
        env: {
          ...process.env,
          CDK_CONTEXT_JSON: JSON.stringify({ identity: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: 'berth', ...context }),
          CDK_OUTDIR: '/nonexistent-berth-cdk-out',
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
    const dash = run({ dashboard: 'yes' });
    expect(dash.status).toBe(1);
    expect(dash.stderr).toContain('-c dashboard=yes: expected true or false');
    const insights = run({ insights: 'all-keys' });
    expect(insights.status).toBe(1);
    expect(insights.stderr).toContain('-c insights=all-keys: expected true, throttled or false');
  }, 120_000);
});
