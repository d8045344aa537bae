/**
 * Every Placement resource family: its routes and its Lambda handler. The Lambda entry
 * point of family F is functions/placement/F.ts (cdk/ bundles each one separately);
 * this registry is what the local runtime and the tests load.
 */
import type { LambdaFamily } from '../http/family.js';
import * as root from './root.js';
import * as resourceProviders from './resource-providers.js';
import * as inventories from './inventories.js';
import * as traits from './traits.js';
import * as aggregates from './aggregates.js';
import * as resourceClasses from './resource-classes.js';
import * as allocations from './allocations.js';
import * as usages from './usages.js';
import * as reshaper from './reshaper.js';
import * as allocationCandidates from './allocation-candidates.js';

export const PLACEMENT_FAMILY_MODULES: Record<string, LambdaFamily> = {
  root,
  'resource-providers': resourceProviders,
  inventories,
  traits,
  aggregates,
  'resource-classes': resourceClasses,
  allocations,
  usages,
  reshaper,
  'allocation-candidates': allocationCandidates,
};
