/** Step Lambda of the bare-metal state machines: failNodeAction (see ../node-actions.ts). */
import { failNodeAction } from '../node-actions.js';

export const handler = failNodeAction;
