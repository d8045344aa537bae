/** Step Lambda of the bare-metal state machines: fail (see ../allocate.ts). */
import { fail } from '../allocate.js';
import { withMetrics } from '../../http/powertools.js';

export const handler = withMetrics(fail);
