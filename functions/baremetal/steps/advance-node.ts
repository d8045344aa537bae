/** Step Lambda of the bare-metal state machines: advanceNode (see ../node-actions.ts). */
import { advanceNode } from '../node-actions.js';
import { withMetrics } from '../../http/powertools.js';

export const handler = withMetrics(advanceNode);
