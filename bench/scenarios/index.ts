/** Every benchmark scenario `npm run bench` knows, in run order. */
import type { Scenario } from '../kit.js';
import { claimScenarios } from './claims.js';
import { perfHarnessCandidatesScenario, perfHarnessScenario } from './perf-harness.js';
import { baremetalRaceScenario } from './baremetal.js';
import { candidatesScenarios } from './candidates.js';
import { coldstartScenario } from './coldstart.js';
import { largeScenario } from './large.js';
import { capacityScenario } from './capacity.js';
import { loadRateScenario } from './loadrate.js';
import { importIronicScenario } from './import-ironic.js';
import { layoutUpgradeScenario } from './layout-upgrade.js';
import { rateLimitScenario } from './ratelimit.js';
import { placementImportScenario } from './placement-import.js';

export const SCENARIOS: Scenario[] = [
  ...claimScenarios,
  perfHarnessScenario,
  baremetalRaceScenario,
  ...candidatesScenarios,
  perfHarnessCandidatesScenario,
  coldstartScenario,
  largeScenario,
  capacityScenario,
  loadRateScenario,
  importIronicScenario,
  layoutUpgradeScenario,
  rateLimitScenario,
  placementImportScenario,
];
