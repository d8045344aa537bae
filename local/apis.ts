/**
 * Both APIs served locally: the real Lambda handlers of every resource family behind
 * the payload-v2 adapter, routed by the same tables cdk/ deploys. The bare-metal API
 * runs its state machines in-process from their ASL files (./state-machines.ts).
 * Used by `npm start`, the integration tests and the benchmarks.
 */
import type { Server } from 'node:http';
import { handlersOf, type LambdaHandler } from '../functions/http/family.js';
import { PLACEMENT_FAMILY_MODULES } from '../functions/placement/index.js';
import { PLACEMENT_DEFAULT_FAMILY, PLACEMENT_ROUTES } from '../functions/placement/routes.js';
import { placementMalformed } from '../functions/placement/framework/malformed.js';
import { BAREMETAL_FAMILY_MODULES } from '../functions/baremetal/index.js';
import { BAREMETAL_DEFAULT_FAMILY, BAREMETAL_ROUTES } from '../functions/baremetal/routes.js';
import { serve } from './http-adapter.js';
import { config } from '../functions/config.js';
import { LAMBDA_RESPONSE_LIMIT } from '../functions/http/encoding.js';
import { localRunner } from './state-machines.js';

/** AWS's limit unless the settings lift it (MAX_RESPONSE_BYTES=0, `npm start -- --no-response-limit`) */
function responseLimit(): number {
  return config().maxResponseBytes === 0 ? 0 : LAMBDA_RESPONSE_LIMIT;
}

/** wraps each family's handler (a local container measures and labels every request: ./container.ts) */
export type HandlerWrapper = (api: string, family: string, handler: LambdaHandler) => LambdaHandler;

function wrapAll(api: string, handlers: Record<string, LambdaHandler>, wrap?: HandlerWrapper): Record<string, LambdaHandler> {
  if (!wrap) return handlers;
  return Object.fromEntries(Object.entries(handlers).map(([family, h]) => [family, wrap(api, family, h)]));
}

export function servePlacement(port: number, host = '127.0.0.1', wrap?: HandlerWrapper): Promise<Server> {
  return serve(
    {
      name: 'placement',
      routes: PLACEMENT_ROUTES,
      handlers: wrapAll('placement', handlersOf(PLACEMENT_FAMILY_MODULES), wrap),
      defaultFamily: PLACEMENT_DEFAULT_FAMILY,
      malformed: placementMalformed,
      responseLimit: responseLimit(),
    },
    port,
    host,
  );
}

export function serveBaremetal(port: number, host = '127.0.0.1', wrap?: HandlerWrapper): Promise<Server> {
  localRunner();
  return serve(
    {
      name: 'baremetal',
      routes: BAREMETAL_ROUTES,
      handlers: wrapAll('baremetal', handlersOf(BAREMETAL_FAMILY_MODULES), wrap),
      defaultFamily: BAREMETAL_DEFAULT_FAMILY,
    },
    port,
    host,
  );
}
