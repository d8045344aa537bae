import { App, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { BerthStack } from '../../../cdk/lib/berth-stack.js';
import { FOREST_FAMILIES } from '../../../cdk/lib/placement-api.js';
import { INSECURE_NO_AUTH, type IdentityOptions } from '../../../cdk/lib/identity.js';
import { acknowledgeNagFindings } from '../../../cdk/lib/nag.js';
import { AUTOSCALING_MIN, AUTOSCALING_TARGET } from '../../../cdk/lib/capacity.js';
import { GSIS } from '../../../functions/store/ddb/table.js';
import { PLACEMENT_ROUTES } from '../../../functions/placement/routes.js';
import { PLACEMENT_FAMILY_MODULES } from '../../../functions/placement/index.js';

let template: Template;
let stack: BerthStack;

beforeAll(() => {
  // skip esbuild bundling: the template is what is under test here
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  stack = new BerthStack(app, 'Test', { identity: { mode: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] } });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeNagFindings(stack);
  template = Template.fromStack(stack);
}, 120_000);

describe('the CDK stack', () => {
  it('has one on-demand table with PITR, deletion protection, TTL and both GSIs', () => {
    template.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: Match.arrayWith([Match.objectLike({ IndexName: 'gsi1' }), Match.objectLike({ IndexName: 'gsi2' })]),
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      Replicas: [Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true })],
    });
  });

  it('runs every function on the newest Node.js Lambda offers (nodejs24.x) / arm64 with tracing and Powertools logs', () => {
    const fns = template.findResources('AWS::Lambda::Function');
    const ours = Object.values(fns).filter(
      (f) => (f as any).Properties.Runtime !== undefined && String((f as any).Properties.Description ?? '').length,
    );
    expect(ours.length).toBeGreaterThan(0);
    for (const f of ours) {
      expect((f as any).Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        // Powertools writes JSON lines itself; Lambda's JSON format would impose its own level
        // (test/unit/cdk/operations.test.ts)
        LoggingConfig: expect.objectContaining({ LogFormat: 'Text' }),
      });
    }
  });

  it('gives each implemented Placement family its own function and routes every Placement path', () => {
    const fns = template.findResources('AWS::Lambda::Function');
    const descriptions = Object.values(fns).map((f) => (f as any).Properties.Description);
    for (const family of Object.keys(PLACEMENT_FAMILY_MODULES)) expect(descriptions).toContain(`Placement ${family}`);
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map((r) => (r as any).Properties.RouteKey);
    for (const r of PLACEMENT_ROUTES.filter((x) => x.family in PLACEMENT_FAMILY_MODULES)) expect(routes).toContain(`ANY ${r.path}`);
    expect(routes).toContain('$default');
  });

  it('protects every route but the version document with the configured authorizer', () => {
    // one authorizer per HTTP API (Placement, bare metal)
    template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 2);
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map((r) => (r as any).Properties);
    for (const r of routes) {
      // the version documents (/, and the bare-metal /v1) and the 404 catch-all are public
      if (r.RouteKey === 'ANY /' || r.RouteKey === 'ANY /v1' || r.RouteKey === '$default') expect(r.AuthorizationType ?? 'NONE').toBe('NONE');
      else expect(r.AuthorizationType).toBe('JWT');
    }
  });

  it('throttles and access-logs the API stage', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingBurstLimit: 2000, ThrottlingRateLimit: 1000 },
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
    });
  });

  it('gives read-only families read-only table access', () => {
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).map((p) => JSON.stringify(p));
    const writers = policies.filter((p) => p.includes('dynamodb:PutItem'));
    const readers = policies.filter((p) => p.includes('dynamodb:GetItem') && !p.includes('dynamodb:PutItem'));
    expect(writers.length).toBeGreaterThan(0);
    expect(readers.length + writers.length).toBeGreaterThan(0);
  });

  it('has no unacknowledged cdk-nag AwsSolutions error', () => {
    const errors = Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*'));
    expect(errors).toEqual([]);
  });
});

