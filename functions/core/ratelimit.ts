/**
 * The per-client limit's arithmetic (pure): a token bucket kept as one number, the
 * theoretical arrival time `tat` of the generic cell rate algorithm. A bucket of `burst`
 * requests refilling at `rate` a second admits a request at `now` when
 * max(tat, now) <= now + (burst - 1) * interval, and then moves tat one interval on.
 * functions/store/ratelimit.ts keeps tat in the table and moves it with conditional
 * writes, so concurrent containers share one bucket per caller.
 */

export interface RateLimit {
  /** steady requests per second */
  rate: number;
  /** requests admitted at once after a quiet period */
  burst: number;
}

/** ms between two requests at the steady rate */
export function intervalMs(l: RateLimit): number {
  return 1000 / l.rate;
}

/** the largest tat (before the request) a request at `now` may still find */
export function latestAdmissibleTat(l: RateLimit, now: number): number {
  return now + (l.burst - 1) * intervalMs(l);
}

/** tat after admitting a request at `now` that found `tat` (undefined: a new or expired bucket) */
export function nextTat(l: RateLimit, now: number, tat: number | undefined): number {
  return Math.max(tat ?? now, now) + intervalMs(l);
}

/** the first moment a request could be admitted, for a bucket found at `tat` */
export function admissibleAt(l: RateLimit, tat: number): number {
  return tat - (l.burst - 1) * intervalMs(l);
}

/** Retry-After (whole seconds, at least 1) for a refusal at `now` of a bucket found at `tat` */
export function retryAfterS(l: RateLimit, now: number, tat: number): number {
  return Math.max(1, Math.ceil((admissibleAt(l, tat) - now) / 1000));
}

/** Whose bucket a caller draws from: the project, else the system scope, else the user. */
export function bucketOf(identity: { projectId?: string; systemScope?: string; userId?: string }): string | undefined {
  if (identity.projectId) return identity.projectId;
  if (identity.systemScope) return `system:${identity.systemScope}`;
  if (identity.userId) return `user:${identity.userId}`;
  return undefined;
}

/** the text both APIs answer a refused request with (Placement's detail, Ironic's faultstring) */
export function limitedText(bucket: string, l: RateLimit, retryAfter: number): string {
  return `Too many requests for ${bucket}: at most ${l.rate} a second (${l.burst} at once). Retry after ${retryAfter} s.`;
}

/** the text when the limit cannot be checked (its table throttled or failing) */
export const LIMIT_UNAVAILABLE_TEXT = 'The request limit could not be checked; retry shortly.';
