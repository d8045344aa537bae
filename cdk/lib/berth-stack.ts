/**
 * Berth in one stack: the DynamoDB table, the Placement HTTP API (one Lambda per
 * resource family, cdk/lib/placement-api.ts), the bare-metal HTTP API, the
 * node-allocation state machine, and the scheduled maintenance function
 * (cdk/lib/maintenance.ts).
 */
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer, HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { PLACEMENT_ROUTES } from '../../functions/placement/routes.js';
import { GSIS, TABLE_KEYS, TTL_ATTRIBUTE } from '../../functions/store/ddb/table.js';
import { ChangeFeed, validateFeed, type FeedOptions } from './feed.js';
import { BAREMETAL_SCHEDULERS, type BaremetalScheduler } from '../../functions/config.js';
import { BerthFunction, setFunctionSettings, validateForest, type ForestDeploy, type FunctionSettings } from './function.js';
import { RATE_LIMIT_ACCESS, grantTableAccess } from './permissions.js';
import { BaremetalApi } from './baremetal.js';
import { DeployFinished } from './deploy-finished.js';
import { tableBilling, type TableCapacity } from './capacity.js';
import { Dashboard } from './dashboard.js';
import { Operations } from './operations.js';
import { contributorInsights, validateOperations, type OperationsOptions } from './operations-options.js';
import {
  INSECURE_NO_AUTH,
  authorizerCacheTtl,
  grantKeystoneSecret,
  identityEnvironment,
  validateIdentity,
  type IdentityOptions,
} from './identity.js';
import { BerthNetwork, setFunctionNetwork, validateNetwork, type NetworkOptions } from './network.js';
import { rateLimitEnvironment, validateLimits, type LimitOptions } from './limits.js';
import { BAREMETAL_ROUTES } from '../../functions/baremetal/routes.js';
import type { DashboardDomain } from './dashboard.js';
import { ApiFront, type ApiFrontOptions } from './api-front.js';
import { buildPlacementApi } from './placement-api.js';
import { buildMaintenance } from './maintenance.js';
import { configureStage } from './stage.js';

export type { IdentityOptions } from './identity.js';

export interface BerthStackProps extends StackProps {
  /** required: there is no default (cdk/lib/identity.ts) */
  identity?: Partial<IdentityOptions>;
  /** API Gateway throttles (stage, routes, public routes) and the per-project bucket (cdk/lib/limits.ts) */
  limits?: Partial<LimitOptions>;
  /** the functions in a VPC (cdk/lib/network.ts; `-c vpc=create` or `-c vpcId=…`) */
  network?: NetworkOptions;
  /** the dashboard on a domain of its own with an ACM certificate (TLS 1.2 at least; cdk/lib/dashboard.ts) */
  dashboardDomain?: DashboardDomain;
  /** each API behind CloudFront with a WAF web ACL (cdk/lib/api-front.ts; `-c wafWebAclArn`) */
  apiFront?: ApiFrontOptions;
  /** retain the table on stack deletion (default true) */
  retainData?: boolean;
  /** alarm notifications, dashboard, Contributor Insights (docs/operating.md, "Operating in AWS"); the alarms exist either way */
  operations?: Partial<OperationsOptions>;
  /** deployment-wide function settings (log level, sampling); unset ones: FUNCTION_DEFAULTS (cdk/lib/function.ts) */
  functions?: Partial<FunctionSettings>;
  /** where bare-metal allocations find and reserve nodes (-c baremetalScheduler; docs/baremetal.md, "Bare metal through Placement") */
  baremetalScheduler?: string;
  /** the functions that keep the provider forest in memory (docs/consistency.md, "Memory at a million providers") */
  forest?: {
    /** MB of memory (default 3008: a million providers need ~1.5 GB of heap, and CPU grows with memory) */
    memoryMb?: number;
    /** pre-initialised environments per forest family, for deployments that want no cold starts (default 0) */
    provisionedConcurrency?: number;
    /** how a release reaches them (FOREST_DEPLOYS; default all-at-once, `linear` for a large cloud) */
    deploy?: ForestDeploy;
  };
  /** the change feed and allocation history (cdk/lib/feed.ts): an existing bus, the history's retention */
  feed?: FeedOptions;
  /** the table's capacity mode (cdk/lib/capacity.ts; `-c tableCapacity`; default on demand) */
  tableCapacity?: TableCapacity;
}

