/**
 * The first real account (README, "Deploying to AWS"; docs/operating.md, "Operating in AWS"): the
 * functions in a VPC with the endpoints and security groups they need, a Keystone
 * password secret under a customer-managed KMS key, limits per route and per project,
 * alarms that say when they notify nobody, the newest Node.js runtime, the dashboard on
 * TLS 1.2, and every -c option checked at synth time — each under cdk-nag, alone and
 * combined.
 */
import { App, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BerthStack, type BerthStackProps } from '../../../cdk/lib/berth-stack.js';
import { CONTEXT_OPTIONS, ContextError, readContext } from '../../../cdk/lib/context.js';
import { LAMBDA_RUNTIME } from '../../../cdk/lib/function.js';
import { PUBLIC_PATHS } from '../../../cdk/lib/limits.js';
import { acknowledgeNagFindings, nagAcknowledgements } from '../../../cdk/lib/nag.js';
import { NO_ALARM_DESTINATION_WARNING } from '../../../cdk/lib/operations-options.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:placement-AbCdEf';
const KEY = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const KEYSTONE = { mode: 'keystone' as const, keystoneUrl: 'https://keystone.internal:5000/v3', keystonePasswordSecretArn: SECRET };
const JWT = { mode: 'jwt' as const, jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] };
const IMPORTED = {
  vpcId: 'vpc-0123456789abcdef0',
  subnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
  routeTableIds: ['rtb-0123456789abcdef0', 'rtb-0123456789abcdef1'],
};

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };

let n = 0;
/** a stack as `cdk synth` builds it (bundling skipped: the template is under test), with cdk-nag */
function build(props: BerthStackProps, nag = true): { stack: BerthStack; t: Template; r: Record<string, Resource> } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new BerthStack(app, `Acct${n++}`, props);
  if (nag) {
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    acknowledgeNagFindings(stack);
  }
  const t = Template.fromStack(stack);
  return { stack, t, r: t.toJSON().Resources };
}
const ofType = (r: Record<string, Resource>, type: string) => Object.entries(r).filter(([, x]) => x.Type === type);
/** Berth's functions (BerthFunction), not CDK's helpers */
const berthFunctions = (r: Record<string, Resource>) =>
  ofType(r, 'AWS::Lambda::Function').filter(([, f]) => f.Properties.Runtime === LAMBDA_RUNTIME.name && f.Properties.Description);
