/** Step Lambda of the bare-metal state machines: fail (see ../allocate.ts). */
import { fail } from '../allocate.js';

export const handler = fail;
