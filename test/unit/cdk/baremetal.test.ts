import { App, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BerthStack } from '../../../cdk/lib/berth-stack.js';
import { BaremetalApi } from '../../../cdk/lib/baremetal.js';
import { acknowledgeNagFindings } from '../../../cdk/lib/nag.js';
import { BAREMETAL_ROUTES, BAREMETAL_FAMILIES } from '../../../functions/baremetal/routes.js';
import { MACHINES, STEPS } from '../../../functions/conductor/machines.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
let template: Template;
let stack: BerthStack;
type Res = { Type: string; Properties: any };
let resources: Record<string, Res>;

beforeAll(() => {
  // skip esbuild bundling: the template is what is under test here
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  stack = new BerthStack(app, 'Test', { identity: { mode: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] } });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeNagFindings(stack);
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources;
}, 180_000);

function fnByDescription(description: string): [string, Res] {
  const found = Object.entries(resources).find(([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Description === description);
  if (!found) throw new Error(`no function ${description}`);
  return found;
}

/** every action the function's role may perform, with the resources */
function roleStatements(fnId: string): Array<{ Action: string | string[]; Resource: unknown }> {
  const roleId = resources[fnId]!.Properties.Role['Fn::GetAtt'][0];
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: any) => x.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement);
}
const actionsOf = (fnId: string) => [...new Set(roleStatements(fnId).flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action])))];

