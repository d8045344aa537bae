/**
 * AWS SAM CLI on the synthesized template (`sam local invoke <Function> -t
 * cdk.out/Berth.template.json`, `sam local start-api`): it finds a function's code
 * through the CDK metadata (aws:asset:path -> the staged, bundled directory,
 * aws:asset:property Code) and the function by its construct path (aws:cdk:path),
 * and start-api maps HTTP API routes to functions through their proxy integrations.
 * The app asks for that metadata (cdk/lib/sam.ts); these assertions hold the template
 * to it, and one function synthesized with bundling shows the staged code is what the
 * handler name points at.
 */
import { App, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Template } from 'aws-cdk-lib/assertions';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BerthStack } from '../../../cdk/lib/berth-stack.js';
import { BerthFunction, LAMBDA_RUNTIME } from '../../../cdk/lib/function.js';
import { SAM_CONTEXT } from '../../../cdk/lib/sam.js';

let resources: Record<string, any>;

beforeAll(() => {
  // the app's context (cdk/bin/app.ts); bundling skipped: the template is under test here
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, postCliContext: SAM_CONTEXT });
  const stack = new BerthStack(app, 'Sam', {
    identity: {
      mode: 'keystone',
      keystoneUrl: 'https://ks.example.com/v3',
      keystoneUsername: 'placement',
      keystonePasswordSecretArn: 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:ks-AbCdEf',
    },
  });
  resources = Template.fromStack(stack).toJSON().Resources;
}, 120_000);

const ofType = (t: string) => Object.entries(resources).filter(([, r]) => r.Type === t);

describe('the template as AWS SAM CLI reads it', () => {
  it('tells SAM where every function’s code and construct are', () => {
    // Berth's functions (BerthFunction: LAMBDA_RUNTIME), not CDK's own custom-resource helpers
    const fns = ofType('AWS::Lambda::Function').filter(([, r]) => r.Properties.Runtime === LAMBDA_RUNTIME.name && r.Properties.Description);
    expect(fns.length).toBeGreaterThanOrEqual(20);
    for (const [id, f] of fns) {
      expect(f.Metadata?.['aws:asset:property'], id).toBe('Code');
      expect(typeof f.Metadata?.['aws:asset:path'], id).toBe('string');
      expect(f.Metadata?.['aws:cdk:path'], id).toMatch(/^Sam\/.+\/Fn\/Resource$/);
      expect(f.Properties.Handler, id).toBe('index.handler');
    }
    // the names `npm run invoke` accepts are the construct ids SAM shows
    const paths = fns.map(([, f]) => f.Metadata['aws:cdk:path'] as string);
    expect(paths).toContain('Sam/Placement-traits/Fn/Resource');
    expect(paths.some((p) => /Step-find-candidates\/Fn\/Resource$/.test(p))).toBe(true);
  });

  it('routes every HTTP API route to a function through a payload-v2 proxy integration', () => {
    const integrations = new Map(ofType('AWS::ApiGatewayV2::Integration'));
    const routes = ofType('AWS::ApiGatewayV2::Route');
    expect(routes.length).toBeGreaterThan(20);
    for (const [id, r] of routes) {
      const target = r.Properties.Target as { 'Fn::Join': [string, unknown[]] };
      const ref = JSON.stringify(target).match(/"Ref":"([^"]+)"/)?.[1];
      const integration = integrations.get(ref!);
      expect(integration, id).toBeDefined();
      expect(integration.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
      const fn = integration.Properties.IntegrationUri['Fn::GetAtt'][0];
      expect(resources[fn]?.Type, id).toBe('AWS::Lambda::Function');
    }
  });

  it('stages the bundled handler where aws:asset:path points', () => {
    const app = new App({ postCliContext: SAM_CONTEXT });
    const stack = new Stack(app, 'SamOne');
    const table = new dynamodb.TableV2(stack, 'T', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
    new BerthFunction(stack, 'Root', { entry: 'functions/placement/root.ts', description: 'root', table, access: 'none' });
    const outdir = app.synth().directory;
    const fn = Object.values(Template.fromStack(stack).toJSON().Resources as Record<string, any>).find((r) => r.Type === 'AWS::Lambda::Function')!;
    const dir = join(outdir, fn.Metadata['aws:asset:path']);
    expect(fn.Metadata['aws:asset:path']).toMatch(/^asset\.[0-9a-f]{64}$/);
    expect(existsSync(join(dir, 'index.mjs'))).toBe(true);
    // Handler index.handler: the bundle exports `handler`
    expect(readFileSync(join(dir, 'index.mjs'), 'utf8')).toMatch(/export\s*\{[^}]*\bas handler\b[^}]*\}|export\s*\{[^}]*\bhandler\b/);
  }, 120_000);
});