const fnByDescription = (r: Record<string, Resource>, d: string) => berthFunctions(r).find(([, f]) => f.Properties.Description === d)!;
const statementsOf = (r: Record<string, Resource>, fnId: string) => {
  const role = r[fnId]!.Properties.Role['Fn::GetAtt'][0];
  return ofType(r, 'AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((x: any) => x.Ref === role))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
};
const nagErrors = (stack: BerthStack) => Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*'));

describe('the functions in a VPC', () => {
  it('-c vpc=create: a private isolated VPC with flow logs, every function in it, the endpoints instead of a NAT', () => {
    const { stack, r } = build({ identity: KEYSTONE, network: { create: true } });
    expect(nagErrors(stack)).toEqual([]);
    expect(ofType(r, 'AWS::EC2::VPC')).toHaveLength(1);
    expect(ofType(r, 'AWS::EC2::NatGateway')).toHaveLength(0);
    expect(ofType(r, 'AWS::EC2::InternetGateway')).toHaveLength(0);
    expect(ofType(r, 'AWS::EC2::FlowLog')).toHaveLength(1);
    // DynamoDB's prefix list, looked up at deploy time for the security groups
    expect(ofType(r, 'Custom::AWS').filter(([id]) => id.includes('DynamoDbPrefixList'))).toHaveLength(1);
    const subnets = ofType(r, 'AWS::EC2::Subnet');
    expect(subnets).toHaveLength(2);
    for (const [, s] of subnets) expect(s.Properties.MapPublicIpOnLaunch).toBe(false);
    // every Berth function, the authorizer included, sits in those subnets
    const fns = berthFunctions(r);
    expect(fns.length).toBeGreaterThan(20);
    for (const [id, f] of fns) {
      expect(f.Properties.VpcConfig?.SubnetIds, id).toHaveLength(2);
      expect(f.Properties.VpcConfig.SecurityGroupIds, id).toHaveLength(1);
    }
    // DynamoDB through its (free) gateway endpoint; Step Functions and Secrets Manager through interface endpoints
    const endpoints = ofType(r, 'AWS::EC2::VPCEndpoint').map(([, e]) => e.Properties);
    const service = (e: any) => JSON.stringify(e.ServiceName);
    expect(endpoints.filter((e) => e.VpcEndpointType === 'Gateway').map(service)).toEqual([expect.stringContaining('.dynamodb')]);
    const iface = endpoints.filter((e) => e.VpcEndpointType === 'Interface');
    expect(iface.map(service).sort()).toEqual([expect.stringContaining('.secretsmanager'), expect.stringContaining('.states')].sort());
    for (const e of iface) expect(e.PrivateDnsEnabled).toBe(true);
  });

  it('gives each function only the way out it needs, and lets nothing in but the functions to the endpoints', () => {
    const { r } = build({ identity: KEYSTONE, network: { create: true, keystoneCidr: '10.20.0.0/16' } });
    const groups = Object.fromEntries(ofType(r, 'AWS::EC2::SecurityGroup').map(([id, g]) => [id, g.Properties]));
    const groupOf = (fnId: string) => r[fnId]!.Properties.VpcConfig.SecurityGroupIds[0]['Fn::GetAtt'][0] as string;
    const [authorizerId] = fnByDescription(r, 'Keystone token authorizer');
    const [traitsId] = fnByDescription(r, 'Placement traits');
    const authorizer = groupOf(authorizerId);
    const functions = groupOf(traitsId);
    expect(authorizer).not.toBe(functions);
    for (const [id] of berthFunctions(r)) if (id !== authorizerId) expect(groupOf(id), id).toBe(functions);
    // no group allows all traffic out, none takes anything from outside
    for (const [id, g] of Object.entries(groups)) expect(JSON.stringify(g.SecurityGroupEgress ?? []), id).not.toContain('"IpProtocol":"-1"');
    const egress = ofType(r, 'AWS::EC2::SecurityGroupEgress').map(([, e]) => e.Properties);
    const ingress = ofType(r, 'AWS::EC2::SecurityGroupIngress').map(([, e]) => e.Properties);
    const from = (g: string) => egress.filter((e) => e.GroupId['Fn::GetAtt'][0] === g);
    // the API functions: 443 to DynamoDB's prefix list (looked up at deploy time) and to the endpoints
    expect(
      from(functions)
        .map((e) => [e.FromPort, e.ToPort, e.DestinationPrefixListId ? 'prefix-list' : 'endpoints'])
        .sort(),
    ).toEqual([
      [443, 443, 'endpoints'],
      [443, 443, 'prefix-list'],
    ]);
    expect(JSON.stringify(from(functions))).toContain('PrefixLists.0.PrefixListId');
    // the authorizer: the Secrets Manager endpoint, and Keystone's port in its CIDR
    expect(
      from(authorizer)
        .map((e) => [e.FromPort, e.CidrIp ?? 'endpoints'])
        .sort(),
    ).toEqual([
      [443, 'endpoints'],
      [5000, '10.20.0.0/16'],
    ]);
    // the endpoints take 443 from those two groups only
    expect(ingress.map((i) => [i.FromPort, i.SourceSecurityGroupId['Fn::GetAtt'][0]]).sort()).toEqual(
      [
        [443, functions],
        [443, authorizer],
      ].sort(),
    );
  });

  it('takes an existing VPC by its ids, looking nothing up at synth time', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new BerthStack(app, 'Imported', { identity: KEYSTONE, network: IMPORTED });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    acknowledgeNagFindings(stack);
    const assembly = app.synth();
    // no context lookup (availability zones, VPC attributes) was asked for
    expect(assembly.manifest.missing ?? []).toEqual([]);
    const r = Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;
    expect(nagErrors(stack)).toEqual([]);
    expect(ofType(r, 'AWS::EC2::VPC')).toHaveLength(0);
    for (const [id, f] of berthFunctions(r)) expect(f.Properties.VpcConfig.SubnetIds, id).toEqual(IMPORTED.subnetIds);
    const gateway = ofType(r, 'AWS::EC2::VPCEndpoint').find(([, e]) => e.Properties.VpcEndpointType === 'Gateway')![1].Properties;
    expect(gateway.VpcId).toBe(IMPORTED.vpcId);
    expect([...gateway.RouteTableIds].sort()).toEqual(IMPORTED.routeTableIds);
  });

  it('-c vpcEndpoints=none: no endpoints, 443 out (the VPC’s own endpoints or NAT), Keystone still by its port', () => {
    const { stack, r } = build({ identity: KEYSTONE, network: { vpcId: IMPORTED.vpcId, subnetIds: IMPORTED.subnetIds, endpoints: 'none' } });
    expect(nagErrors(stack)).toEqual([]);
    expect(ofType(r, 'AWS::EC2::VPCEndpoint')).toHaveLength(0);
    // no look-up of DynamoDB's prefix list (the deploy's end is told by a custom resource of its own)
    expect(ofType(r, 'Custom::AWS').filter(([id]) => id.includes('DynamoDbPrefixList'))).toHaveLength(0);
    const egress = ofType(r, 'AWS::EC2::SecurityGroupEgress').map(([, e]) => [e.Properties.FromPort, e.Properties.CidrIp]);
    expect(egress.sort()).toEqual([
      [443, '0.0.0.0/0'],
      [443, '0.0.0.0/0'],
      [5000, '0.0.0.0/0'],
    ]);
  });

  it('JWT identity in a VPC: no authorizer function, no Secrets Manager endpoint', () => {
    const { stack, r } = build({ identity: JWT, network: { create: true } });
    expect(nagErrors(stack)).toEqual([]);
    const services = ofType(r, 'AWS::EC2::VPCEndpoint').map(([, e]) => JSON.stringify(e.Properties.ServiceName));
    expect(services.some((s) => s.includes('secretsmanager'))).toBe(false);
    expect(ofType(r, 'AWS::EC2::SecurityGroup')).toHaveLength(2);
  });

  it('without a VPC option nothing changes: no function in a VPC, no network resource', () => {
    const { r } = build({ identity: JWT }, false);
    for (const [id, f] of berthFunctions(r)) expect(f.Properties.VpcConfig, id).toBeUndefined();
    expect(Object.values(r).filter((x) => x.Type.startsWith('AWS::EC2::'))).toEqual([]);
  });

  it('refuses VPC settings that cannot work, saying why', () => {
    const bad = (network: BerthStackProps['network']) => () => build({ identity: KEYSTONE, network }, false);
    expect(bad({ vpcId: 'vpc-123' })).toThrow(/not a VPC id/);
    expect(bad({ vpcId: IMPORTED.vpcId })).toThrow(/vpcSubnetIds is required/);
    expect(bad({ vpcId: IMPORTED.vpcId, subnetIds: ['subnet-x'] })).toThrow(/not a subnet id/);
    expect(bad({ vpcId: IMPORTED.vpcId, subnetIds: IMPORTED.subnetIds })).toThrow(/vpcRouteTableIds is required.*vpcEndpoints=none/);
    expect(bad({ create: true, vpcId: IMPORTED.vpcId })).toThrow(/vpc=create builds a new VPC/);
    expect(bad({ create: true, endpoints: 'none' })).toThrow(/leave out vpcEndpoints=none/);
    expect(bad({ create: true, keystoneCidr: '10.0.0.0/33' })).toThrow(/not an IPv4 CIDR/);
    expect(bad({ keystoneCidr: '10.0.0.0/8' })).toThrow(/apply to a VPC/);
  });
});

