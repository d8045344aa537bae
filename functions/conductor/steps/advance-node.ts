/** Step Lambda of the bare-metal state machines: advanceNode (see ../node-actions.ts). */
import { advanceNode } from '../node-actions.js';
import { withMetrics } from '../../observability/powertools.js';

export const handler = withMetrics(advanceNode);
