/**
 * The scheduler of bare-metal allocations, a strategy chosen once per configuration
 * (functions/bridge/scheduler.ts scheduler(); docs/baremetal.md, "Bare metal through
 * Placement"): where an allocation's candidates come from, how a reservation commits,
 * and what every node write carries for what follows the node. The database scheduler
 * is here — the node index, the reservation alone, nothing following a node; the
 * placement scheduler is the bridge's (functions/bridge/), which this module never
 * imports.
 */
import type { BaremetalScheduler } from '../../config.js';
import type { AllocationRequest, CandidateNode } from '../../core/baremetal/allocations.js';
import { reserveAlone, type ReservationCommit } from './reservation.js';
import { NO_LINKS, type NodeLinks } from './links.js';
import { allocatableNodes } from './nodes.js';

/** Where one allocation step's candidates come from, and how its reservations commit. */
export interface CandidateSource {
  /** 'index': the allocatable-node index; 'forest': the Placement forest's free providers */
  readonly from: 'index' | 'forest';
  /** the nodes the allocation could take: only a list to try, the reservation re-checks everything; `again`: a second look after a lost race */
  look(req: AllocationRequest, again: boolean): Promise<Array<CandidateNode & { seq: number }>>;
  commit: ReservationCommit;
}

export interface Scheduler {
  readonly name: BaremetalScheduler;
  /** what every node write carries for what follows the node */
  readonly links: NodeLinks;
  /** the source of one step (looked up once per step: the placement scheduler's depends on its migration) */
  source(): Promise<CandidateSource>;
  /** load what the sources read while a step Lambda initialises (the placement scheduler: the provider forest) */
  prewarm(): Promise<void>;
}

/** the node index, and the reservation alone */
export const NODE_INDEX: CandidateSource = { from: 'index', look: (req) => allocatableNodes(req.resource_class), commit: reserveAlone };

/** Ironic's own: allocations from the node index, nodes that nothing else follows. */
export const DATABASE_SCHEDULER: Scheduler = { name: 'database', links: NO_LINKS, source: async () => NODE_INDEX, prewarm: async () => {} };
