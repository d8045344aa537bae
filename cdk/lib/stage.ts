/**
 * An API's default stage: the throttles of its routes (API Gateway answers 429 beyond
 * them; the version documents and $default have the public throttle, cdk/lib/limits.ts)
 * and its JSON access log.
 */
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { BAREMETAL_ROUTES } from '../../functions/baremetal/routes.js';
import { PLACEMENT_ROUTES } from '../../functions/placement/routes.js';
import { PUBLIC_PATHS, stageThrottles, type LimitOptions } from './limits.js';

/** Set the throttles and access log of `api`'s default stage. */
export function configureStage(api: apigw.HttpApi, name: 'placement' | 'baremetal', logGroup: logs.LogGroup, limits: LimitOptions) {
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
