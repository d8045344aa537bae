/** Step Lambda of the bare-metal state machines: findCandidates (see ../allocate.ts). */
import { findCandidates } from '../allocate.js';
import { withMetrics } from '../../http/powertools.js';

export const handler = withMetrics(findCandidates);
