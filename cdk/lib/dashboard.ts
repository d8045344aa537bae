/**
 * The read-only dashboard (dashboard/public: plain files, no build step) as a static site: a private S3
 * bucket behind CloudFront with Origin Access Control (only the distribution can read
 * it), HTTPS only, security headers; `config.json` next to the page names the API URLs
 * (the page reads it at start, as it does from local/dashboard.ts locally). Both HTTP
 * APIs get a CORS configuration for the distribution's origin — read-only (GET) and
 * only the headers the page sends — which API Gateway applies itself (preflights are
 * answered before any authorizer runs; locally PLACEMENT_CORS_ALLOWED_ORIGIN does the
 * same in the functions).
 */
import { CfnOutput, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Construct, type IConstruct } from 'constructs';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './function.js';

/** the page's files, uploaded as they are */
export const DASHBOARD_SITE = join(ROOT, 'dashboard', 'public');

export interface DashboardProps {
  placementApi: apigw.HttpApi;
  baremetalApi?: apigw.HttpApi;
  /** how the page sends its token: X-Auth-Token (Keystone / none) or Authorization: Bearer (JWT) */
  auth?: 'token' | 'bearer';
}

/** Headers the dashboard sends (dashboard/public/api.js) and the ones it may read back. */
const ALLOW_HEADERS = ['accept', 'x-auth-token', 'authorization', 'openstack-api-version', 'x-openstack-ironic-api-version'];
const EXPOSE_HEADERS = ['openstack-api-version', 'x-openstack-request-id', 'x-openstack-ironic-api-version', 'x-berth-layout'];

export class Dashboard extends Construct {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;
  readonly url: string;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    this.bucket = new s3.Bucket(this, 'Site', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // the deployment removes its files when the stack is deleted, then the bucket goes
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.distribution = new cloudfront.Distribution(this, 'Cdn', {
      comment: 'Berth dashboard',
      defaultRootObject: 'index.html',
      minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: cloudfront.ResponseHeadersPolicy.SECURITY_HEADERS,
      },
    });
    this.url = `https://${this.distribution.distributionDomainName}`;

    const config: Record<string, unknown> = { placement: props.placementApi.apiEndpoint, token: '', auth: props.auth ?? 'token' };
    if (props.baremetalApi) config.baremetal = props.baremetalApi.apiEndpoint;
    new s3deploy.BucketDeployment(this, 'Deploy', {
      sources: [s3deploy.Source.asset(DASHBOARD_SITE), s3deploy.Source.jsonData('config.json', config)],
      destinationBucket: this.bucket,
      distribution: this.distribution,
      // every file of the page (its modules included) and config.json, fresh after a deployment;
      // and `/`, which CloudFront caches apart from /index.html (the default root object)
      distributionPaths: ['/', ...[...readdirSync(DASHBOARD_SITE).sort(), 'config.json'].map((f) => `/${f}`)],
      memoryLimit: 256,
      retainOnDelete: false,
    });

    for (const api of [props.placementApi, props.baremetalApi]) {
      if (!api) continue;
      const cfn = api.node.defaultChild as apigw.CfnApi;
      cfn.corsConfiguration = {
        allowOrigins: [this.url],
        allowMethods: ['GET'],
        allowHeaders: ALLOW_HEADERS,
        exposeHeaders: EXPOSE_HEADERS,
        maxAge: Duration.hours(1).toSeconds(),
      };
    }

    acknowledge(this.bucket, [
      [
        'AwsSolutions-S1',
        'The bucket only holds the dashboard’s public static files (dashboard/public and config.json); CloudFront is the only reader (OAC), so access logs would record only CloudFront’s fetches.',
      ],
    ]);
    acknowledge(this.distribution, [
      ['AwsSolutions-CFR1', 'The dashboard is an operator tool with no geographic audience restriction; the APIs it calls are authenticated.'],
      [
        'AwsSolutions-CFR2',
        'Static files only: every call with data goes to the authenticated APIs (which have their own throttling), so a WAF adds cost without protecting anything.',
      ],
      ['AwsSolutions-CFR3', 'Static files only; API calls are logged by the APIs’ access logs.'],
      [
        'AwsSolutions-CFR4',
        'The distribution uses its default *.cloudfront.net certificate (no custom domain), whose security policy cannot be raised; give it a custom domain with an ACM certificate to enforce TLSv1.2_2021 (set below).',
      ],
    ]);
    // the BucketDeployment's provider function (aws-cdk-lib's own code): object-level
    // wildcards on the CDK asset bucket (read) and on this site bucket (sync), nothing else
    const stack = Stack.of(this);
    const siteArn = `<${stack.getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)}.Arn>/*`;
    const deployer = stack.node.findAll().filter((c) => c.node.path.includes('/Custom::CDKBucketDeployment'));
    const why =
      'CDK’s BucketDeployment copies the dashboard’s files from the CDK asset bucket into the site bucket: S3 object-level wildcards on those two buckets only.';
    for (const c of deployer) {
      acknowledge(
        c,
        [
          'Action::s3:GetObject*',
          'Action::s3:GetBucket*',
          'Action::s3:List*',
          'Action::s3:DeleteObject*',
          'Action::s3:Abort*',
          'Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*',
          `Resource::${siteArn}`,
        ].map((e) => [`AwsSolutions-IAM5[${e}]`, why]),
      );
    }

    new CfnOutput(stack, 'DashboardUrl', { value: this.url });
  }
}

function acknowledge(scope: IConstruct, findings: [string, string][]): void {
  for (const [id, reason] of findings) Validations.of(scope).acknowledge({ id: `AwsSolutions::${id}`, reason });
}
