/** Step Lambda of the bare-metal state machines: findCandidates (see ../allocate.ts). */
import { findCandidates } from '../allocate.js';

export const handler = findCandidates;
