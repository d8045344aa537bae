/**
 * The dashboard's static site in the stack's template: a private bucket read only by
 * CloudFront through Origin Access Control, HTTPS, config.json with the API URLs, CORS
 * on both APIs for exactly the distribution's origin (read-only), and cdk-nag clean.
 */
import { App, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BerthStack } from '../../../cdk/lib/berth-stack.js';
import { DASHBOARD_SITE } from '../../../cdk/lib/dashboard.js';
import { acknowledgeNagFindings } from '../../../cdk/lib/nag.js';

let template: Template;
let stack: BerthStack;
let outdir: string;

function synth(mode: 'jwt' | 'keystone') {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const s = new BerthStack(app, `Dash${mode}`, {
    identity:
      mode === 'jwt'
        ? { mode, jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] }
        : {
            mode,
            keystoneUrl: 'https://keystone.example.com/v3',
            keystonePasswordSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:placement-AbCdEf',
          },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeNagFindings(s);
  const t = Template.fromStack(s);
  return { stack: s, template: t, outdir: app.synth().directory };
}

/** config.json as staged in the cloud assembly (API URLs are deploy-time markers) */
function stagedConfig(outdir: string): Record<string, unknown> {
  const dir = readdirSync(outdir).find((d) => d.startsWith('asset.') && existsSync(join(outdir, d, 'config.json')));
  expect(dir).toBeDefined();
  return JSON.parse(readFileSync(join(outdir, dir!, 'config.json'), 'utf8'));
}

beforeAll(() => {
  ({ stack, template, outdir } = synth('jwt'));
}, 120_000);

const ref = (o: unknown) => JSON.stringify(o);

describe('dashboard static site', () => {
  it('keeps the bucket private, encrypted, TLS-only and readable only by the distribution (OAC)', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
    });
    template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: Match.objectLike({ OriginAccessControlOriginType: 's3', SigningBehavior: 'always', SigningProtocol: 'sigv4' }),
    });
    // the bucket policy: deny non-TLS, allow s3:GetObject to cloudfront.amazonaws.com for this distribution only
    const policies = Object.values(template.findResources('AWS::S3::BucketPolicy')).flatMap((p: any) => p.Properties.PolicyDocument.Statement);
    expect(policies.some((s: any) => s.Effect === 'Deny' && ref(s.Condition).includes('aws:SecureTransport'))).toBe(true);
    const read = policies.find((s: any) => s.Principal?.Service === 'cloudfront.amazonaws.com');
    expect(read.Action).toBe('s3:GetObject');
    expect(ref(read.Condition)).toContain('AWS:SourceArn');
    expect(policies.some((s: any) => s.Effect === 'Allow' && (s.Principal === '*' || s.Principal?.AWS === '*'))).toBe(false);
  });

  it('serves index.html over HTTPS only, GET/HEAD, with security headers', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultRootObject: 'index.html',
        DefaultCacheBehavior: Match.objectLike({
          ViewerProtocolPolicy: 'redirect-to-https',
          AllowedMethods: ['GET', 'HEAD'],
          ResponseHeadersPolicyId: Match.anyValue(),
        }),
        Origins: [Match.objectLike({ OriginAccessControlId: Match.anyValue(), S3OriginConfig: { OriginAccessIdentity: '' } })],
      }),
    });
    const outputs = template.findOutputs('DashboardUrl');
    expect(ref(Object.values(outputs)[0])).toContain('DomainName');
  });

  it('deploys the page with a config.json naming both API URLs (bearer auth with the JWT authorizer)', () => {
    const deploys = Object.values(template.findResources('Custom::CDKBucketDeployment')) as any[];
    expect(deploys.length).toBe(1);
    const props = deploys[0].Properties;
    expect(props.SourceObjectKeys.length).toBe(2); // the public/ directory and config.json
    expect(props.DistributionPaths).toEqual(expect.arrayContaining(['/config.json', '/index.html']));
    // every module of the page too: a deployment never leaves a stale one cached
    for (const f of readdirSync(DASHBOARD_SITE)) expect(props.DistributionPaths).toContain(`/${f}`);
    expect(props.DistributionPaths).toContain('/main.js');
    // the page as browsers ask for it: CloudFront caches `/` apart from /index.html
    expect(props.DistributionPaths).toContain('/');
    // jsonData with tokens: the markers resolve to the two API endpoints
    const markers = ref(props.SourceMarkers);
    const placementApi = stack.getLogicalId(stack.placementApi.node.defaultChild as any);
    expect(markers).toContain(placementApi);
    const apis = Object.keys(template.findResources('AWS::ApiGatewayV2::Api'));
    expect(apis.length).toBe(2);
    for (const id of apis) expect(markers).toContain(id);
    const config = stagedConfig(outdir);
    expect(config).toEqual({ placement: '<<marker:0xbaba:0>>', baremetal: '<<marker:0xbaba:1>>', token: '', auth: 'bearer' });
  });

  it('allows the distribution’s origin, and only it, to read both APIs (CORS, GET)', () => {
    const apis = Object.values(template.findResources('AWS::ApiGatewayV2::Api')) as any[];
    expect(apis.length).toBe(2);
    const dist = stack.getLogicalId(stack.node.findAll().find((c) => c.node.id === 'Cdn')!.node.defaultChild as any);
    for (const api of apis) {
      const cors = api.Properties.CorsConfiguration;
      expect(cors.AllowMethods).toEqual(['GET']);
      expect(cors.AllowOrigins.length).toBe(1);
      expect(ref(cors.AllowOrigins[0])).toContain(dist);
      expect(cors.AllowHeaders).toEqual(
        expect.arrayContaining(['x-auth-token', 'authorization', 'openstack-api-version', 'x-openstack-ironic-api-version']),
      );
    }
  });

  it('passes cdk-nag (every finding is fixed or acknowledged with a reason)', () => {
    const errors = Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-'));
    expect(errors.map((e) => `${e.id}: ${String(e.entry.data).slice(0, 120)}`)).toEqual([]);
  });

  it('sends X-Auth-Token without the JWT authorizer', () => {
    expect(stagedConfig(synth('keystone').outdir).auth).toBe('token');
  });
});