describe('the Keystone identity option', () => {
  it('puts a cached Lambda REQUEST authorizer on X-Auth-Token, reading the service password from Secrets Manager', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const ks = new BerthStack(app, 'Ks', {
      identity: {
        mode: 'keystone',
        keystoneUrl: 'https://keystone.example.com/v3',
        keystoneUsername: 'placement',
        keystonePasswordSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:placement-AbCdEf',
      },
    });
    const t = Template.fromStack(ks);
    t.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'REQUEST',
      EnableSimpleResponses: true,
      IdentitySource: ['$request.header.X-Auth-Token'],
      // the longest a revoked token keeps working (and a denial sticks): docs/security.md, "Authorizer windows"
      AuthorizerResultTtlInSeconds: 60,
    });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'Keystone token authorizer',
      Environment: {
        Variables: Match.objectLike({
          KEYSTONE_URL: 'https://keystone.example.com/v3',
          KEYSTONE_PASSWORD_SECRET_ARN: Match.stringLikeRegexp('secret:placement'),
          // no in-process cache on top of API Gateway's: it would lengthen the window
          KEYSTONE_CACHE_TTL_S: '0',
        }),
      },
    });
    const policies = JSON.stringify(t.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('secretsmanager:GetSecretValue');
    const routes = Object.values(t.findResources('AWS::ApiGatewayV2::Route')).map((r) => (r as any).Properties);
    expect(routes.filter((r) => r.AuthorizationType === 'CUSTOM').length).toBeGreaterThan(0);
  });
});

describe('the maintenance function', () => {
  it('runs every minute from EventBridge Scheduler with only the access its tasks need', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    const fns = template.findResources('AWS::Lambda::Function', { Properties: { Description: Match.stringLikeRegexp('^Scheduled maintenance') } });
    expect(Object.keys(fns)).toHaveLength(1);
    const role = (Object.values(fns)[0] as any).Properties.Role['Fn::GetAtt'][0];
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      (p as any).Properties.Roles.some((r: any) => r.Ref === role),
    );
    const text = JSON.stringify(policies);
    // the migration's items, the state machines it resumes, and the changes larger than one
    // transaction it finishes or undoes (any Placement item: never a bare-metal one); nothing else
    expect(text).toContain('LEGACYALLOC#*');
    expect(text).toContain('INTENTS#*');
    expect(text).toContain('states:StartExecution');
    expect(text).toContain('states:DescribeExecution');
    // a Scan only for the layout migration (store/layout/migrate.ts): the base table, never an index
    const scans = policies
      .flatMap((p) => (p as any).Properties.PolicyDocument.Statement)
      .filter((st: any) => JSON.stringify(st.Action).includes('dynamodb:Scan'));
    expect(scans).toHaveLength(1);
    expect(scans[0].Action).toBe('dynamodb:Scan');
    expect(JSON.stringify(scans[0].Resource)).not.toContain('/index/');
    // the statement that reaches every Placement item reaches no bare-metal one
    const statements = policies.flatMap((p) => (p as any).Properties.PolicyDocument.Statement);
    const placementWide = statements.filter((st: any) => JSON.stringify(st).includes('"RPNAME#*"'));
    expect(placementWide).toHaveLength(1);
    expect(JSON.stringify(placementWide)).not.toContain('BM');
  });
});

describe('the end of a deploy', () => {
  it('tells the maintenance function, after every function, once per release', () => {
    const [cr] = Object.values(template.findResources('Custom::AWS')) as any[];
    expect(cr).toBeDefined();
    // Create is the SDK call as JSON, joined with the function's name
    const text = (cr.Properties.Create['Fn::Join'][1] as unknown[]).map((x) => (typeof x === 'string' ? x : '<ref>')).join('');
    const call = JSON.parse(text);
    expect(call).toMatchObject({ service: 'Lambda', action: 'invoke', parameters: { FunctionName: '<ref>', InvocationType: 'Event' } });
    expect(JSON.parse(call.parameters.Payload)).toMatchObject({ berth: 'deployed', release: expect.stringMatching(/^[0-9a-f]{16}$/) });
    // the physical id names the release: a hash of every function's code
    expect(call.physicalResourceId.id).toMatch(/^berth-deployed-[0-9a-f]{16}$/);
    expect(JSON.stringify(cr.Properties.Update)).toBe(JSON.stringify(cr.Properties.Create));
    // it depends on every function of the stack (not on its own provider's)
    const fns = Object.entries(template.findResources('AWS::Lambda::Function')).filter(([, f]: [string, any]) => f.Properties.Description);
    for (const [id] of fns) expect(cr.DependsOn, id).toContain(id);
    // the maintenance function, and only it, may be invoked by it
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).map((p: any) => JSON.stringify(p.Properties.PolicyDocument));
    const invoking = policies.filter((p) => p.includes('lambda:InvokeFunction') && p.includes('MaintenanceFn'));
    expect(invoking.length).toBeGreaterThan(0);
  });
});

