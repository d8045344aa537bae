/**
 * Bounded, jittered retries of optimistic writes: `attempt` re-reads, re-plans and
 * writes; it returns RETRY when it lost a race (a failed condition on a changed read,
 * a TransactionConflict). After `max` lost races the store gives up with
 * RetriesExhausted, which each API renders in its own words (Placement: 409
 * placement.concurrent_update; bare metal: the conductor's 409).
 */
import { count } from '../../observability/powertools.js';

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Full-jitter exponential backoff for attempt n (0-based). */
export function backoffMs(attempt: number, baseMs = 10, capMs = 400): number {
  return Math.random() * Math.min(capMs, baseMs * 2 ** attempt);
}

/** What an attempt returns to ask for another go. */
export const RETRY = Symbol('retry');

/** Too many lost races in a row. Not an HTTP error: the API layers decide how to answer. */
export class RetriesExhausted extends Error {
  constructor(readonly attempts: number) {
    super(`gave up after ${attempts} attempts: the same items kept changing`);
    this.name = 'RetriesExhausted';
  }
}

export async function withRetries<T>(attempt: (n: number) => Promise<T | typeof RETRY>, max = 12): Promise<T> {
  for (let n = 0; n < max; n++) {
    const r = await attempt(n);
    if (r !== RETRY) return r;
    count('TransactionRetries');
    await sleep(backoffMs(n));
  }
  count('RetriesExhausted');
  throw new RetriesExhausted(max);
}

/** errors after which a single-item write may simply be sent again (it may have been applied: the write must be idempotent) */
const TRANSIENT = new Set([
  'TransactionConflictException',
  'TransactionInProgressException',
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
]);

function transient(e: unknown): boolean {
  const err = e as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  if (err?.name && TRANSIENT.has(err.name)) return true;
  if ((err?.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  // the connection broke (a lost answer): nothing says whether it was applied
  return /^E(CONN|PIPE|TIMEDOUT|AI_AGAIN)|socket hang up/i.test(`${err?.code ?? ''} ${(e as Error)?.message ?? ''}`.trim());
}

/**
 * One single-item write outside a transaction, sent again after a transient failure
 * (the SDK gives up on a TransactionConflict at once, and a lost answer leaves the outcome
 * open). Only for writes that are harmless to repeat: an idempotent SET or REMOVE, or a
 * conditional write whose caller treats "the condition failed" as "done already".
 */
export async function retryTransient<T>(send: () => Promise<T>, max = 8): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await send();
    } catch (e) {
      if (n + 1 >= max || !transient(e)) throw e;
      count('SingleWriteRetries');
      await sleep(backoffMs(n, 50, 2000));
    }
  }
}
