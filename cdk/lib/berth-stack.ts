/**
 * Berth in one stack: the DynamoDB table, the Placement HTTP API (one Lambda per
 * resource family), the bare-metal HTTP API, the node-allocation state machine, and
 * the scheduled maintenance function.
 */
import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer, HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as lambdaDestinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { PLACEMENT_DEFAULT_FAMILY, PLACEMENT_FAMILIES, PLACEMENT_FOREST_FAMILIES, PLACEMENT_ROUTES } from '../../functions/placement/routes.js';
import { GSIS, TABLE_KEYS, TTL_ATTRIBUTE } from '../../functions/store/ddb/table.js';
import { ChangeFeed, validateFeed, type FeedOptions } from './feed.js';
import { BAREMETAL_SCHEDULERS, type BaremetalScheduler } from '../../functions/config.js';
import { BerthFunction, setFunctionSettings, validateForest, type ForestDeploy, type FunctionSettings } from './function.js';
import { MAINTENANCE_ACCESS, PLACEMENT_ACCESS, RATE_LIMIT_ACCESS, grantTableAccess } from './permissions.js';
import { acknowledgePublicRoute } from './nag.js';
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
import { PUBLIC_PATHS, rateLimitEnvironment, stageThrottles, validateLimits, type LimitOptions } from './limits.js';
import { BAREMETAL_ROUTES } from '../../functions/baremetal/routes.js';
import type { DashboardDomain } from './dashboard.js';
import { ApiFront, type ApiFrontOptions } from './api-front.js';

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

