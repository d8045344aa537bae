/** Step Lambda of the bare-metal state machines: reserve (see ../allocate.ts). */
import { reserve } from '../allocate.js';

export const handler = reserve;
