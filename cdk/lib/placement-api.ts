/**
 * The Placement HTTP API of the stack: one Lambda per resource family (the forest
 * families with their memory, prewarm and deployment settings), each with the table
 * access its code uses, every Placement path routed to its family, and unmatched paths
 * to the root family's 404. Built in the stack's own scope (cdk/lib/berth-stack.ts), so
 * its resources keep their logical ids.
 */
import { RemovalPolicy, type Stack } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import { PLACEMENT_DEFAULT_FAMILY, PLACEMENT_FAMILIES, PLACEMENT_FOREST_FAMILIES, PLACEMENT_ROUTES } from '../../functions/placement/routes.js';
import { BerthFunction, type ForestDeploy } from './function.js';
import { acknowledgePublicRoute } from './nag.js';
import { PLACEMENT_ACCESS, RATE_LIMIT_ACCESS, grantTableAccess } from './permissions.js';

/** Placement families that answer from the provider forest (and so load it when they start): their routes' `forest` operations */
export const FOREST_FAMILIES: readonly string[] = PLACEMENT_FOREST_FAMILIES;

export interface PlacementApiProps {
  /** the stack's id: the API's name */
  id: string;
  table: dynamodb.TableV2;
  /** undefined only in the insecure test-only mode */
  authorizer: apigw.IHttpRouteAuthorizer | undefined;
  /** every family's environment (identity, policy mode, scheduler) */
  environment: Record<string, string>;
  /** the per-project bucket is on: every family but root may read and write it */
  projectRateLimit: boolean;
  /** access logs and throttles of the API's stage */
  configureStage: (api: apigw.HttpApi, logGroup: logs.LogGroup) => void;
  forest: { memoryMb: number; provisionedConcurrency?: number; deploy?: ForestDeploy };
}

/** Build the Placement API in `stack`; returns it. */
export function buildPlacementApi(stack: Stack, props: PlacementApiProps): apigw.HttpApi {
  const { table, authorizer, forest: forestSettings } = props;
  const accessLogs = new logs.LogGroup(stack, 'PlacementAccessLogs', {
    retention: logs.RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const api = new apigw.HttpApi(stack, 'PlacementApi', {
    apiName: `${props.id}-placement`,
    description: 'OpenStack Placement API (Berth)',
    createDefaultStage: true,
  });
  props.configureStage(api, accessLogs);
  const families = new Map<string, BerthFunction>();
  for (const family of PLACEMENT_FAMILIES) {
    const forest = FOREST_FAMILIES.includes(family);
    const fnEnv = { ...props.environment };
    // Lambda answers are capped at 6 MB: 1,000 candidates (Nova's default limit) fit
    if (family === 'allocation-candidates') fnEnv.MAX_ALLOCATION_CANDIDATES = '1000';
    // load the forest in the init phase (full CPU, before the first request waits for it)
    if (forest) fnEnv.SNAPSHOT_PREWARM = 'true';
    const fn = new BerthFunction(stack, `Placement-${family}`, {
      entry: `functions/placement/${family}.ts`,
      description: `Placement ${family}`,
      table,
      access: 'none',
      environment: fnEnv,
      memoryMb: forest ? forestSettings.memoryMb : 1024,
      largeHeap: forest,
      provisionedConcurrency: forest ? forestSettings.provisionedConcurrency : undefined,
      deploy: forest ? forestSettings.deploy : undefined,
    });
    // least privilege: only the actions and key prefixes this family's code uses
    const rules = PLACEMENT_ACCESS[family];
    if (!rules) throw new Error(`no table access rules for Placement family ${family} (cdk/lib/permissions.ts)`);
    grantTableAccess(fn.fn, table, rules);
    // the project bucket: every family but the version document's (no caller to count)
    if (props.projectRateLimit && family !== 'root') grantTableAccess(fn.fn, table, RATE_LIMIT_ACCESS.placement);
    families.set(family, fn);
  }
  for (const route of PLACEMENT_ROUTES) {
    const fn = families.get(route.family)?.target;
    if (!fn) throw new Error(`route ${route.path} names family ${route.family}, which has no function`);
    // every method reaches the family's function, which answers 405 with Allow itself
    const added = api.addRoutes({
      path: route.path,
      methods: [apigw.HttpMethod.ANY],
      integration: new HttpLambdaIntegration(`Int-${route.family}-${route.path}`, fn),
      authorizer: route.path === '/' ? undefined : authorizer,
    });
    // without an authorizer (the insecure test-only mode) cdk-nag's APIG4 stays an error
    if (route.path === '/') added.forEach(acknowledgePublicRoute);
  }
  // unmatched paths: Placement's own 404 from the root family
  const fallback = new apigw.HttpRoute(stack, 'PlacementDefaultRoute', {
    httpApi: api,
    routeKey: apigw.HttpRouteKey.DEFAULT,
    integration: new HttpLambdaIntegration('Int-default', families.get(PLACEMENT_DEFAULT_FAMILY)!.target),
  });
  acknowledgePublicRoute(fallback);
  return api;
}
