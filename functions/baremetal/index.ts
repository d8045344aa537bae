/**
 * Every bare-metal resource family: its routes and its Lambda handler. The Lambda
 * entry point of family F is functions/baremetal/F.ts (cdk/ bundles each one
 * separately); this registry is what the local runtime and the tests load.
 */
import type { LambdaFamily } from '../http/family.js';
import * as root from './root.js';
import * as nodes from './nodes.js';
import * as nodeTraits from './node-traits.js';
import * as nodeStates from './node-states.js';
import * as allocations from './allocations.js';
import * as nodeVifs from './node-vifs.js';
import * as drivers from './drivers.js';

export const BAREMETAL_FAMILY_MODULES: Record<string, LambdaFamily> = {
  root,
  nodes,
  'node-traits': nodeTraits,
  'node-states': nodeStates,
  allocations,
  'node-vifs': nodeVifs,
  drivers,
};
