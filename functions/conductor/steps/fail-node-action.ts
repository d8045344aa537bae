/** Step Lambda of the bare-metal state machines: failNodeAction (see ../node-actions.ts). */
import { failNodeAction } from '../node-actions.js';
import { withMetrics } from '../../observability/powertools.js';

export const handler = withMetrics(failNodeAction);
