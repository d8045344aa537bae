/** Step Lambda of the bare-metal state machines: advanceNode (see ../node-actions.ts). */
import { advanceNode } from '../node-actions.js';

export const handler = advanceNode;