export class BerthStack extends Stack {
  readonly table: dynamodb.TableV2;
  readonly placementApi: apigw.HttpApi;
  readonly maintenance: lambda.Function;
  /** where the maintenance runs that failed (or never started) leave their event */
  readonly maintenanceFailures: sqs.Queue;
  readonly operations: Operations;
  readonly feed: ChangeFeed;

  constructor(scope: Construct, id: string, props: BerthStackProps = {}) {
    super(scope, id, props);
    // fail closed before building anything: no identity mode, no stack
    const identity = validateIdentity(props.identity);
    setFunctionSettings(this, props.functions);
    const operations = validateOperations(props.operations);
    const bmScheduler = validateScheduler(props.baremetalScheduler);
    validateForest(props.forest);
    const limits = validateLimits(props.limits, {
      placement: PLACEMENT_ROUTES.map((r) => r.path),
      baremetal: BAREMETAL_ROUTES.map((r) => r.path),
    });
    const networkOptions = validateNetwork(props.network);
    if (networkOptions) {
      // before any function: BerthFunction places itself in the VPC it finds here
      const network = new BerthNetwork(this, 'Network', { options: networkOptions, keystoneUrl: identity.keystoneUrl });
      setFunctionNetwork(this, network);
    }
    const feedOptions = validateFeed(props.feed);
    const capacity = props.tableCapacity ?? { mode: 'on-demand' };
    const retain = props.retainData ?? true;

    this.table = new dynamodb.TableV2(this, 'Table', {
      partitionKey: { name: TABLE_KEYS.pk, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sk, type: dynamodb.AttributeType.STRING },
      // -c tableCapacity: on demand (default) or provisioned with auto scaling (cdk/lib/capacity.ts)
      billing: tableBilling(capacity),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: retain,
      encryption: dynamodb.TableEncryptionV2.awsManagedKey(),
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // the change feed reads it (cdk/lib/feed.ts)
      dynamoStream: dynamodb.StreamViewType.NEW_IMAGE,
      // -c insights=true|throttled: on the table and (inherited) on every index
      contributorInsightsSpecification: contributorInsights(operations.insights),
      removalPolicy: retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      globalSecondaryIndexes: GSIS.map((g) => ({
        indexName: g.name,
        partitionKey: { name: g.pk, type: dynamodb.AttributeType.STRING },
        sortKey: { name: g.sk, type: dynamodb.AttributeType.STRING },
      })),
    });

    let authorizer: apigw.IHttpRouteAuthorizer | undefined;
    if (identity.mode === 'jwt') {
      authorizer = new HttpJwtAuthorizer('JwtAuthorizer', identity.jwtIssuer!, { jwtAudience: identity.jwtAudience! });
    } else if (identity.mode === 'keystone') {
      const fn = new BerthFunction(this, 'KeystoneAuthorizer', {
        entry: 'functions/authorizer/keystone.ts',
        description: 'Keystone token authorizer',
        table: this.table,
        access: 'none',
        memoryMb: 512,
        // in a VPC: the security group that reaches Keystone and Secrets Manager only
        network: 'keystone',
        environment: {
          KEYSTONE_URL: identity.keystoneUrl!,
          KEYSTONE_USERNAME: identity.keystoneUsername ?? 'placement',
          KEYSTONE_PROJECT: identity.keystoneProject ?? 'service',
          KEYSTONE_PASSWORD_SECRET_ARN: identity.keystonePasswordSecretArn!,
          // API Gateway's cache (below) is the one window a revoked token keeps working in:
          // an in-process cache on top would extend it (each API's authorizer refills from it)
          KEYSTONE_CACHE_TTL_S: '0',
        },
      });
      grantKeystoneSecret(this, fn.fn, identity);
      authorizer = new HttpLambdaAuthorizer('KeystoneAuthorizer', fn.fn, {
        responseTypes: [HttpLambdaResponseType.SIMPLE],
        identitySource: ['$request.header.X-Auth-Token'],
        resultsCacheTtl: authorizerCacheTtl(identity),
      });
    } else if (identity.mode !== INSECURE_NO_AUTH) {
      throw new Error(`identity mode ${identity.mode} builds no authorizer`);
    }
    // the API functions' settings: identity, and the per-project bucket when it is on
    const identityEnv = { ...identityEnvironment(identity), ...rateLimitEnvironment(limits) };
    const env: Record<string, string> = {
      PLACEMENT_POLICY_MODE: 'secure-rbac',
      // Placement refuses writes to bare-metal nodes' consumers in that mode
      ...(bmScheduler === 'placement' ? { BAREMETAL_SCHEDULER: 'placement' } : {}),
      ...identityEnv,
    };

    // ---------------------------------------------------------------- Placement
    const forestMemoryMb = props.forest?.memoryMb ?? 3008;
    this.placementApi = buildPlacementApi(this, {
      id,
      table: this.table,
      authorizer,
      environment: env,
      projectRateLimit: !!limits.project,
      configureStage: (api, lg) => configureStage(api, 'placement', lg, limits),
      forest: { memoryMb: forestMemoryMb, provisionedConcurrency: props.forest?.provisionedConcurrency, deploy: props.forest?.deploy },
    });

    const baremetal = new BaremetalApi(this, 'Baremetal', {
      table: this.table,
      authorizer,
      environment: identityEnv,
      configureStage: (api, lg) => configureStage(api, 'baremetal', lg, limits),
      scheduler: bmScheduler,
      forestMemoryMb,
    });
    new CfnOutput(this, 'BaremetalUrl', { value: baremetal.url });
    if (limits.project) {
      for (const [family, fn] of baremetal.families) if (family !== 'root') grantTableAccess(fn.fn, this.table, RATE_LIMIT_ACCESS.baremetal);
    }
    // route settings name routes by key: the stage must wait for them
    for (const api of [this.placementApi, baremetal.api]) {
      const stage = api.defaultStage!.node.defaultChild as apigw.CfnStage;
      for (const r of this.node.findAll()) if (r instanceof apigw.CfnRoute && r.apiId === api.apiId) stage.addDependency(r);
    }

    // ---------------------------------------------------------------- maintenance
    const maintenance = buildMaintenance(this, { table: this.table, baremetal, forestMemoryMb });
    this.maintenance = maintenance.fn;
    this.maintenanceFailures = maintenance.failures;
    // -c wafWebAclArn: CloudFront and the web ACL in front of each API; the dashboard uses them too
    const fronts = props.apiFront && {
      placement: new ApiFront(this, 'PlacementFront', { api: this.placementApi, name: 'placement', options: props.apiFront }),
      baremetal: new ApiFront(this, 'BaremetalFront', { api: baremetal.api, name: 'baremetal', options: props.apiFront }),
    };
    new Dashboard(this, 'Dashboard', {
      placementApi: this.placementApi,
      baremetalApi: baremetal.api,
      urls: fronts && { placement: fronts.placement.url, baremetal: fronts.baremetal.url },
      auth: identity.mode === 'jwt' ? 'bearer' : 'token',
      domain: props.dashboardDomain,
    });
    this.feed = new ChangeFeed(this, 'ChangeFeed', { table: this.table, options: feedOptions, alarms: operations.alarms });
    // last: the alarms watch every function built above
    this.operations = new Operations(this, 'Operations', {
      options: operations,
      table: this.table,
      indexNames: GSIS.map((g) => g.name),
      apis: { placement: this.placementApi, baremetal: baremetal.api },
      machines: Object.fromEntries(baremetal.machines),
      maintenance: maintenance.fn,
      maintenanceFailures: this.maintenanceFailures,
      alarms: this.feed.alarms,
    });
    new CfnOutput(this, 'EventBusName', { value: this.feed.bus.eventBusName });
    // after every function: tell the maintenance function the deploy has finished (the
    // table's layout is recorded, a migration from the previous release's layout opens)
    new DeployFinished(this, 'DeployFinished', { maintenance: maintenance.fn });
    new CfnOutput(this, 'PlacementUrl', { value: this.placementApi.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
  }
}

export const DEFAULT_TIMEOUT = Duration.seconds(29);

/** -c baremetalScheduler that cannot work stops the synth, as the other flags do */
export class SchedulerConfigError extends Error {}

export function validateScheduler(v: string | undefined): BaremetalScheduler {
  if (v === undefined || v === '') return 'database';
  if (!(BAREMETAL_SCHEDULERS as readonly string[]).includes(v)) {
    throw new SchedulerConfigError(`-c baremetalScheduler=${v}: expected one of ${BAREMETAL_SCHEDULERS.join(', ')}`);
  }
  return v as BaremetalScheduler;
}