describe('a Keystone password secret under a customer-managed KMS key', () => {
  it('grants the authorizer kms:Decrypt on that key alone, through Secrets Manager only', () => {
    const { stack, r } = build({ identity: { ...KEYSTONE, keystoneSecretKmsKeyArn: KEY } });
    expect(nagErrors(stack)).toEqual([]);
    const [id] = fnByDescription(r, 'Keystone token authorizer');
    const kms = statementsOf(r, id).filter((s: any) => JSON.stringify(s.Action).includes('kms:'));
    expect(kms).toEqual([
      {
        Action: 'kms:Decrypt',
        Effect: 'Allow',
        Resource: KEY,
        Condition: { StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['secretsmanager.eu-west-1.', { Ref: 'AWS::URLSuffix' }]] } } },
      },
    ]);
    // no other function may decrypt with it
    for (const [fid] of berthFunctions(r)) if (fid !== id) expect(JSON.stringify(statementsOf(r, fid)), fid).not.toContain('kms:');
  });

  it('grants no KMS permission without it (the aws/secretsmanager key needs none), and refuses what is not a key ARN', () => {
    const { r } = build({ identity: KEYSTONE }, false);
    const [id] = fnByDescription(r, 'Keystone token authorizer');
    expect(JSON.stringify(statementsOf(r, id))).not.toContain('kms:');
    for (const arn of ['arn:aws:kms:eu-west-1:123456789012:alias/placement', 'alias/aws/secretsmanager', '1234abcd-12ab-34cd-56ef-1234567890ab']) {
      expect(() => build({ identity: { ...KEYSTONE, keystoneSecretKmsKeyArn: arn } }, false), arn).toThrow(/not a KMS key ARN/);
    }
    expect(() => build({ identity: { ...JWT, keystoneSecretKmsKeyArn: KEY } }, false)).toThrow(
      /keystoneSecretKmsKeyArn applies to -c identity=keystone only/,
    );
  });
});

