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
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
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

/**
 * The dashboard on a domain of the operator's (`-c dashboardDomain=… -c
 * dashboardCertificateArn=…`): CloudFront then enforces its TLSv1.2_2021 policy. On its
 * default *.cloudfront.net certificate CloudFront sets the policy to TLSv1 whatever the
 * template asks, so without a domain viewers may still connect with TLS 1.0.
 */
export interface DashboardDomain {
  domainName: string;
  /** an ACM certificate in us-east-1 (CloudFront's region) covering domainName */
  certificateArn: string;
}

export class DashboardConfigError extends Error {}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const CLOUDFRONT_CERTIFICATE = /^arn:aws(-[a-z]+)*:acm:us-east-1:\d{12}:certificate\/[0-9a-f-]{36}$/;

/** `-c dashboardDomain` with `-c dashboardCertificateArn`, both or neither; undefined: the default domain */
export function validateDashboardDomain(domainName: string | undefined, certificateArn: string | undefined): DashboardDomain | undefined {
  if (domainName === undefined && certificateArn === undefined) return undefined;
  if (!domainName || !certificateArn) {
    throw new DashboardConfigError('dashboardDomain and dashboardCertificateArn go together: the domain and its ACM certificate (in us-east-1)');
  }
  if (!DOMAIN.test(domainName))
    throw new DashboardConfigError(`dashboardDomain ${JSON.stringify(domainName)} is not a domain name (lower case, e.g. berth.example.com)`);
  if (!CLOUDFRONT_CERTIFICATE.test(certificateArn)) {
    throw new DashboardConfigError(
      `dashboardCertificateArn ${JSON.stringify(certificateArn)} is not an ACM certificate ARN in us-east-1 (CloudFront uses certificates from that region only)`,
    );
  }
  return { domainName, certificateArn };
}

export interface DashboardProps {
  placementApi: apigw.HttpApi;
  baremetalApi?: apigw.HttpApi;
  /** how the page sends its token: X-Auth-Token (Keystone / none) or Authorization: Bearer (JWT) */
  auth?: 'token' | 'bearer';
  /** a domain of the operator's with its certificate (TLS 1.2 at least); default: the distribution's own */
  domain?: DashboardDomain;
  /** the URLs the page calls instead of the APIs' own (the WAF fronts, cdk/lib/api-front.ts) */
  urls?: { placement: string; baremetal: string };
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
      // CloudFront honours a security policy only with a certificate of the operator's
      // (DashboardDomain); on its default certificate it keeps TLSv1 whatever is set
      ...(props.domain
        ? {
            minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
            domainNames: [props.domain.domainName],
            certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
            sslSupportMethod: cloudfront.SSLMethod.SNI,
          }
        : {}),
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: cloudfront.ResponseHeadersPolicy.SECURITY_HEADERS,
      },
    });
    this.url = `https://${props.domain?.domainName ?? this.distribution.distributionDomainName}`;

    const config: Record<string, unknown> = {
      placement: props.urls?.placement ?? props.placementApi.apiEndpoint,
      token: '',
      auth: props.auth ?? 'token',
    };
    if (props.baremetalApi) config.baremetal = props.urls?.baremetal ?? props.baremetalApi.apiEndpoint;
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
    ]);
    if (!props.domain) {
      // answered with -c dashboardDomain / dashboardCertificateArn; without them it cannot be
      acknowledge(this.distribution, [
        [
          'AwsSolutions-CFR4',
          'The distribution uses its default *.cloudfront.net certificate, on which CloudFront keeps TLSv1 whatever is set; -c dashboardDomain with -c dashboardCertificateArn enforces TLSv1.2_2021 (docs/operating.md, "Limits per client, and the dashboard on your domain").',
        ],
      ]);
    }
    // the BucketDeployment's provider function (aws-cdk-lib's own code): object-level
    // wildcards on the CDK asset bucket (read) and on this site bucket (sync), nothing else
    const stack = Stack.of(this);
    const siteArn = `<${stack.getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)}.Arn>/*`;
    const deployer = stack.node.findAll().filter((c) => c.node.path.includes('/Custom::CDKBucketDeployment'));
    const why =
      'CDK’s BucketDeployment copies the dashboard’s files from the CDK asset bucket into the site bucket: S3 object-level wildcards on those two buckets only.';
    for (const c of deployer) {
      // its runtime is aws-cdk-lib's choice for its own (Python) handler, not Berth's
      acknowledge(c, [
        [
          'AwsSolutions-L1',
          'CDK’s BucketDeployment handler (aws-cdk-lib’s own code and runtime) copies the dashboard’s files at deploy time; Berth’s own functions run the newest Node.js runtime.',
        ],
      ]);
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
