/**
 * cdk app: `npx cdk synth` / `npx cdk deploy`. The identity mode is required (there is no
 * default; cdk/lib/identity.ts checks every setting and refuses with the reason):
 *   -c identity=keystone -c keystoneUrl=https://keystone/v3 -c keystonePasswordSecretArn=arn:aws:secretsmanager:...
 *      [-c keystoneUsername=placement] [-c keystoneProject=service] [-c authorizerCacheTtl=60]
 *      [-c keystoneSecretKmsKeyArn=arn:aws:kms:…:key/…]   (a password secret under a customer-managed key)
 *   -c identity=jwt -c jwtIssuer=https://... -c jwtAudience=aud1,aud2 [-c claimMapping='{"roles":"groups"}']
 *   -c identity=insecure-none-tests-only   (no authentication at all: throwaway test stacks, with -c nag=false)
 *   -c nag=false   (cdk-nag AwsSolutions checks run by default)
 *   -c forestMemoryMb=3008 -c provisionedConcurrency=N   (functions that hold the provider forest)
 *   -c logLevel=WARN -c logSampleRate=0.01 -c sourceMaps=false   (every function; docs/operating.md, "Operating in AWS")
 *   -c alarmEmail=ops@example.com[,…] -c alarmTopicArn=arn:aws:sns:… | -c alarms=off   (where the alarms notify)
 *   -c dashboard=true -c insights=true|throttled   (CloudWatch dashboard; DynamoDB Contributor Insights, with the dashboard)
 *   -c baremetalScheduler=database|placement   (bare metal through Placement: docs/baremetal.md; switching runs a migration)
 *   -c vpc=create | -c vpcId=vpc-… -c vpcSubnetIds=… [-c vpcRouteTableIds=…] [-c vpcEndpoints=none] [-c keystoneCidr=…]
 *   -c throttle=RATE:BURST -c routeThrottle='{"placement:/allocation_candidates":"100:200"}' -c publicThrottle=RATE:BURST
 *   -c projectRateLimit=RATE[:BURST] [-c rateLimitExemptRoles=service]   (per-project limit: cdk/lib/limits.ts)
 *   -c dashboardDomain=… -c dashboardCertificateArn=arn:aws:acm:us-east-1:…   (the dashboard with TLS 1.2 at least)
 *   -c wafWebAclArn=arn:aws:wafv2:us-east-1:…:global/webacl/… [-c apiDomains=p.example.com,b.example.com -c apiCertificateArn=…]
 *      (each API behind CloudFront with a WAF web ACL: cdk/lib/api-front.ts)
 *   -c eventBus=<name or ARN> -c historyRetentionDays=400   (the change feed: an existing bus; the allocation history's retention)
 * cdk/lib/context.ts reads and checks them all; an unknown -c option is refused.
 */
import { App, Validations } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { BerthStack, SchedulerConfigError } from '../lib/berth-stack.js';
import { ContextError, readContext } from '../lib/context.js';
import { FunctionSettingsError } from '../lib/function.js';
import { IdentityConfigError } from '../lib/identity.js';
import { LimitsConfigError } from '../lib/limits.js';
import { NetworkConfigError } from '../lib/network.js';
import { OperationsConfigError } from '../lib/operations-options.js';
import { FeedConfigError } from '../lib/feed.js';
import { acknowledgeNagFindings } from '../lib/nag.js';
import { SAM_CONTEXT } from '../lib/sam.js';

// the metadata AWS SAM CLI reads to find each function's code (cdk/lib/sam.ts)
const app = new App({ postCliContext: SAM_CONTEXT });
// every key the app was given: cdk.json's, the CLI's -c, cdk.context.json's (as App reads them:
// from the environment, or a file when they are too long for it)
const overflow = process.env.CONTEXT_OVERFLOW_LOCATION_ENV;
const keys = Object.keys({ ...JSON.parse(process.env.CDK_CONTEXT_JSON ?? '{}'), ...(overflow ? JSON.parse(readFileSync(overflow, 'utf8')) : {}) });
let stack: BerthStack;
let nag = true;
try {
  const read = readContext(keys, (k) => app.node.tryGetContext(k));
  nag = read.nag;
  // environment-agnostic: nothing is looked up at synth time, the same template deploys anywhere
  stack = new BerthStack(app, read.id, read.props);
} catch (e) {
  if (
    !(
      e instanceof ContextError ||
      e instanceof IdentityConfigError ||
      e instanceof FunctionSettingsError ||
      e instanceof OperationsConfigError ||
      e instanceof SchedulerConfigError ||
      e instanceof NetworkConfigError ||
      e instanceof LimitsConfigError ||
      e instanceof FeedConfigError
    )
  )
    throw e;
  process.stderr.write(`\nBerth: refusing to synthesise: ${e.message}\n\n`);
  process.exit(1);
}
if (nag) {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeNagFindings(stack);
}
app.synth();
