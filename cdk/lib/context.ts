/**
 * The `-c` options of `cdk synth` / `cdk deploy`, read and checked before anything is
 * built (cdk/bin/app.ts): a value that cannot work — a typo in a flag's name included —
 * stops the synth with the reason, instead of failing at deploy time or being ignored.
 * Each construct's own validate*() checks the meaning (identity.ts, network.ts,
 * limits.ts, operations-options.ts, dashboard.ts, function.ts); here each string becomes its
 * type. README ("Deploying to AWS") and docs/operating.md ("Operating in AWS") list them all; a test pairs the
 * two lists.
 */
import type { BerthStackProps } from './berth-stack.js';
import { validateApiFront } from './api-front.js';
import { validateDashboardDomain } from './dashboard.js';
import { validateForest, type ForestDeploy, type LogLevel } from './function.js';
import { parseRouteThrottles, parseThrottle } from './limits.js';
import { parseInsights } from './operations-options.js';
import { parseTableCapacity } from './capacity.js';

/** every option Berth reads, with what it takes */
export const CONTEXT_OPTIONS: Record<string, string> = {
  stackName: 'the stack name (default Berth)',
  nag: 'true | false: cdk-nag AwsSolutions checks (default true)',
  identity: 'keystone | jwt | insecure-none-tests-only',
  jwtIssuer: 'https URL',
  jwtAudience: 'client id[,…]',
  claimMapping: 'JSON',
  keystoneUrl: 'https URL',
  keystoneUsername: 'name',
  keystonePasswordSecretArn: 'Secrets Manager ARN',
  keystoneProject: 'name',
  keystoneSecretKmsKeyArn: 'KMS key ARN',
  authorizerCacheTtl: 'seconds, 0-300',
  logLevel: 'TRACE … SILENT',
  logSampleRate: '0-1',
  sourceMaps: 'true | false',
  alarmEmail: 'address[,…]',
  alarmTopicArn: 'SNS topic ARN',
  alarms: 'on | off',
  dashboard: 'true | false',
  insights: 'true | throttled | false',
  baremetalScheduler: 'database | placement',
  forestMemoryMb: 'MB, 1024-10240',
  provisionedConcurrency: 'whole number, 0-1000',
  forestDeploy: 'all-at-once | linear',
  tableCapacity: 'on-demand | provisioned:<max read units>:<max write units>',
  vpc: 'create',
  vpcId: 'vpc-…',
  vpcSubnetIds: 'subnet-…,subnet-…',
  vpcRouteTableIds: 'rtb-…[,…]',
  vpcEndpoints: 'create | none',
  keystoneCidr: 'IPv4 CIDR',
  throttle: 'RATE:BURST',
  routeThrottle: 'JSON {"<api>:<path>": "RATE:BURST"}',
  publicThrottle: 'RATE:BURST',
  projectRateLimit: 'RATE[:BURST]',
  rateLimitExemptRoles: 'role[,…]',
  dashboardDomain: 'domain name',
  dashboardCertificateArn: 'ACM certificate ARN (us-east-1)',
  wafWebAclArn: 'WAFv2 web ACL ARN (CLOUDFRONT scope, us-east-1)',
  apiDomains: 'placement domain,baremetal domain',
  apiCertificateArn: 'ACM certificate ARN (us-east-1)',
  eventBus: 'EventBridge bus name or ARN (default: the stack makes one)',
  historyRetentionDays: 'days the allocation history keeps a closed interval',
};

export class ContextError extends Error {}

/**
 * Context keys that are not Berth's options but legitimately reach the app: CDK's own
 * (`aws:cdk:…`, `@aws-cdk/…` feature flags, cdk.json's), lookups cached in
 * cdk.context.json (`availability-zones:account=…`), and the CLI's (`cdk-…`).
 */
function foreign(key: string): boolean {
  return key.includes(':') || key.startsWith('@') || key.startsWith('cdk') || key.startsWith('aws-cdk');
}