/** Placement families that answer from the provider forest (and so load it when they start): their routes' `forest` operations */
export const FOREST_FAMILIES: readonly string[] = PLACEMENT_FOREST_FAMILIES;

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
    const accessLogs = new logs.LogGroup(this, 'PlacementAccessLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.placementApi = new apigw.HttpApi(this, 'PlacementApi', {
      apiName: `${id}-placement`,
      description: 'OpenStack Placement API (Berth)',
      createDefaultStage: true,
    });
    this.configureStage(this.placementApi, 'placement', accessLogs, limits);
    const families = new Map<string, BerthFunction>();
    const forestMemoryMb = props.forest?.memoryMb ?? 3008;
    for (const family of PLACEMENT_FAMILIES) {
      const forest = FOREST_FAMILIES.includes(family);
      const fnEnv = { ...env };
      // Lambda answers are capped at 6 MB: 1,000 candidates (Nova's default limit) fit
      if (family === 'allocation-candidates') fnEnv.MAX_ALLOCATION_CANDIDATES = '1000';
      // load the forest in the init phase (full CPU, before the first request waits for it)
      if (forest) fnEnv.SNAPSHOT_PREWARM = 'true';
      const fn = new BerthFunction(this, `Placement-${family}`, {
        entry: `functions/placement/${family}.ts`,
        description: `Placement ${family}`,
        table: this.table,
        access: 'none',
        environment: fnEnv,
        memoryMb: forest ? forestMemoryMb : 1024,
        largeHeap: forest,
        provisionedConcurrency: forest ? props.forest?.provisionedConcurrency : undefined,
        deploy: forest ? props.forest?.deploy : undefined,
      });
      // least privilege: only the actions and key prefixes this family's code uses
      const rules = PLACEMENT_ACCESS[family];
      if (!rules) throw new Error(`no table access rules for Placement family ${family} (cdk/lib/permissions.ts)`);
      grantTableAccess(fn.fn, this.table, rules);
      // the project bucket: every family but the version document's (no caller to count)
      if (limits.project && family !== 'root') grantTableAccess(fn.fn, this.table, RATE_LIMIT_ACCESS.placement);
      families.set(family, fn);
    }
    for (const route of PLACEMENT_ROUTES) {
      const fn = families.get(route.family)?.target;
      if (!fn) throw new Error(`route ${route.path} names family ${route.family}, which has no function`);
      // every method reaches the family's function, which answers 405 with Allow itself
      const added = this.placementApi.addRoutes({
        path: route.path,
        methods: [apigw.HttpMethod.ANY],
        integration: new HttpLambdaIntegration(`Int-${route.family}-${route.path}`, fn),
        authorizer: route.path === '/' ? undefined : authorizer,
      });
      // without an authorizer (the insecure test-only mode) cdk-nag's APIG4 stays an error
      if (route.path === '/') added.forEach(acknowledgePublicRoute);
    }
    // unmatched paths: Placement's own 404 from the root family
    const fallback = new apigw.HttpRoute(this, 'PlacementDefaultRoute', {
      httpApi: this.placementApi,
      routeKey: apigw.HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('Int-default', families.get(PLACEMENT_DEFAULT_FAMILY)!.target),
    });
    acknowledgePublicRoute(fallback);

    const baremetal = new BaremetalApi(this, 'Baremetal', {
      table: this.table,
      authorizer,
      environment: identityEnv,
      configureStage: (api, lg) => this.configureStage(api, 'baremetal', lg, limits),
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
    // orphan recovery (bare metal) and the incomplete-consumer migration, every minute;
    // each task works in bounded batches and resumes where the previous run stopped
    const maintenance = new BerthFunction(this, 'Maintenance', {
      entry: 'functions/maintenance/handler.ts',
      description: 'Scheduled maintenance: orphan recovery, incomplete-consumer migration',
      table: this.table,
      access: 'none',
      timeout: Duration.seconds(60),
      // it keeps a forest too: the forest image is written from it
      memoryMb: forestMemoryMb,
      largeHeap: true,
      // one run at a time: a run that outlasts the minute makes the next one wait, never overlap
      reservedConcurrency: 1,
    });
    this.maintenance = maintenance.fn;
    grantTableAccess(maintenance.fn, this.table, MAINTENANCE_ACCESS);
    baremetal.grantOrphanRecovery(maintenance.fn);
    // the scheduled events of runs that failed (timeout, crash, a failed init) or could not
    // start in time, kept two weeks for the operator (docs/operating.md, "Operating in AWS")
    this.maintenanceFailures = new sqs.Queue(this, 'MaintenanceFailures', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.maintenanceFailures).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason:
        'This queue is itself the failure destination of the maintenance function and its schedule; its messages are read by an operator, not redriven.',
    });
    const failed = new lambdaDestinations.SqsDestination(this.maintenanceFailures);
    maintenance.fn.configureAsyncInvoke({
      onFailure: failed,
      // the schedule is the retry: the next run starts a minute later and resumes where this
      // one stopped, so a retry would only repeat it (and wait for the one slot)
      retryAttempts: 0,
      // an event that could not start within two minutes (the slot was taken) is superseded by
      // the runs scheduled since; it goes to the queue, which says runs are backing up
      maxEventAge: Duration.minutes(2),
    });
    const schedule = new scheduler.Schedule(this, 'MaintenanceSchedule', {
      schedule: scheduler.ScheduleExpression.rate(Duration.minutes(1)),
      // Scheduler's own retries cover failing to hand the event to Lambda (not the run)
      target: new schedulerTargets.LambdaInvoke(maintenance.fn, {
        retryAttempts: 2,
        maxEventAge: Duration.minutes(2),
        deadLetterQueue: this.maintenanceFailures,
      }),
      description: 'Berth maintenance every minute',
    });
    const maintenanceId = this.getLogicalId(maintenance.fn.node.defaultChild as lambda.CfnFunction);
    // the scheduler's role is created at stack level (one per target), hence the stack-wide acknowledgement
    void schedule;
    Validations.of(this).acknowledge({
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${maintenanceId}.Arn>:*]`,
      reason: 'The scheduler may invoke the maintenance function and its versions only.',
    });
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

  private configureStage(api: apigw.HttpApi, name: 'placement' | 'baremetal', logGroup: logs.LogGroup, limits: LimitOptions) {
    const stage = api.defaultStage!.node.defaultChild as apigw.CfnStage;
    // the version documents and $default: answered 429 by API Gateway beyond their throttle
    const routes = name === 'placement' ? PLACEMENT_ROUTES : BAREMETAL_ROUTES;
    const publicPaths = routes.map((r) => r.path).filter((p) => PUBLIC_PATHS[name].includes(p));
    const { defaultRouteSettings, routeSettings } = stageThrottles(name, publicPaths, limits);
    stage.defaultRouteSettings = defaultRouteSettings;
    stage.routeSettings = routeSettings;
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

/** -c baremetalScheduler that cannot work stops the synth, as the other flags do */
export class SchedulerConfigError extends Error {}

export function validateScheduler(v: string | undefined): BaremetalScheduler {
  if (v === undefined || v === '') return 'database';
  if (!(BAREMETAL_SCHEDULERS as readonly string[]).includes(v)) {
    throw new SchedulerConfigError(`-c baremetalScheduler=${v}: expected one of ${BAREMETAL_SCHEDULERS.join(', ')}`);
  }
  return v as BaremetalScheduler;
}
