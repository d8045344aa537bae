/**
 * The scheduler of bare-metal allocations (BAREMETAL_SCHEDULER; docs/baremetal.md, "Bare
 * metal through Placement"), chosen once per configuration — once per process in a
 * Lambda, again only when tests or the local runtime change the settings. The database
 * scheduler is the bare-metal store's own (store/baremetal/scheduler.ts); the placement
 * scheduler makes every node a Placement provider and every allocation a consumer:
 *
 *   links    every node write carries its provider's and consumer's items (links.ts)
 *   source   until the switch has completed (migration.ts), the node index with
 *            reservations through Placement; from then on the forest's free providers
 *            (candidates.ts), each reservation planned on the forest's record
 */
import { config, type Config } from '../config.js';
import { DATABASE_SCHEDULER, NODE_INDEX, type CandidateSource, type Scheduler } from '../store/baremetal/scheduler.js';
import { prewarm } from '../store/placement/snapshot.js';
import { forestProvider, freeNodeProviders } from './candidates.js';
import { PLACEMENT_LINKS, reserveThroughPlacement } from './links.js';
import { candidatesFromForest } from './migration.js';

/** before the switch completed: the node index (a node may have no provider yet), reservations through Placement */
const INDEX_THROUGH_PLACEMENT: CandidateSource = { ...NODE_INDEX, commit: reserveThroughPlacement() };

/** once it completed: the forest's free providers, each reservation planned on the forest's record */
const FOREST: CandidateSource = {
  from: 'forest',
  look: (req, again) => freeNodeProviders(req, { nameFirst: !again }),
  commit: reserveThroughPlacement(forestProvider),
};

export const PLACEMENT_SCHEDULER: Scheduler = {
  name: 'placement',
  links: PLACEMENT_LINKS,
  source: async () => ((await candidatesFromForest()) ? FOREST : INDEX_THROUGH_PLACEMENT),
  // cdk/ sets SNAPSHOT_PREWARM on the steps with this scheduler
  prewarm: () => prewarm(),
};

let chosen: { for: Config; scheduler: Scheduler } | undefined;

/** The scheduler this configuration runs. */
export function scheduler(): Scheduler {
  const c = config();
  if (chosen?.for !== c) chosen = { for: c, scheduler: c.baremetal.scheduler === 'placement' ? PLACEMENT_SCHEDULER : DATABASE_SCHEDULER };
  return chosen.scheduler;
}
