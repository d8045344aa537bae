/**
 * Berth in one stack: the DynamoDB table, the Placement HTTP API (one Lambda per
 * resource family), the bare-metal HTTP API, the node-allocation state machine, and
 * the scheduled maintenance function.
 */
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { PLACEMENT_DEFAULT_FAMILY, PLACEMENT_FAMILIES, PLACEMENT_ROUTES } from '../../functions/placement/routes.js';
import { GSIS, TABLE_KEYS, TTL_ATTRIBUTE } from '../../functions/store/table.js';
import { BerthFunction, ROOT, type TableAccess } from './function.js';
import { acknowledgePublicRoute } from './nag.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface IdentityOptions {
  /** 'jwt': any OIDC issuer (e.g. Cognito); 'none': no authorizer (private networks only) */
  mode: 'jwt' | 'none';
  jwtIssuer?: string;
  jwtAudience?: string[];
  /** JSON claim mapping passed to the functions (see functions/http/identity.ts) */
  claimMapping?: string;
}

export interface BerthStackProps extends StackProps {
  identity?: IdentityOptions;
  /** API Gateway stage throttling (requests per second and burst) */
  throttle?: { rate: number; burst: number };
  /** retain the table on stack deletion (default true) */
  retainData?: boolean;
}

/** Which families only read the table. Everything else writes. */
const READ_ONLY: Record<string, TableAccess> = {
  root: 'none',
  usages: 'read',
  'allocation-candidates': 'read',
};

export class BerthStack extends Stack {
  readonly table: dynamodb.TableV2;
  readonly placementApi: apigw.HttpApi;

  constructor(scope: Construct, id: string, props: BerthStackProps = {}) {
    super(scope, id, props);
    const retain = props.retainData ?? true;

    this.table = new dynamodb.TableV2(this, 'Table', {
      partitionKey: { name: TABLE_KEYS.pk, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sk, type: dynamodb.AttributeType.STRING },
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: retain,
      encryption: dynamodb.TableEncryptionV2.awsManagedKey(),
      timeToLiveAttribute: TTL_ATTRIBUTE,
      removalPolicy: retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      globalSecondaryIndexes: GSIS.map((g) => ({
        indexName: g.name,
        partitionKey: { name: g.pk, type: dynamodb.AttributeType.STRING },
        sortKey: { name: g.sk, type: dynamodb.AttributeType.STRING },
      })),
    });

    const identity = props.identity ?? { mode: 'none' };
    const authorizer =
      identity.mode === 'jwt'
        ? new HttpJwtAuthorizer('JwtAuthorizer', identity.jwtIssuer ?? '', { jwtAudience: identity.jwtAudience ?? [] })
        : undefined;
    const env: Record<string, string> = { PLACEMENT_POLICY_MODE: 'secure-rbac' };
    if (identity.claimMapping) env.JWT_CLAIM_MAPPING = identity.claimMapping;

    // ---------------------------------------------------------------- Placement
    const accessLogs = new logs.LogGroup(this, 'PlacementAccessLogs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.placementApi = new apigw.HttpApi(this, 'PlacementApi', {
      apiName: `${id}-placement`,
      description: 'OpenStack Placement API (Berth)',
      createDefaultStage: true,
    });
    this.configureStage(this.placementApi, accessLogs, props.throttle);
    const families = new Map<string, BerthFunction>();
    for (const family of PLACEMENT_FAMILIES.filter((f) => existsSync(join(ROOT, `functions/placement/${f}.ts`)))) {
      families.set(
        family,
        new BerthFunction(this, `Placement-${family}`, {
          entry: `functions/placement/${family}.ts`,
          description: `Placement ${family}`,
          table: this.table,
          access: READ_ONLY[family] ?? 'readwrite',
          environment: env,
          memoryMb: family === 'allocation-candidates' ? 3008 : 1024,
        }),
      );
    }
    for (const route of PLACEMENT_ROUTES) {
      const fn = families.get(route.family)?.fn;
      if (!fn) continue;
      // every method reaches the family's function, which answers 405 with Allow itself
      const added = this.placementApi.addRoutes({
        path: route.path,
        methods: [apigw.HttpMethod.ANY],
        integration: new HttpLambdaIntegration(`Int-${route.family}-${route.path}`, fn),
        authorizer: route.path === '/' ? undefined : authorizer,
      });
      if (route.path === '/' || !authorizer) added.forEach(acknowledgePublicRoute);
    }
    // unmatched paths: Placement's own 404 from the root family
    const fallback = new apigw.HttpRoute(this, 'PlacementDefaultRoute', {
      httpApi: this.placementApi,
      routeKey: apigw.HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('Int-default', families.get(PLACEMENT_DEFAULT_FAMILY)!.fn),
    });
    acknowledgePublicRoute(fallback);

    new CfnOutput(this, 'PlacementUrl', { value: this.placementApi.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
  }

  private configureStage(api: apigw.HttpApi, logGroup: logs.LogGroup, throttle?: { rate: number; burst: number }) {
    const stage = api.defaultStage!.node.defaultChild as apigw.CfnStage;
    stage.defaultRouteSettings = {
      throttlingRateLimit: throttle?.rate ?? 1000,
      throttlingBurstLimit: throttle?.burst ?? 2000,
    };
    stage.accessLogSettings = {
      destinationArn: logGroup.logGroupArn,
      format: JSON.stringify({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        method: '$context.httpMethod',
        path: '$context.path',
        status: '$context.status',
        latencyMs: '$context.responseLatency',
        integrationError: '$context.integrationErrorMessage',
      }),
    };
  }
}

export const DEFAULT_TIMEOUT = Duration.seconds(29);
