/**
 * A bulk load ends with a new forest image, so running processes catch up with it and
 * new ones start from it without re-reading every provider it wrote (docs/consistency.md,
 * "Cold start: the forest image"). The loader knows what it wrote: its snapshot takes
 * its own records as they are and marks its own change-log entries as applied, so the
 * refresh that follows re-reads only what others changed meanwhile.
 */
import type { BulkResult } from './bulk.js';
import type { ImageManifest } from './image.js';
import { snapshot } from './snapshot.js';

export async function imageAfterBulkLoad(result: Pick<BulkResult, 'records' | 'logEntries'>): Promise<{ manifest: ImageManifest; written: boolean }> {
  const snap = snapshot();
  // the forest as of before the load (the loader checked it for clashes), then ours
  await snap.fresh();
  snap.absorb(result.records, result.logEntries);
  await snap.fresh(0);
  // (a delta of the image this forest came from when the load changed little of it)
  return snap.writeImage();
}
