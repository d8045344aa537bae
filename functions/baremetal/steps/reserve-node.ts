/** Step Lambda of the bare-metal state machines: reserve (see ../allocate.ts). */
import { reserve } from '../../conductor/allocate.js';
import { withMetrics } from '../../observability/powertools.js';

export const handler = withMetrics(reserve);
