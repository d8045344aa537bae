/**
 * Every bare-metal resource family (its routes and Lambda handler), and the local
 * runtime's entry point. The Lambda entry point of family F is
 * functions/baremetal/F.ts (cdk/ bundles each one separately); this registry is what
 * the local runtime and the tests load.
 */
import type { Server } from 'node:http';
import type { LambdaFamily } from '../http/family.js';
import { serve } from '../../local/http-adapter.js';
import { BAREMETAL_DEFAULT_FAMILY, BAREMETAL_ROUTES } from './routes.js';
import * as root from './root.js';
import * as nodes from './nodes.js';
import * as nodeTraits from './node-traits.js';
import * as nodeStates from './node-states.js';
import * as allocations from './allocations.js';
import { localRunner } from '../../local/state-machines.js';

export const BAREMETAL_FAMILY_MODULES: Record<string, LambdaFamily> = {
  root,
  nodes,
  'node-traits': nodeTraits,
  'node-states': nodeStates,
  allocations,
};

/**
 * Serve the bare-metal API on host:port through the API Gateway adapter, with the
 * state machines run in-process from their ASL files.
 */
export async function startLocal(port: number, host: string): Promise<Server> {
  localRunner();
  const handlers = Object.fromEntries(Object.entries(BAREMETAL_FAMILY_MODULES).map(([k, m]) => [k, m.handler]));
  return serve({ name: 'baremetal', routes: BAREMETAL_ROUTES, handlers, defaultFamily: BAREMETAL_DEFAULT_FAMILY }, port, host);
}