describe('allocation candidates in AWS', () => {
  it('caps answers so they fit a Lambda response, with the memory the solver wants', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'Placement allocation-candidates',
      MemorySize: 3008,
      Environment: { Variables: Match.objectLike({ MAX_ALLOCATION_CANDIDATES: '1000' }) },
    });
  });
});

describe('identity fails closed at synth time', () => {
  const KS: Partial<IdentityOptions> = {
    mode: 'keystone',
    keystoneUrl: 'https://keystone.example.com/v3',
    keystonePasswordSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:placement-AbCdEf',
  };
  const JWT: Partial<IdentityOptions> = {
    mode: 'jwt',
    jwtIssuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc',
    jwtAudience: ['client'],
  };
  const build = (identity: Partial<IdentityOptions> | undefined, id = 'Bad') =>
    new BerthStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), id, identity === undefined ? {} : { identity });

  it('refuses a missing or unknown identity mode, naming the choices', () => {
    expect(() => build(undefined)).toThrow(/no identity mode.*-c identity=keystone.*-c identity=jwt/);
    for (const mode of ['none', 'Keystone', 'authorizer', '']) {
      expect(() => build({ mode: mode as never }), mode).toThrow(mode ? /unknown identity mode/ : /no identity mode/);
    }
  });

  it('JWT: the issuer is an https URL, an audience is given, the claim mapping parses', () => {
    expect(() => build({ ...JWT, jwtIssuer: undefined })).toThrow(/jwtIssuer is required/);
    expect(() => build({ ...JWT, jwtIssuer: 'http://issuer.example.com' })).toThrow(/jwtIssuer must be an https/);
    expect(() => build({ ...JWT, jwtIssuer: 'issuer.example.com' })).toThrow(/not a URL/);
    expect(() => build({ ...JWT, jwtAudience: [] })).toThrow(/jwtAudience is required/);
    expect(() => build({ ...JWT, jwtAudience: [''] })).toThrow(/jwtAudience is required/);
    expect(() => build({ ...JWT, claimMapping: '{"project": 5}' })).toThrow(/claimMapping/);
    expect(() => build({ ...JWT, claimMapping: '{"projet": "tenant"}' })).toThrow(/unknown key/);
    expect(() => build({ ...KS, claimMapping: '{"project": "tenant"}' })).toThrow(/jwt only/);
  });

  it('Keystone: an https URL and a complete Secrets Manager ARN', () => {
    expect(() => build({ ...KS, keystoneUrl: undefined })).toThrow(/keystoneUrl is required/);
    expect(() => build({ ...KS, keystoneUrl: 'http://keystone.example.com/v3' })).toThrow(/keystoneUrl must be an https/);
    expect(() => build({ ...KS, keystonePasswordSecretArn: undefined })).toThrow(/keystonePasswordSecretArn is required/);
    for (const arn of [
      'arn:aws:secretsmanager:eu-west-1:123456789012:secret:placement', // partial: no suffix
      'arn:aws:ssm:eu-west-1:123456789012:parameter/placement-AbCdEf',
      'placement-password',
    ]) {
      expect(() => build({ ...KS, keystonePasswordSecretArn: arn }), arn).toThrow(/not a complete Secrets Manager secret ARN/);
    }
    expect(() => build({ ...KS, authorizerCacheTtlS: 3600 })).toThrow(/authorizerCacheTtl/);
  });

  it('cdk synth itself (cdk/bin/app.ts) stops with the reason', () => {
    const run = (context: Record<string, string>) =>
      spawnSync('node_modules/.bin/tsx', ['cdk/bin/app.ts'], {
        env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify(context), CDK_OUTDIR: '/nonexistent-berth-cdk-out' },
        encoding: 'utf8',
        timeout: 60_000,
      });
    const none = run({});
    expect(none.status).toBe(1);
    expect(none.stderr).toContain('refusing to synthesise: Berth has no identity mode');
    const typo = run({ identity: 'jwt ' });
    expect(typo.status).toBe(1);
    expect(typo.stderr).toContain('unknown identity mode');
    const http = run({ identity: 'keystone', keystoneUrl: 'http://ks/v3', keystonePasswordSecretArn: String(KS.keystonePasswordSecretArn) });
    expect(http.status).toBe(1);
    expect(http.stderr).toContain('keystoneUrl must be an https');
  }, 120_000);

  it('every API function is told to trust the authorizer only; the authorizer TTL can be shortened', () => {
    const t = Template.fromStack(build({ ...KS, authorizerCacheTtlS: 10 }, 'Ttl'));
    t.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', { AuthorizerResultTtlInSeconds: 10 });
    const fns = Object.values(t.findResources('AWS::Lambda::Function')).map((f) => (f as any).Properties);
    const api = fns.filter((f) => /^(Placement|Bare metal) /.test(String(f.Description)) && !/step/.test(String(f.Description)));
    expect(api.length).toBeGreaterThan(10);
    for (const f of api) {
      expect(f.Environment.Variables.AUTH_STRATEGY, f.Description).toBe('authorizer');
      expect(f.Environment.Variables.BERTH_INSECURE_NOAUTH, f.Description).toBeUndefined();
    }
  });

  it('the insecure test-only mode says so: no authorizer, header identity switched on, and it fails cdk-nag (APIG4)', () => {
    const t = Template.fromStack(build({ mode: INSECURE_NO_AUTH }, 'Open'));
    t.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 0);
    t.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'Placement traits',
      Environment: { Variables: Match.objectLike({ AUTH_STRATEGY: 'noauth2', BERTH_INSECURE_NOAUTH: 'true' }) },
    });
    // with the AwsSolutions checks (cdk synth's default) it does not synthesise at all
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const open = new BerthStack(app, 'OpenNag', { identity: { mode: INSECURE_NO_AUTH } });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    acknowledgeNagFindings(open);
    expect(() => Template.fromStack(open)).toThrow(/AwsSolutions-APIG4/);
  });
});