describe('the bare-metal construct', () => {
  it('deploys both state machines from their ASL files, with step Lambdas substituted', () => {
    const machines = Object.values(resources).filter((r) => r.Type === 'AWS::StepFunctions::StateMachine');
    expect(machines).toHaveLength(2);
    for (const spec of Object.values(MACHINES)) {
      const text = readFileSync(join(ROOT, spec.file), 'utf8');
      const sm = machines.find((m) => m.Properties.DefinitionString === text);
      expect(sm, spec.file).toBeDefined();
      expect(Object.keys(sm!.Properties.DefinitionSubstitutions).sort()).toEqual(Object.keys(spec.substitutions).sort());
      for (const [key, step] of Object.entries(spec.substitutions)) {
        const [stepId] = fnByDescription(`Bare metal step ${step}`);
        expect(sm!.Properties.DefinitionSubstitutions[key]).toEqual({ 'Fn::GetAtt': [stepId, 'Arn'] });
      }
      expect(sm!.Properties.TracingConfiguration).toEqual({ Enabled: true });
      expect(sm!.Properties.LoggingConfiguration.Level).toBe('ALL');
    }
  });

  it('gives each family and each step its own function', () => {
    for (const family of BAREMETAL_FAMILIES) fnByDescription(`Bare metal ${family}`);
    for (const step of STEPS) fnByDescription(`Bare metal step ${step}`);
  });

  it('routes every bare-metal path, protects all but the version documents, and has a $default route', () => {
    const apis = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::ApiGatewayV2::Api' && r.Properties.Description?.includes('bare-metal'));
    expect(apis).toHaveLength(1);
    const apiId = apis[0]![0];
    const routes = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route' && r.Properties.ApiId.Ref === apiId);
    const keys = routes.map((r) => r.Properties.RouteKey);
    for (const r of BAREMETAL_ROUTES) expect(keys).toContain(`ANY ${r.path}`);
    expect(keys).toContain('$default');
    for (const r of routes) {
      const open = ['ANY /', 'ANY /v1', '$default'].includes(r.Properties.RouteKey);
      expect(r.Properties.AuthorizationType ?? 'NONE', r.Properties.RouteKey).toBe(open ? 'NONE' : 'JWT');
    }
    template.hasOutput('BaremetalUrl', Match.anyValue());
  });

  it('grants least privilege: only the state machine and the table actions each function uses', () => {
    const [allocId, alloc] = fnByDescription('Bare metal allocations');
    expect(Object.keys(alloc.Properties.Environment.Variables)).toContain('ALLOCATION_STATE_MACHINE_ARN');
    expect(alloc.Properties.Environment.Variables.BAREMETAL_POLICY_MODE).toBe('secure-rbac');
    expect(actionsOf(allocId)).toContain('states:StartExecution');
    const [statesId, states] = fnByDescription('Bare metal node-states');
    expect(Object.keys(states.Properties.Environment.Variables)).toContain('NODE_ACTION_STATE_MACHINE_ARN');
    expect(actionsOf(statesId)).toContain('states:StartExecution');
    const [nodesId] = fnByDescription('Bare metal nodes');
    expect(actionsOf(nodesId)).not.toContain('states:StartExecution');
    const [rootId] = fnByDescription('Bare metal root');
    expect(actionsOf(rootId).filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
    const [findId] = fnByDescription('Bare metal step find-candidates');
    expect(actionsOf(findId).filter((a) => a.startsWith('dynamodb:'))).toEqual(['dynamodb:Query']);
    const [failId] = fnByDescription('Bare metal step fail-allocation');
    // the update, the PutItem of its transaction marker (BMTX#, permissions.test.ts) and of its
    // change's feed item, and the BatchWriteItem of a large description's parts (FEEDPART#)
    expect(
      actionsOf(failId)
        .filter((a) => a.startsWith('dynamodb:'))
        .sort(),
    ).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    for (const [id, r] of Object.entries(resources)) {
      if (r.Type !== 'AWS::Lambda::Function' || !String(r.Properties.Description ?? '').startsWith('Bare metal')) continue;
      const acts = actionsOf(id);
      expect(acts, r.Properties.Description).not.toContain('dynamodb:*');
      expect(acts, r.Properties.Description).not.toContain('dynamodb:Scan');
      // BatchWriteItem only for the parts of a large change description (the change feed)
      for (const st of roleStatements(id) as Array<{ Action: string | string[]; Condition?: any }>) {
        if (![st.Action].flat().includes('dynamodb:BatchWriteItem')) continue;
        expect(st.Condition['ForAllValues:StringLike']['dynamodb:LeadingKeys'], r.Properties.Description).toEqual(['FEEDPART#*']);
      }
    }
  });

  it('the state machines may invoke only their own steps', () => {
    const machines = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine');
    for (const [, sm] of machines) {
      const roleId = sm.Properties.RoleArn['Fn::GetAtt'][0];
      const statements = Object.values(resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: any) => x.Ref === roleId))
        .flatMap((r) => r.Properties.PolicyDocument.Statement)
        .filter((s: any) => s.Action === 'lambda:InvokeFunction');
      const invoked = new Set(statements.flatMap((s: any) => s.Resource).map((x: any) => JSON.stringify(x['Fn::GetAtt'] ?? x['Fn::Join'])));
      const substituted = Object.values(sm.Properties.DefinitionSubstitutions).map((x: any) => x['Fn::GetAtt'][0]);
      for (const id of substituted) expect([...invoked].some((s) => s.includes(id))).toBe(true);
      expect([...invoked].every((s) => substituted.some((id) => s.includes(id)))).toBe(true);
    }
  });

  it('can let a maintenance function resume orphaned allocations', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const s = new Stack(app, 'Orphans');
    const table = new dynamodb.TableV2(s, 'T', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
    const bm = new BaremetalApi(s, 'Bm', { table });
    const fn = new lambda.Function(s, 'Maintenance', {
      runtime: lambda.Runtime.NODEJS_24_X,
      handler: 'i.h',
      code: lambda.Code.fromInline('exports.h=1'),
    });
    bm.grantOrphanRecovery(fn);
    const t = Template.fromStack(s);
    t.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'i.h',
      Environment: { Variables: { ALLOCATION_STATE_MACHINE_ARN: Match.anyValue(), NODE_ACTION_STATE_MACHINE_ARN: Match.anyValue() } },
    });
    const statements = Object.values(t.toJSON().Resources as Record<string, Res>)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((r) => r.Properties.PolicyDocument.Statement);
    expect(statements.some((x: any) => x.Action === 'states:DescribeExecution')).toBe(true);
    expect(statements.some((x: any) => x.Action === 'states:StartExecution')).toBe(true);
  });

  it('gives the bare-metal API its own authorizer: JWT with the same issuer, Keystone with the same Lambda', () => {
    const auths = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Authorizer');
    expect(auths).toHaveLength(2);
    expect(new Set(auths.map((a) => JSON.stringify(a.Properties.ApiId))).size).toBe(2);
    for (const a of auths) expect(a.Properties.JwtConfiguration).toEqual({ Audience: ['berth'], Issuer: 'https://issuer.example.com' });
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const ks = new BerthStack(app, 'Ks', {
      identity: {
        mode: 'keystone',
        keystoneUrl: 'https://keystone.example.com/v3',
        keystonePasswordSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:p-AbCdEf',
      },
    });
    const r = Template.fromStack(ks).toJSON().Resources as Record<string, Res>;
    const lambdaAuths = Object.values(r).filter((x) => x.Type === 'AWS::ApiGatewayV2::Authorizer');
    expect(lambdaAuths).toHaveLength(2);
    expect(new Set(lambdaAuths.map((a) => JSON.stringify(a.Properties.AuthorizerUri))).size).toBe(1);
    expect(lambdaAuths.every((a) => a.Properties.IdentitySource[0] === '$request.header.X-Auth-Token')).toBe(true);
  });

  it('has no unacknowledged cdk-nag AwsSolutions error', () => {
    const errors = Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*'));
    expect(errors.map((e) => `${e.id}: ${String(e.entry.data).slice(0, 160)}`)).toEqual([]);
  });
});
