/**
 * What one poll of the change log reads, by the change log's own constants (the bucket,
 * the overlap read past now, the shards: functions/store/placement/changelog.ts): the
 * query pages a gap between polls meets and their bytes, and how many distinct providers
 * changed in it. Pure arithmetic the projection model (./model.ts) builds on.
 */
import { queryPageUnits } from '../../functions/store/ddb/units.js';

/** the change log's constants, from the code */
export interface LogDesign {
  overlapS: number;
  bucketS: number;
  shards: number;
}

/** Expected number of distinct values among n uniform draws from a population. */
export function distinct(n: number, population: number): number {
  if (n <= 0) return 0;
  if (!Number.isFinite(population) || population <= 0) return n;
  return population * -Math.expm1(n * Math.log1p(-1 / Math.max(population, 1 + 1e-9)));
}

export function pollQueries(gapS: number, d: LogDesign): number {
  return d.shards * (1 + (gapS + 2 * d.overlapS) / d.bucketS);
}

export function pollLogBytes(gapS: number, logBytesPerS: number, d: LogDesign): number {
  return logBytesPerS * (gapS + d.overlapS);
}

/** read units of one poll of the change log (strongly consistent query pages) */
export function pollLogUnits(gapS: number, logBytesPerS: number, d: LogDesign): number {
  const q = pollQueries(gapS, d);
  return q * queryPageUnits(pollLogBytes(gapS, logBytesPerS, d) / q, 'strong');
}