describe('limits per client', () => {
  const stages = (r: Record<string, Resource>) => ofType(r, 'AWS::ApiGatewayV2::Stage').map(([, s]) => s);
  const apiOf = (r: Record<string, Resource>, s: Resource) => r[s.Properties.ApiId.Ref]!.Properties.Name as string;

  it('throttles the public routes tighter than the rest, by default', () => {
    const { r } = build({ identity: JWT }, false);
    for (const s of stages(r)) {
      const api = apiOf(r, s).endsWith('-placement') ? 'placement' : 'baremetal';
      expect(s.Properties.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 });
      const keys = [...PUBLIC_PATHS[api].map((p) => `ANY ${p}`), '$default'].sort();
      expect(Object.keys(s.Properties.RouteSettings).sort()).toEqual(keys);
      for (const k of keys) expect(s.Properties.RouteSettings[k]).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
    }
    // the public routes are exactly the unauthenticated ones
    const routes = ofType(r, 'AWS::ApiGatewayV2::Route').map(([, x]) => x.Properties);
    const open = routes.filter((x) => (x.AuthorizationType ?? 'NONE') === 'NONE').map((x) => x.RouteKey);
    expect([...new Set(open)].sort()).toEqual(['$default', 'ANY /', 'ANY /v1']);
  });

  it('takes the stage throttle and per-route overrides from the deployment; the stage waits for the routes it names', () => {
    const { stack, r } = build({
      identity: JWT,
      limits: {
        stage: { rate: 300, burst: 600 },
        publicRoutes: { rate: 5, burst: 10 },
        routes: { 'placement:/allocation_candidates': { rate: 50, burst: 100 }, 'baremetal:/v1/allocations': { rate: 10, burst: 20 } },
      },
    });
    expect(nagErrors(stack)).toEqual([]);
    for (const s of stages(r)) {
      expect(s.Properties.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 300, ThrottlingBurstLimit: 600 });
      expect(s.Properties.RouteSettings.$default).toEqual({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 });
      const placement = apiOf(r, s).endsWith('-placement');
      expect(s.Properties.RouteSettings['ANY /allocation_candidates']).toEqual(
        placement ? { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 } : undefined,
      );
      expect(s.Properties.RouteSettings['ANY /v1/allocations']).toEqual(
        placement ? undefined : { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
      );
      // each route the settings name exists before the stage that names it
      const routeIds = ofType(r, 'AWS::ApiGatewayV2::Route')
        .filter(([, x]) => x.Properties.ApiId.Ref === s.Properties.ApiId.Ref)
        .map(([id]) => id);
      expect(routeIds.length).toBeGreaterThan(3);
      for (const id of routeIds) expect(s.DependsOn, id).toContain(id);
    }
  });

  it('refuses a route that does not exist, a throttle beyond the account quota, a project limit its own bucket could not take', () => {
    const limits = (l: BerthStackProps['limits']) => () => build({ identity: JWT, limits: l }, false);
    expect(limits({ routes: { 'placement:/allocation-candidates': { rate: 1, burst: 1 } } })).toThrow(
      /placement has no route \/allocation-candidates/,
    );
    expect(limits({ routes: { '/traits': { rate: 1, burst: 1 } } })).toThrow(/name the API first/);
    expect(limits({ stage: { rate: 20000, burst: 100 } })).toThrow(/account quota/);
    expect(limits({ stage: { rate: 0, burst: 1 } })).toThrow(/rate must be/);
    expect(limits({ project: { rate: 800, burst: 800 } })).toThrow(/at most 500/);
    expect(limits({ exemptRoles: ['service'] })).toThrow(/applies to -c projectRateLimit only/);
  });

  it('-c projectRateLimit: every authenticated API function counts its callers in the table, with UpdateItem on its API’s buckets only', () => {
    const { stack, r } = build({ identity: KEYSTONE, limits: { project: { rate: 20, burst: 40 }, exemptRoles: ['service'] } });
    expect(nagErrors(stack)).toEqual([]);
    const api = berthFunctions(r).filter(
      ([, f]) => /^(Placement|Bare metal) /.test(f.Properties.Description) && !/step/.test(f.Properties.Description),
    );
    expect(api.length).toBeGreaterThan(15);
    for (const [id, f] of api) {
      const root = / root$/.test(f.Properties.Description);
      const vars = f.Properties.Environment.Variables;
      // the root families serve only the public routes, but share the API's environment
      expect(vars.RATE_LIMIT, id).toBe('20:40');
      expect(vars.RATE_LIMIT_EXEMPT_ROLES, id).toBe('service');
      const rate = statementsOf(r, id).filter((s: any) => JSON.stringify(s.Condition ?? {}).includes('RATE#'));
      if (root) expect(rate, id).toEqual([]);
      else {
        const mine = f.Properties.Description.startsWith('Placement') ? 'RATE#placement#*' : 'RATE#baremetal#*';
        expect(rate, id).toEqual([
          expect.objectContaining({ Action: 'dynamodb:UpdateItem', Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [mine] } } }),
        ]);
      }
    }
    // steps, maintenance and the authorizer neither count nor may touch the buckets
    for (const [id, f] of berthFunctions(r).filter(([fid]) => !api.some(([a]) => a === fid))) {
      expect(f.Properties.Environment.Variables.RATE_LIMIT, id).toBeUndefined();
      expect(JSON.stringify(statementsOf(r, id)), id).not.toContain('RATE#');
    }
  });

  it('is off by default: no function counts, none may write a bucket', () => {
    const { r } = build({ identity: JWT }, false);
    for (const [id, f] of berthFunctions(r)) {
      expect(f.Properties.Environment.Variables.RATE_LIMIT, id).toBeUndefined();
      expect(JSON.stringify(statementsOf(r, id)), id).not.toContain('RATE#');
    }
  });
});

