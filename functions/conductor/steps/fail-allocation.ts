/** Step Lambda of the bare-metal state machines: fail (see ../allocate.ts). */
import { fail } from '../allocate.js';
import { withMetrics } from '../../observability/powertools.js';

export const handler = withMetrics(fail);