describe('functions that hold the provider forest', () => {
  const fnOf = (t: Template, description: string) =>
    Object.values(t.findResources('AWS::Lambda::Function')).find((f) => (f as any).Properties.Description === description) as any;

  it('get memory and heap for a million providers and load the forest while they initialise', () => {
    for (const family of FOREST_FAMILIES) {
      const p = fnOf(template, `Placement ${family}`).Properties;
      expect(p.MemorySize).toBe(3008);
      expect(p.Environment.Variables.NODE_OPTIONS).toContain('--max-old-space-size=2624');
      expect(p.Environment.Variables.SNAPSHOT_PREWARM).toBe('true');
    }
    const usages = fnOf(template, 'Placement usages').Properties;
    expect(usages.MemorySize).toBe(1024);
    expect(usages.Environment.Variables.SNAPSHOT_PREWARM).toBeUndefined();
    // the maintenance function writes the forest image from a forest of its own
    expect(fnOf(template, 'Scheduled maintenance: orphan recovery, incomplete-consumer migration').Properties.MemorySize).toBe(3008);
    // no provisioned concurrency unless asked for
    template.resourceCountIs('AWS::Lambda::Alias', 0);
  });

  it('takes memory and provisioned concurrency from the deployment, and routes to the provisioned alias', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const s = new BerthStack(app, 'Pc', {
      identity: { mode: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] },
      forest: { memoryMb: 6144, provisionedConcurrency: 2 },
    });
    const t = Template.fromStack(s);
    expect(fnOf(t, 'Placement allocation-candidates').Properties.MemorySize).toBe(6144);
    t.resourceCountIs('AWS::Lambda::Alias', FOREST_FAMILIES.length);
    t.allResourcesProperties('AWS::Lambda::Alias', { Name: 'live', ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: 2 } });
    // the candidates route invokes the alias, not the unqualified function
    const integrations = Object.values(t.findResources('AWS::ApiGatewayV2::Integration')).map((i) =>
      JSON.stringify((i as any).Properties.IntegrationUri),
    );
    const aliasIds = Object.keys(t.findResources('AWS::Lambda::Alias'));
    expect(integrations.filter((u) => aliasIds.some((id) => u.includes(id))).length).toBeGreaterThanOrEqual(FOREST_FAMILIES.length);
  });

  it('-c tableCapacity=provisioned:R:W: the table and every index auto scaled from the minimum to those maxima at the target', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const s = new BerthStack(app, 'Provisioned', {
      identity: { mode: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] },
      tableCapacity: { mode: 'provisioned', maxRead: 20000, maxWrite: 8000 },
    });
    const table = Object.values(Template.fromStack(s).findResources('AWS::DynamoDB::GlobalTable'))[0] as any;
    expect(table.Properties.BillingMode).toBe('PROVISIONED');
    const scaled = (max: number) => ({
      MinCapacity: AUTOSCALING_MIN,
      MaxCapacity: max,
      TargetTrackingScalingPolicyConfiguration: { TargetValue: AUTOSCALING_TARGET * 100 },
    });
    expect(table.Properties.WriteProvisionedThroughputSettings.WriteCapacityAutoScalingSettings).toEqual(scaled(8000));
    expect(table.Properties.Replicas[0].ReadProvisionedThroughputSettings.ReadCapacityAutoScalingSettings).toEqual(scaled(20000));
    for (const g of GSIS) {
      const index = table.Properties.GlobalSecondaryIndexes.find((x: any) => x.IndexName === g.name);
      expect(index.WriteProvisionedThroughputSettings.WriteCapacityAutoScalingSettings, g.name).toEqual(scaled(8000));
      const read = table.Properties.Replicas[0].GlobalSecondaryIndexes.find((x: any) => x.IndexName === g.name);
      expect(read.ReadProvisionedThroughputSettings.ReadCapacityAutoScalingSettings, g.name).toEqual(scaled(20000));
    }
    // the default stays on demand
    const d = new BerthStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'OnDemand', {
      identity: { mode: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] },
    });
    expect((Object.values(Template.fromStack(d).findResources('AWS::DynamoDB::GlobalTable'))[0] as any).Properties.BillingMode).toBe(
      'PAY_PER_REQUEST',
    );
  });

  it('-c forestDeploy=linear: each forest family behind `live`, shifted by CodeDeploy 10 % a minute; DeployFinished after the shifts', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const s = new BerthStack(app, 'Linear', {
      identity: { mode: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] },
      forest: { deploy: 'linear' },
    });
    const t = Template.fromStack(s);
    const aliases = t.findResources('AWS::Lambda::Alias');
    expect(Object.keys(aliases)).toHaveLength(FOREST_FAMILIES.length);
    for (const a of Object.values(aliases) as any[]) {
      expect(a.Properties.Name).toBe('live');
      // no provisioned concurrency unless asked for
      expect(a.Properties.ProvisionedConcurrencyConfig).toBeUndefined();
      // CloudFormation hands the alias's update to CodeDeploy and waits for it
      expect(a.UpdatePolicy.CodeDeployLambdaAliasUpdate).toBeDefined();
    }
    const groups = Object.values(t.findResources('AWS::CodeDeploy::DeploymentGroup')) as any[];
    expect(groups).toHaveLength(FOREST_FAMILIES.length);
    for (const g of groups) expect(g.Properties.DeploymentConfigName).toBe('CodeDeployDefault.LambdaLinear10PercentEvery1Minute');
    // the routes invoke the aliases
    const integrations = Object.values(t.findResources('AWS::ApiGatewayV2::Integration')).map((i) =>
      JSON.stringify((i as any).Properties.IntegrationUri),
    );
    for (const id of Object.keys(aliases))
      expect(
        integrations.some((u) => u.includes(id)),
        id,
      ).toBe(true);
    // the deploy is told it finished (the layout migration may open) only after every shift
    const finished = Object.values(t.findResources('Custom::AWS')) as any[];
    expect(finished).toHaveLength(1);
    for (const id of Object.keys(aliases)) expect(finished[0].DependsOn, id).toContain(id);
    // the non-forest families are not shifted
    expect(JSON.stringify(groups)).not.toContain('usages');
  });
});
