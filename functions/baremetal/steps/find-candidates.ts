/** Step Lambda of the bare-metal state machines: findCandidates (see ../allocate.ts). */
import { findCandidates } from '../../conductor/allocate.js';
import { withMetrics } from '../../observability/powertools.js';

export const handler = withMetrics(findCandidates);
