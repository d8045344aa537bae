/** Step Lambda of the bare-metal state machines: reserve (see ../allocate.ts). */
import { reserve, prewarmScheduler } from '../allocate.js';
import { withMetrics } from '../../observability/powertools.js';

export const handler = withMetrics(reserve);

// BAREMETAL_SCHEDULER=placement: candidates come from the provider forest, loaded while
// the Lambda initialises (cdk/ sets SNAPSHOT_PREWARM on this step in that mode only)
await prewarmScheduler();
