/**
 * An optional WAF in front of the APIs (`-c wafWebAclArn=…`): HTTP APIs cannot be
 * associated with a web ACL, so each API gets a CloudFront distribution in front of it
 * with the operator's CLOUDFRONT-scope web ACL (such an ACL lives in us-east-1, where a
 * stack in another region cannot create it: it is taken by its ARN). Nothing is cached
 * (every answer depends on the caller's token and microversion); every viewer header but
 * Host goes to the API (with caching off, CloudFront forwards Authorization and
 * X-Auth-Token too); only HTTPS, to the viewer and to the origin (TLS 1.2). With
 * `-c apiDomains=placement.example.com,baremetal.example.com -c apiCertificateArn=…` the
 * fronts serve those names with TLSv1.2_2021 (on their *.cloudfront.net names CloudFront
 * keeps TLSv1).
 *
 * The execute-api URLs stay reachable beside the fronts (an HTTP API cannot refuse
 * traffic that did not come through CloudFront without a custom domain of its own), so
 * API Gateway's throttles and the per-project limit remain the limits that hold for every
 * path; links and Location headers the APIs build name the execute-api domain
 * (docs/security.md, "Errors and links": the APIs never trust X-Forwarded-Host).
 */
import { Aws, CfnOutput, Stack, Validations } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import { Construct } from 'constructs';

export interface ApiFrontOptions {
  /** a CLOUDFRONT-scope WAFv2 web ACL (arn:aws:wafv2:us-east-1:<account>:global/webacl/<name>/<id>) */
  wafWebAclArn: string;
  /** the fronts' own names, with an ACM certificate (us-east-1) covering both */
  domains?: { placement: string; baremetal: string; certificateArn: string };
}

export class ApiFrontConfigError extends Error {}

const WEB_ACL = /^arn:aws(-[a-z]+)*:wafv2:us-east-1:\d{12}:global\/webacl\/[A-Za-z0-9_-]{1,128}\/[0-9a-f-]{36}$/;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const CLOUDFRONT_CERTIFICATE = /^arn:aws(-[a-z]+)*:acm:us-east-1:\d{12}:certificate\/[0-9a-f-]{36}$/;

/** `-c wafWebAclArn`, `-c apiDomains`, `-c apiCertificateArn`, checked; undefined: no front */
export function validateApiFront(wafWebAclArn?: string, apiDomains?: string[], apiCertificateArn?: string): ApiFrontOptions | undefined {
  if (wafWebAclArn === undefined) {
    if (apiDomains?.length || apiCertificateArn !== undefined)
      throw new ApiFrontConfigError('apiDomains and apiCertificateArn name the WAF fronts: add -c wafWebAclArn=…');
    return undefined;
  }
  if (!WEB_ACL.test(wafWebAclArn)) {
    throw new ApiFrontConfigError(
      `wafWebAclArn ${JSON.stringify(wafWebAclArn)} is not the ARN of a CloudFront web ACL (arn:aws:wafv2:us-east-1:<account>:global/webacl/<name>/<id>: CloudFront uses ACLs of scope CLOUDFRONT, created in us-east-1)`,
    );
  }
  if (!apiDomains?.length && apiCertificateArn === undefined) return { wafWebAclArn };
  if (apiDomains?.length !== 2 || !apiCertificateArn) {
    throw new ApiFrontConfigError(
      'apiDomains names two domains (Placement’s, then bare metal’s) and goes with apiCertificateArn, a us-east-1 certificate covering both',
    );
  }
  for (const d of apiDomains) if (!DOMAIN.test(d)) throw new ApiFrontConfigError(`apiDomains: ${JSON.stringify(d)} is not a domain name`);
  if (apiDomains[0] === apiDomains[1]) throw new ApiFrontConfigError('apiDomains: each API needs a domain of its own');
  if (!CLOUDFRONT_CERTIFICATE.test(apiCertificateArn)) {
    throw new ApiFrontConfigError(`apiCertificateArn ${JSON.stringify(apiCertificateArn)} is not an ACM certificate ARN in us-east-1`);
  }
  return { wafWebAclArn, domains: { placement: apiDomains[0]!, baremetal: apiDomains[1]!, certificateArn: apiCertificateArn } };
}

export interface ApiFrontProps {
  api: apigw.HttpApi;
  name: 'placement' | 'baremetal';
  options: ApiFrontOptions;
}

/** One API behind CloudFront and the web ACL; `url` is what clients (and the dashboard) use. */
export class ApiFront extends Construct {
  readonly distribution: cloudfront.Distribution;
  readonly url: string;

  constructor(scope: Construct, id: string, props: ApiFrontProps) {
    super(scope, id);
    const { api, name, options } = props;
    const domain = options.domains?.[name];
    this.distribution = new cloudfront.Distribution(this, 'Cdn', {
      comment: `Berth ${name} API behind WAF`,
      webAclId: options.wafWebAclArn,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      ...(domain
        ? {
            domainNames: [domain],
            certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', options.domains!.certificateArn),
            minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
            sslSupportMethod: cloudfront.SSLMethod.SNI,
          }
        : {}),
      defaultBehavior: {
        origin: new origins.HttpOrigin(`${api.apiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}`, {
          protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
        }),
        // an API client does not follow a redirect of a POST: plain HTTP is refused outright
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
    });
    this.url = `https://${domain ?? this.distribution.distributionDomainName}`;
    const why = (id: string, reason: string) => Validations.of(this.distribution).acknowledge({ id: `AwsSolutions::${id}`, reason });
    why('AwsSolutions-CFR1', 'The APIs serve an OpenStack cloud’s clients wherever they are; access is decided by the tokens and the web ACL.');
    why('AwsSolutions-CFR3', 'Every request is in the API’s own access log (API Gateway), with its status, latency and integration error.');
    if (!domain) {
      why(
        'AwsSolutions-CFR4',
        'On its default *.cloudfront.net certificate CloudFront keeps TLSv1 whatever is set; -c apiDomains with -c apiCertificateArn enforces TLSv1.2_2021.',
      );
    }
    new CfnOutput(Stack.of(this), name === 'placement' ? 'PlacementFrontUrl' : 'BaremetalFrontUrl', { value: this.url });
  }
}