describe('alarms that reach someone', () => {
  const warnings = (stack: BerthStack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('alarms notify nobody'));

  it('warns at synth when the alarms notify nobody, and not when they notify a topic or an address', () => {
    const quiet = build({ identity: JWT }, false).stack;
    expect(warnings(quiet).map((w) => String(w.entry.data))).toEqual([expect.stringContaining(NO_ALARM_DESTINATION_WARNING)]);
    expect(warnings(build({ identity: JWT, operations: { alarmEmails: ['ops@example.com'] } }, false).stack)).toEqual([]);
    expect(warnings(build({ identity: JWT, operations: { alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' } }, false).stack)).toEqual([]);
  });

  it('-c alarms=off: no alarms and no warning, knowingly; a destination with it is refused', () => {
    const { stack, r } = build({ identity: JWT, operations: { alarms: false, dashboard: true } });
    expect(ofType(r, 'AWS::CloudWatch::Alarm')).toHaveLength(0);
    expect(warnings(stack)).toEqual([]);
    expect(nagErrors(stack)).toEqual([]);
    expect(() => build({ identity: JWT, operations: { alarms: false, alarmEmails: ['ops@example.com'] } }, false)).toThrow(
      /alarms=off builds no alarms/,
    );
  });

  it('docs/operating.md’s alarm list names every alarm the stack builds', () => {
    const { r } = build({ identity: KEYSTONE, network: { create: true } }, false);
    const operating = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'operating.md'), 'utf8');
    const section = operating.slice(operating.indexOf('### Alarms'), operating.indexOf('## Operating in AWS: logs, traces, alarms'));
    const names = ofType(r, 'AWS::CloudWatch::Alarm').map(([, a]) => String(a.Properties.AlarmName).replace(/^Acct\d+-/, ''));
    expect(names.length).toBeGreaterThan(60);
    // each alarm's name matches an entry: a function's (its own entries), the table's, an index's, a machine's, an API's, maintenance's
    // the names on each entry's first line (a top-level list item), `<placeholder>` standing for any name part
    const firstCells = [...section.matchAll(/^- (.+)$/gm)].map((m) => m[1]!);
    const patterns = firstCells.flatMap((cell) =>
      [...cell.matchAll(/`([^`]+)`/g)].map((m) => new RegExp(`^${m[1]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/<[^>]+>/g, '.+')}$`)),
    );
    for (const name of names)
      expect(
        patterns.some((p) => p.test(name)),
        name,
      ).toBe(true);
  });
});

describe('the runtime and the inputs', () => {
  it('runs every Berth function on the newest Node.js runtime, answering cdk-nag’s L1 instead of acknowledging it', () => {
    expect(LAMBDA_RUNTIME.name).toBe('nodejs24.x');
    const { stack, r } = build({ identity: JWT });
    for (const [id, f] of berthFunctions(r)) expect(f.Properties.Runtime, id).toBe('nodejs24.x');
    expect(berthFunctions(r).length).toBeGreaterThan(20);
    expect(nagAcknowledgements(stack, stack.table).map((a) => a.id)).not.toContain('AwsSolutions::AwsSolutions-L1');
    expect(nagErrors(stack)).toEqual([]);
  });

  it('reads every -c option into the stack’s props, and refuses an unknown one or a value that cannot work', () => {
    const ctx = (o: Record<string, unknown>) => readContext(Object.keys(o), (k) => o[k]);
    const base = { identity: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: 'a,b' };
    const ok = ctx({
      ...base,
      vpc: 'create',
      throttle: '300:600',
      publicThrottle: '5:10',
      routeThrottle: '{"placement:/allocation_candidates":"50:100"}',
      projectRateLimit: '20',
      rateLimitExemptRoles: 'service, admin',
      alarms: 'off',
      forestMemoryMb: '4096',
      provisionedConcurrency: 2,
      forestDeploy: 'linear',
      tableCapacity: 'provisioned:20000:8000',
      dashboardDomain: 'berth.example.com',
      dashboardCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/12345678-1234-1234-1234-123456789012',
      '@aws-cdk/core:target-partitions': ['aws'],
      'aws:cdk:bundling-stacks': [],
      'availability-zones:account=123456789012:region=eu-west-1': ['eu-west-1a'],
    });
    expect(ok.props.identity?.jwtAudience).toEqual(['a', 'b']);
    expect(ok.props.network).toMatchObject({ create: true });
    expect(ok.props.limits).toMatchObject({
      stage: { rate: 300, burst: 600 },
      publicRoutes: { rate: 5, burst: 10 },
      routes: { 'placement:/allocation_candidates': { rate: 50, burst: 100 } },
      project: { rate: 20, burst: 20 },
      exemptRoles: ['service', 'admin'],
    });
    expect(ok.props.operations?.alarms).toBe(false);
    expect(ok.props.forest).toEqual({ memoryMb: 4096, provisionedConcurrency: 2, deploy: 'linear' });
    expect(ok.props.tableCapacity).toEqual({ mode: 'provisioned', maxRead: 20000, maxWrite: 8000 });
    expect(ctx(base).props.tableCapacity).toEqual({ mode: 'on-demand' });
    expect(ok.props.dashboardDomain?.domainName).toBe('berth.example.com');
    for (const [o, why] of [
      [{ alarmEmails: 'ops@example.com' }, /unknown option -c alarmEmails/],
      [{ forestMemoryMb: 'lots' }, /forestMemoryMb=lots: expected a number/],
      [{ forestMemoryMb: '512' }, /forestMemoryMb=512: expected a whole number from 1024 to 10240/],
      [{ provisionedConcurrency: '1.5' }, /provisionedConcurrency=1.5: expected a whole number/],
      [{ provisionedConcurrency: '-1' }, /provisionedConcurrency=-1/],
      [{ forestDeploy: 'canary' }, /forestDeploy "canary" must be one of all-at-once, linear/],
      [{ tableCapacity: 'provisioned' }, /tableCapacity=provisioned: expected on-demand or provisioned:<max read units>:<max write units>/],
      [{ tableCapacity: 'provisioned:100:2' }, /the maximum write capacity must be at least 5/],
      [{ tableCapacity: 'provisioned:50000:100' }, /50000 read units is above DynamoDB's default quota of 40000/],
      [{ authorizerCacheTtl: 'sixty' }, /authorizerCacheTtl=sixty/],
      [{ logSampleRate: 'often' }, /logSampleRate=often: expected a number/],
      [{ vpc: 'yes' }, /-c vpc=yes: expected create/],
      [{ alarms: 'none' }, /-c alarms=none: expected on or off/],
      [{ throttle: '1000' }, /throttle "1000": expected RATE:BURST/],
      [{ routeThrottle: '/traits=5:10' }, /routeThrottle is not JSON/],
      [{ projectRateLimit: 'fast' }, /projectRateLimit "fast"/],
      [{ dashboardDomain: 'berth.example.com' }, /go together/],
      [
        {
          dashboardDomain: 'b.example.com',
          dashboardCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/12345678-1234-1234-1234-123456789012',
        },
        /us-east-1/,
      ],
      [{ stackName: '1berth' }, /stack name starts with a letter/],
      [{ nag: 'off' }, /-c nag=off: expected true or false/],
    ] as const) {
      expect(() => ctx({ ...base, ...o }), JSON.stringify(o)).toThrow(ContextError);
      expect(() => ctx({ ...base, ...o }), JSON.stringify(o)).toThrow(why);
    }
  });

  it('the app refuses them with the reason before building anything; README and docs/operating.md name every option', () => {
    const run = (context: Record<string, string>) =>
      spawnSync('node_modules/.bin/tsx', ['cdk/bin/app.ts'], {
        env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify({ ...context }), CDK_OUTDIR: '/nonexistent-berth-cdk-out' },
        encoding: 'utf8',
        timeout: 60_000,
      });
    const base = { identity: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: 'berth' };
    const typo = run({ ...base, provisionedConcurency: '2' });
    expect(typo.status).toBe(1);
    expect(typo.stderr).toContain('refusing to synthesise: unknown option -c provisionedConcurency');
    const memory = run({ ...base, forestMemoryMb: '3GB' });
    expect(memory.status).toBe(1);
    expect(memory.stderr).toContain('forestMemoryMb=3GB: expected a number');
    const vpc = run({ ...base, vpcId: 'vpc-0123456789abcdef0' });
    expect(vpc.status).toBe(1);
    expect(vpc.stderr).toContain('vpcSubnetIds is required');
    // the identity options are in README's "Deploying to AWS", every other in docs/operating.md
    const root = join(__dirname, '..', '..', '..');
    const docs = readFileSync(join(root, 'README.md'), 'utf8') + readFileSync(join(root, 'docs', 'operating.md'), 'utf8');
    for (const k of Object.keys(CONTEXT_OPTIONS)) expect(docs, k).toContain(`-c ${k}`);
  }, 120_000);
});

describe('the dashboard’s TLS', () => {
  const distribution = (r: Record<string, Resource>) => ofType(r, 'AWS::CloudFront::Distribution')[0]![1].Properties.DistributionConfig;

  it('-c dashboardDomain with its certificate: TLSv1.2_2021 on SNI, answering cdk-nag’s CFR4; CORS for that origin', () => {
    const cert = 'arn:aws:acm:us-east-1:123456789012:certificate/12345678-1234-1234-1234-123456789012';
    const { stack, r } = build({ identity: JWT, dashboardDomain: { domainName: 'berth.example.com', certificateArn: cert } });
    expect(nagErrors(stack)).toEqual([]);
    const d = distribution(r);
    expect(d.Aliases).toEqual(['berth.example.com']);
    expect(d.ViewerCertificate).toEqual({ AcmCertificateArn: cert, MinimumProtocolVersion: 'TLSv1.2_2021', SslSupportMethod: 'sni-only' });
    for (const [, api] of ofType(r, 'AWS::ApiGatewayV2::Api'))
      expect(api.Properties.CorsConfiguration.AllowOrigins).toEqual(['https://berth.example.com']);
    // the TLS finding is answered, not acknowledged, on this distribution
    const acks = JSON.stringify(Template.fromStack(stack).toJSON());
    expect(acks).not.toContain('AwsSolutions-CFR4');
  });

  it('without one it says what CloudFront does (TLSv1 on its own certificate) instead of setting a policy it ignores', () => {
    const { r } = build({ identity: JWT }, false);
    expect(distribution(r).ViewerCertificate).toBeUndefined();
  });
});

describe('an optional WAF: CloudFront in front of each API', () => {
  const ACL = 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/berth/12345678-1234-1234-1234-123456789012';
  const CERT = 'arn:aws:acm:us-east-1:123456789012:certificate/12345678-1234-1234-1234-123456789012';
  const fronts = (r: Record<string, Resource>) =>
    ofType(r, 'AWS::CloudFront::Distribution')
      .map(([, d]) => d.Properties.DistributionConfig)
      .filter((d) => /API behind WAF/.test(d.Comment));

  it('-c wafWebAclArn: each API behind its own distribution with the web ACL, nothing cached, every header but Host forwarded, HTTPS only', () => {
    const { stack, r, t } = build({ identity: KEYSTONE, apiFront: { wafWebAclArn: ACL } });
    expect(nagErrors(stack)).toEqual([]);
    const ds = fronts(r);
    expect(ds).toHaveLength(2);
    const apis = ofType(r, 'AWS::ApiGatewayV2::Api').map(([id]) => id);
    for (const d of ds) {
      expect(d.WebACLId).toBe(ACL);
      const b = d.DefaultCacheBehavior;
      // AWS's managed CachingDisabled and AllViewerExceptHostHeader policies
      expect(b.CachePolicyId).toBe('4135ea2d-6df8-44a3-9df3-4b5a84be39ad');
      expect(b.OriginRequestPolicyId).toBe('b689b0a8-53d0-40ab-baf2-68738e2966ac');
      expect(b.ViewerProtocolPolicy).toBe('https-only');
      expect(b.AllowedMethods).toHaveLength(7);
      const o = d.Origins[0];
      expect(o.CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] });
      expect(apis.some((id) => JSON.stringify(o.DomainName).includes(`"Ref":"${id}"`))).toBe(true);
    }
    const outputs = Object.keys(t.toJSON().Outputs);
    expect(outputs).toEqual(expect.arrayContaining(['PlacementFrontUrl', 'BaremetalFrontUrl', 'PlacementUrl', 'BaremetalUrl']));
  });

  it('-c apiDomains with -c apiCertificateArn: the fronts on those names with TLSv1.2_2021', () => {
    const { stack, r } = build({
      identity: JWT,
      apiFront: { wafWebAclArn: ACL, domains: { placement: 'placement.example.com', baremetal: 'baremetal.example.com', certificateArn: CERT } },
    });
    expect(nagErrors(stack)).toEqual([]);
    const ds = fronts(r);
    expect(ds.map((d) => d.Aliases[0]).sort()).toEqual(['baremetal.example.com', 'placement.example.com']);
    for (const d of ds)
      expect(d.ViewerCertificate).toEqual({ AcmCertificateArn: CERT, MinimumProtocolVersion: 'TLSv1.2_2021', SslSupportMethod: 'sni-only' });
  });

  it('builds no front without the option, and refuses an ACL or names that cannot work', () => {
    expect(fronts(build({ identity: JWT }, false).r)).toEqual([]);
    const ctx = (o: Record<string, unknown>) => () =>
      readContext(
        Object.keys({ identity: 'jwt', ...o }),
        (k) => ({ identity: 'jwt', jwtIssuer: 'https://i.example.com', jwtAudience: 'a', ...o })[k],
      );
    expect(ctx({ wafWebAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/berth/12345678-1234-1234-1234-123456789012' })).toThrow(
      /scope CLOUDFRONT/,
    );
    expect(ctx({ apiDomains: 'a.example.com,b.example.com' })).toThrow(/add -c wafWebAclArn/);
    expect(ctx({ wafWebAclArn: ACL, apiDomains: 'a.example.com' })).toThrow(/names two domains/);
    expect(
      ctx({
        wafWebAclArn: ACL,
        apiDomains: 'a.example.com,b.example.com',
        apiCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/12345678-1234-1234-1234-123456789012',
      }),
    ).toThrow(/us-east-1/);
    expect(ctx({ wafWebAclArn: ACL }).call(null).props.apiFront).toEqual({ wafWebAclArn: ACL });
  });
});

describe('cdk-nag over combinations of the new options', () => {
  const cert = {
    domainName: 'berth.example.com',
    certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/12345678-1234-1234-1234-123456789012',
  };
  const cases: Array<[string, BerthStackProps]> = [
    [
      'keystone + new VPC + KMS key + project limit + alarms by e-mail + dashboard domain + WAF fronts + placement scheduler',
      {
        identity: { ...KEYSTONE, keystoneSecretKmsKeyArn: KEY },
        network: { create: true, keystoneCidr: '10.0.0.0/8' },
        limits: { project: { rate: 10, burst: 20 }, exemptRoles: ['service'], routes: { 'baremetal:$default': { rate: 50, burst: 50 } } },
        operations: { alarmEmails: ['ops@example.com'], dashboard: true },
        dashboardDomain: cert,
        baremetalScheduler: 'placement',
        apiFront: { wafWebAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/berth/12345678-1234-1234-1234-123456789012' },
      },
    ],
    [
      'keystone + existing VPC with endpoints + topic + insights + provisioned forests deployed linearly',
      {
        identity: KEYSTONE,
        network: IMPORTED,
        operations: { alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops', insights: 'throttled' },
        forest: { memoryMb: 4096, provisionedConcurrency: 1, deploy: 'linear' },
      },
    ],
    [
      'jwt + existing VPC without endpoints + alarms off + throttles + provisioned table',
      {
        identity: JWT,
        tableCapacity: { mode: 'provisioned', maxRead: 20000, maxWrite: 8000 },
        network: { vpcId: IMPORTED.vpcId, subnetIds: IMPORTED.subnetIds, endpoints: 'none' },
        operations: { alarms: false },
        limits: { stage: { rate: 200, burst: 400 }, publicRoutes: { rate: 2, burst: 4 }, project: { rate: 5, burst: 5 } },
      },
    ],
  ];
  for (const [name, props] of cases) {
    it(name, () => {
      const { stack } = build(props);
      expect(nagErrors(stack)).toEqual([]);
    }, 120_000);
  }

  /**
   * Every pair of values of the new options meets in at least one stack (a greedy
   * all-pairs covering of the option matrix): a finding that needs two options together
   * shows up here without synthesizing all 576 combinations.
   */
  const ACL = 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/berth/12345678-1234-1234-1234-123456789012';
  const factors: Record<string, Array<[string, Partial<BerthStackProps> | ((p: BerthStackProps) => BerthStackProps)]>> = {
    identity: [
      ['keystone', { identity: KEYSTONE }],
      ['jwt', { identity: JWT }],
    ],
    network: [
      ['no VPC', {}],
      ['vpc=create', { network: { create: true } }],
      ['vpcId + endpoints', { network: IMPORTED }],
      ['vpcId, vpcEndpoints=none', { network: { vpcId: IMPORTED.vpcId, subnetIds: IMPORTED.subnetIds, endpoints: 'none' } }],
    ],
    kms: [
      ['no key', {}],
      // a key for the Keystone secret only: with JWT there is no secret
      ['customer key', (p) => (p.identity?.mode === 'keystone' ? { ...p, identity: { ...p.identity, keystoneSecretKmsKeyArn: KEY } } : p)],
    ],
    limits: [
      ['default throttles', {}],
      [
        'throttles + project limit',
        {
          limits: {
            stage: { rate: 300, burst: 600 },
            routes: { 'placement:/allocation_candidates': { rate: 50, burst: 100 } },
            project: { rate: 10, burst: 20 },
            exemptRoles: ['service'],
          },
        },
      ],
    ],
    alarms: [
      ['no destination', {}],
      ['e-mail', { operations: { alarmEmails: ['ops@example.com'], dashboard: true } }],
      ['alarms=off', { operations: { alarms: false } }],
    ],
    dashboard: [
      ['default certificate', {}],
      ['own domain', { dashboardDomain: cert }],
    ],
    waf: [
      ['no WAF', {}],
      ['WAF fronts', { apiFront: { wafWebAclArn: ACL } }],
      [
        'WAF fronts on own domains',
        { apiFront: { wafWebAclArn: ACL, domains: { placement: 'p.example.com', baremetal: 'b.example.com', certificateArn: cert.certificateArn } } },
      ],
    ],
  };
  const names = Object.keys(factors);
  const pairsOf = (row: number[]) => names.flatMap((_, i) => names.slice(i + 1).map((__, k) => `${i}:${row[i]}|${i + k + 1}:${row[i + k + 1]}`));
  const uncovered = new Set<string>();
  for (let i = 0; i < names.length; i++)
    for (let j = i + 1; j < names.length; j++)
      for (let a = 0; a < factors[names[i]!]!.length; a++) for (let b = 0; b < factors[names[j]!]!.length; b++) uncovered.add(`${i}:${a}|${j}:${b}`);
  const rows: number[][] = [];
  while (uncovered.size) {
    // greedy: start from the first uncovered pair, then pick each other factor's value that covers most
    const [first] = uncovered;
    const [[fi, fa], [fj, fb]] = first!.split('|').map((x) => x.split(':').map(Number)) as [[number, number], [number, number]];
    const row = names.map(() => 0);
    row[fi] = fa;
    row[fj] = fb;
    for (let i = 0; i < names.length; i++) {
      if (i === fi || i === fj) continue;
      let best = 0;
      let bestGain = -1;
      for (let v = 0; v < factors[names[i]!]!.length; v++) {
        row[i] = v;
        const gain = pairsOf(row).filter((p) => uncovered.has(p)).length;
        if (gain > bestGain) [best, bestGain] = [v, gain];
      }
      row[i] = best;
    }
    for (const p of pairsOf(row)) uncovered.delete(p);
    rows.push(row);
  }
  it(`all pairs of option values (${rows.length} stacks) pass cdk-nag`, () => {
    expect(rows.length).toBeLessThan(20);
    for (const row of rows) {
      let props: BerthStackProps = {};
      const label = row.map((v, i) => factors[names[i]!]![v]![0]).join(', ');
      for (const [i, v] of row.entries()) {
        const f = factors[names[i]!]![v]![1];
        props = typeof f === 'function' ? f(props) : { ...props, ...f };
      }
      const { stack } = build(props);
      expect(nagErrors(stack), label).toEqual([]);
    }
  }, 600_000);
});
