/**
 * cdk app: `npx cdk synth` / `npx cdk deploy`. The identity mode is required (there is no
 * default; cdk/lib/identity.ts checks every setting and refuses with the reason):
 *   -c identity=keystone -c keystoneUrl=https://keystone/v3 -c keystonePasswordSecretArn=arn:aws:secretsmanager:...
 *      [-c keystoneUsername=placement] [-c keystoneProject=service] [-c authorizerCacheTtl=60]
 *   -c identity=jwt -c jwtIssuer=https://... -c jwtAudience=aud1,aud2 [-c claimMapping='{"roles":"groups"}']
 *   -c identity=insecure-none-tests-only   (no authentication at all: throwaway test stacks, with -c nag=false)
 *   -c nag=false   (cdk-nag AwsSolutions checks run by default)
 *   -c forestMemoryMb=3008 -c provisionedConcurrency=N   (functions that hold the provider forest)
 *   -c logLevel=WARN -c logSampleRate=0.01 -c sourceMaps=false   (every function; README, "Operating in AWS")
 *   -c alarmEmail=ops@example.com[,…] -c alarmTopicArn=arn:aws:sns:…   (where the alarms notify)
 *   -c dashboard=true -c insights=true|throttled   (CloudWatch dashboard; DynamoDB Contributor Insights, with the dashboard)
 *   -c baremetalScheduler=database|placement   (bare metal through Placement: docs/design.md; switching runs a migration)
 *   -c eventBus=<name or ARN> -c historyRetentionDays=400   (the change feed: an existing bus; the allocation history's retention)
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { BerthStack, SchedulerConfigError } from '../lib/berth-stack.js';
import { FunctionSettingsError, type LogLevel } from '../lib/function.js';
import { IdentityConfigError } from '../lib/identity.js';
import { OperationsConfigError, parseInsights } from '../lib/operations.js';
import { FeedConfigError } from '../lib/feed.js';
import { acknowledgeNagFindings } from '../lib/nag.js';
import { SAM_CONTEXT } from '../lib/sam.js';

// the metadata AWS SAM CLI reads to find each function's code (cdk/lib/sam.ts)
const app = new App({ postCliContext: SAM_CONTEXT });
const ctx = (k: string): string | undefined => {
  const v = app.node.tryGetContext(k);
  return v === undefined || v === null ? undefined : String(v);
};
const num = (k: string): number | undefined => (ctx(k) === undefined ? undefined : Number(ctx(k)));
/** a context flag: true or false (cdk.json may hold a boolean), nothing else */
class ContextFlagError extends Error {}
const flag = (k: string): boolean | undefined => {
  const v = ctx(k);
  if (v === undefined || v === 'true' || v === 'false') return v === undefined ? undefined : v === 'true';
  throw new ContextFlagError(`-c ${k}=${v}: expected true or false`);
};
const ttl = ctx('authorizerCacheTtl');
let stack: BerthStack;
try {
  // environment-agnostic: nothing is looked up at synth time, the same template deploys anywhere
  stack = new BerthStack(app, ctx('stackName') ?? 'Berth', {
    identity: {
      mode: ctx('identity') as never,
      jwtIssuer: ctx('jwtIssuer'),
      jwtAudience: (ctx('jwtAudience') ?? '').split(',').filter(Boolean),
      claimMapping: ctx('claimMapping'),
      keystoneUrl: ctx('keystoneUrl'),
      keystoneUsername: ctx('keystoneUsername'),
      keystonePasswordSecretArn: ctx('keystonePasswordSecretArn'),
      keystoneProject: ctx('keystoneProject'),
      authorizerCacheTtlS: ttl === undefined ? undefined : Number(ttl),
    },
    functions: {
      logLevel: ctx('logLevel')?.toUpperCase() as LogLevel | undefined,
      logSampleRate: num('logSampleRate'),
      sourceMaps: flag('sourceMaps'),
    },
    operations: {
      alarmEmails: (ctx('alarmEmail') ?? '')
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean),
      alarmTopicArn: ctx('alarmTopicArn'),
      dashboard: flag('dashboard'),
      insights: parseInsights(ctx('insights')),
    },
    baremetalScheduler: ctx('baremetalScheduler'),
    feed: { eventBus: ctx('eventBus'), historyRetentionDays: num('historyRetentionDays') },
    forest: {
      memoryMb: ctx('forestMemoryMb') === undefined ? undefined : Number(ctx('forestMemoryMb')),
      provisionedConcurrency: ctx('provisionedConcurrency') === undefined ? undefined : Number(ctx('provisionedConcurrency')),
    },
  });
} catch (e) {
  if (
    !(
      e instanceof IdentityConfigError ||
      e instanceof FunctionSettingsError ||
      e instanceof OperationsConfigError ||
      e instanceof ContextFlagError ||
      e instanceof SchedulerConfigError ||
      e instanceof FeedConfigError
    )
  )
    throw e;
  process.stderr.write(`\nBerth: refusing to synthesise: ${e.message}\n\n`);
  process.exit(1);
}
if (ctx('nag') !== 'false') {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeNagFindings(stack);
}
app.synth();