const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The stack's props from the app's context (`get` returns a context value or undefined); throws ContextError. */
export function readContext(keys: string[], get: (key: string) => unknown): { id: string; props: BerthStackProps; nag: boolean } {
  const unknown = keys.filter((k) => !foreign(k) && !(k in CONTEXT_OPTIONS));
  if (unknown.length) {
    throw new ContextError(
      `unknown option ${unknown.map((k) => `-c ${k}`).join(', ')}: Berth's options are ${Object.keys(CONTEXT_OPTIONS).join(', ')}`,
    );
  }
  const ctx = (k: string): string | undefined => {
    const v = get(k);
    return v === undefined || v === null ? undefined : String(v);
  };
  /** true or false (cdk.json may hold a boolean), nothing else */
  const flag = (k: string): boolean | undefined => {
    const v = ctx(k);
    if (v === undefined || v === 'true' || v === 'false') return v === undefined ? undefined : v === 'true';
    throw new ContextError(`-c ${k}=${v}: expected true or false`);
  };
  /** a number, written as one */
  const num = (k: string): number | undefined => {
    const v = ctx(k);
    if (v === undefined) return undefined;
    const n = v.trim() === '' ? Number.NaN : Number(v);
    if (!Number.isFinite(n)) throw new ContextError(`-c ${k}=${v}: expected a number (${CONTEXT_OPTIONS[k]})`);
    return n;
  };
  /** a whole number within [min, max] */
  const whole = (k: string, min: number, max: number): number | undefined => {
    const n = num(k);
    if (n !== undefined && !(Number.isInteger(n) && n >= min && n <= max)) {
      throw new ContextError(`-c ${k}=${ctx(k)}: expected a whole number from ${min} to ${max}`);
    }
    return n;
  };
  const guard = <T>(f: () => T): T => {
    try {
      return f();
    } catch (e) {
      if (e instanceof ContextError) throw e;
      // the constructs' own config errors say what is wrong already
      throw new ContextError((e as Error).message);
    }
  };

  const stackName = ctx('stackName') ?? 'Berth';
  // CloudFormation's rule for stack names
  if (!/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName)) {
    throw new ContextError(`-c stackName=${stackName}: a stack name starts with a letter and holds letters, digits and hyphens (at most 128)`);
  }
  const nag = flag('nag') ?? true;
  const vpc = ctx('vpc');
  if (vpc !== undefined && vpc !== 'create')
    throw new ContextError(`-c vpc=${vpc}: expected create (or -c vpcId=vpc-… -c vpcSubnetIds=… for an existing VPC)`);
  const alarms = ctx('alarms');
  if (alarms !== undefined && alarms !== 'on' && alarms !== 'off') throw new ContextError(`-c alarms=${alarms}: expected on or off`);
  const endpoints = ctx('vpcEndpoints');
  const projectRateLimit = ctx('projectRateLimit');
  const throttle = ctx('throttle');
  const publicThrottle = ctx('publicThrottle');

  const props: BerthStackProps = {
    identity: {
      mode: ctx('identity') as never,
      jwtIssuer: ctx('jwtIssuer'),
      jwtAudience: ctx('jwtAudience') === undefined ? undefined : list(ctx('jwtAudience')),
      claimMapping: ctx('claimMapping'),
      keystoneUrl: ctx('keystoneUrl'),
      keystoneUsername: ctx('keystoneUsername'),
      keystonePasswordSecretArn: ctx('keystonePasswordSecretArn'),
      keystoneProject: ctx('keystoneProject'),
      keystoneSecretKmsKeyArn: ctx('keystoneSecretKmsKeyArn'),
      authorizerCacheTtlS: whole('authorizerCacheTtl', 0, 300),
    },
    functions: {
      logLevel: ctx('logLevel')?.toUpperCase() as LogLevel | undefined,
      logSampleRate: num('logSampleRate'),
      sourceMaps: flag('sourceMaps'),
    },
    operations: {
      alarmEmails: list(ctx('alarmEmail')),
      alarmTopicArn: ctx('alarmTopicArn'),
      dashboard: flag('dashboard'),
      insights: guard(() => parseInsights(ctx('insights'))),
      alarms: alarms === undefined ? undefined : alarms === 'on',
    },
    baremetalScheduler: ctx('baremetalScheduler'),
    feed: { eventBus: ctx('eventBus'), historyRetentionDays: num('historyRetentionDays') },
    tableCapacity: guard(() => parseTableCapacity(ctx('tableCapacity'))),
    forest: {
      memoryMb: whole('forestMemoryMb', 1024, 10240),
      provisionedConcurrency: whole('provisionedConcurrency', 0, 1000),
      deploy: guard(() => {
        validateForest({ deploy: ctx('forestDeploy') });
        return ctx('forestDeploy') as ForestDeploy | undefined;
      }),
    },
    network: {
      create: vpc === 'create',
      vpcId: ctx('vpcId'),
      subnetIds: ctx('vpcSubnetIds') === undefined ? undefined : list(ctx('vpcSubnetIds')),
      routeTableIds: ctx('vpcRouteTableIds') === undefined ? undefined : list(ctx('vpcRouteTableIds')),
      endpoints: endpoints as never,
      keystoneCidr: ctx('keystoneCidr'),
    },
    limits: guard(() => ({
      stage: throttle === undefined ? undefined : parseThrottle('throttle', throttle),
      publicRoutes: publicThrottle === undefined ? undefined : parseThrottle('publicThrottle', publicThrottle),
      routes: parseRouteThrottles(ctx('routeThrottle')),
      project: projectRateLimit === undefined ? undefined : parseThrottle('projectRateLimit', projectRateLimit, true),
      exemptRoles: list(ctx('rateLimitExemptRoles')),
    })),
    dashboardDomain: guard(() => validateDashboardDomain(ctx('dashboardDomain'), ctx('dashboardCertificateArn'))),
    apiFront: guard(() =>
      validateApiFront(ctx('wafWebAclArn'), ctx('apiDomains') === undefined ? undefined : list(ctx('apiDomains')), ctx('apiCertificateArn')),
    ),
  };
  return { id: stackName, props, nag };
}
