/** Step Lambda of the bare-metal state machines: reserve (see ../allocate.ts). */
import { reserve } from '../allocate.js';
import { withMetrics } from '../../http/powertools.js';

export const handler = withMetrics(reserve);
