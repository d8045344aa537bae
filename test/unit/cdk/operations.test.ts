/**
 * Operating Berth in AWS (README, "Operating in AWS"): what the template says about
 * logging, bundles, alarms, the maintenance function, the dashboard and Contributor
 * Insights, by default and with each context flag.
 */
import { App, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BerthStack, type BerthStackProps } from '../../../cdk/lib/berth-stack.js';
import { BerthFunction, FunctionSettingsError, setFunctionSettings } from '../../../cdk/lib/function.js';
import { SAM_CONTEXT } from '../../../cdk/lib/sam.js';

const IDENTITY = { mode: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] } as const;

/** a stack's template, bundling skipped (the template is under test) */
function synth(props: Omit<BerthStackProps, 'identity'> = {}, id = 'Ops'): Template {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new BerthStack(app, id, { identity: { ...IDENTITY, jwtAudience: [...IDENTITY.jwtAudience] }, ...props }));
}

type Resource = { Type: string; Properties: Record<string, any>; Metadata?: Record<string, any> };
const resources = (t: Template): Record<string, Resource> => t.toJSON().Resources;
/** Berth's own functions (BerthFunction), not CDK's custom-resource helpers */
const berthFunctions = (t: Template) =>
  Object.entries(resources(t)).filter(
    ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Runtime === 'nodejs22.x' && r.Properties.Description,
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
