/**
 * cdk app: `npx cdk synth` / `npx cdk deploy`. Context options:
 *   -c identity=jwt -c jwtIssuer=https://... -c jwtAudience=aud1,aud2 [-c claimMapping='{"roles":"groups"}']
 *   -c identity=keystone -c keystoneUrl=https://keystone/v3 -c keystoneUsername=placement
 *      -c keystonePasswordSecretArn=arn:aws:secretsmanager:...
 *   -c nag=false   (cdk-nag AwsSolutions checks run by default)
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { BerthStack } from '../lib/berth-stack.js';
import { acknowledgeNagFindings } from '../lib/nag.js';
import { SAM_CONTEXT } from '../lib/sam.js';

// the metadata AWS SAM CLI reads to find each function's code (cdk/lib/sam.ts)
const app = new App({ postCliContext: SAM_CONTEXT });
const identity = app.node.tryGetContext('identity') ?? 'none';
// environment-agnostic: nothing is looked up at synth time, the same template deploys anywhere
const stack = new BerthStack(app, app.node.tryGetContext('stackName') ?? 'Berth', {
  identity: {
    mode: identity,
    jwtIssuer: app.node.tryGetContext('jwtIssuer'),
    jwtAudience: String(app.node.tryGetContext('jwtAudience') ?? '')
      .split(',')
      .filter(Boolean),
    claimMapping: app.node.tryGetContext('claimMapping'),
    keystoneUrl: app.node.tryGetContext('keystoneUrl'),
    keystoneUsername: app.node.tryGetContext('keystoneUsername'),
    keystonePasswordSecretArn: app.node.tryGetContext('keystonePasswordSecretArn'),
    keystoneProject: app.node.tryGetContext('keystoneProject'),
  },
});
if (app.node.tryGetContext('nag') !== 'false') {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeNagFindings(stack);
}
app.synth();
