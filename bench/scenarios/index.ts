/** Every benchmark scenario `npm run bench` knows, in run order. */
import type { Scenario } from '../run.js';

export const SCENARIOS: Scenario[] = [];
