/**
 * The per-client token bucket in the table (`RATE_LIMIT`, `-c projectRateLimit`): one item
 * per API and caller, `RATE#<api>#<bucket>` / `B`, holding `tat` (functions/core/
 * ratelimit.ts) and a ttl. A request moves tat with one conditional UpdateItem:
 *
 *   idle    SET tat = now + interval        IF no tat, or tat <= now
 *   busy    SET tat = tat + interval        IF now < tat <= now + (burst - 1) interval
 *
 * Which one is tried first follows what this container last saw of the bucket; a failed
 * condition returns the item (ReturnValuesOnConditionCheckFailure), which says whether the
 * other write applies or the request is refused, and until when. A refusal is remembered
 * in the container until that moment (tat never moves back, so nothing could be admitted
 * before it): a client hammering past its limit costs one write per container per refusal
 * window, not one per request. Each write is one write unit (the item is ~80 bytes), so a
 * request under the limit costs one unit and one round trip; docs/cost.md.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from './ddb/reads.js';
import { Expr } from './ddb/expr.js';
import { keyFits } from './ddb/keys.js';
import {
  LIMIT_UNAVAILABLE_TEXT,
  admissibleAt,
  bucketOf,
  intervalMs,
  latestAdmissibleTat,
  limitedText,
  nextTat,
  retryAfterS,
  type RateLimit,
} from '../core/ratelimit.js';

export type RateApi = 'placement' | 'baremetal';

/** the bucket's key (IAM grants `RATE#<api>#*` to that API's functions: cdk/lib/permissions.ts) */
export function rateKey(api: RateApi, bucket: string): { pk: string; sk: string } {
  return { pk: `RATE#${api}#${bucket}`, sk: 'B' };
}

/** how long an idle bucket is kept after its tat (s): it is full again long before */
const TTL_AFTER_S = 3600;
/** at most this many conditional writes per request (a race with other containers may cost one more) */
const MAX_WRITES = 3;
/** buckets this container remembers (last tat seen; refused until) */
const MEMORY = 10_000;

const lastTat = new Map<string, number>();
const refusedUntil = new Map<string, number>();

function remember(map: Map<string, number>, k: string, v: number): void {
  if (map.size >= MEMORY) map.clear();
  map.set(k, v);
}

export type TokenResult = { ok: true; writes: number } | { error: 'limited'; retryAfterS: number; writes: number };

/**
 * Take one token of `bucket`'s bucket on `api` at `now` (ms). Throws what DynamoDB throws
 * (throttling, an outage): the caller answers 503 rather than let the request through.
 */
export async function takeToken(api: RateApi, bucket: string, limit: RateLimit, now = Date.now()): Promise<TokenResult> {
  const key = rateKey(api, bucket);
  // no such item can exist: nothing to count (a caller id of over 2 KB is refused elsewhere)
  if (!keyFits(key)) return { ok: true, writes: 0 };
  const memo = `${key.pk}|${limit.rate}:${limit.burst}`;
  const until = refusedUntil.get(memo);
  if (until !== undefined && now < until) return { error: 'limited', retryAfterS: Math.max(1, Math.ceil((until - now) / 1000)), writes: 0 };
  const latest = latestAdmissibleTat(limit, now);
  let idle = (lastTat.get(memo) ?? 0) <= now;
  for (let writes = 1; writes <= MAX_WRITES; writes++) {
    const e = new Expr();
    let tat: number;
    if (idle) {
      tat = nextTat(limit, now, undefined);
      e.set('tat', tat).when(e.or(e.absent('tat'), `${e.n('tat')} <= ${e.v(now)}`));
    } else {
      tat = Number.NaN;
      e.setTo('tat', `${e.n('tat')} + ${e.v(intervalMs(limit))}`);
      e.when(`${e.n('tat')} > ${e.v(now)}`).when(`${e.n('tat')} <= ${e.v(latest)}`);
    }
    // the ttl follows the bucket's tat at most this request's interval late: kept while it matters
    e.set('ttl', Math.ceil((Math.max(now, lastTat.get(memo) ?? now) + intervalMs(limit)) / 1000) + TTL_AFTER_S).returningOldOnFailure();
    try {
      const out = await ddb().send(new UpdateCommand({ ...e.updateInput(key), ReturnValues: 'UPDATED_NEW' }));
      remember(lastTat, memo, Number(out.Attributes?.tat ?? tat));
      refusedUntil.delete(memo);
      return { ok: true, writes };
    } catch (err) {
      if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
      // the item as it was, as DynamoDB returns it (the document client leaves errors marshalled)
      const found = (err as { Item?: Record<string, unknown> }).Item?.tat as { N?: string } | number | undefined;
      const old = typeof found === 'number' ? found : found?.N === undefined ? undefined : Number(found.N);
      if (old !== undefined) remember(lastTat, memo, old);
      if (old !== undefined && old > latest) {
        remember(refusedUntil, memo, admissibleAt(limit, old));
        return { error: 'limited', retryAfterS: retryAfterS(limit, now, old), writes };
      }
      // the other write applies to what the bucket holds now
      idle = old === undefined || old <= now;
    }
  }
  // lost every race to other containers taking the same bucket: it is busy, try again shortly
  return { error: 'limited', retryAfterS: 1, writes: MAX_WRITES };
}

/** forget what this container saw of every bucket (tests) */
export function resetRateMemory(): void {
  lastTat.clear();
  refusedUntil.clear();
}

/**
 * The limit for one request, as the API frameworks apply it: nothing (not limited, no
 * limit, an exempt role, no caller), `limited` (429 with Retry-After) or `unavailable`
 * (the bucket could not be read: 503 with Retry-After 1, logged) — never a request let
 * through because the limiter failed.
 */
export async function checkLimit(
  api: RateApi,
  identity: { projectId?: string; systemScope?: string; userId?: string; roles: string[] },
  limit: RateLimit | undefined,
  exemptRoles: readonly string[],
): Promise<
  undefined | { error: 'limited'; retryAfterS: number; text: string } | { error: 'unavailable'; retryAfterS: number; text: string; cause: unknown }
> {
  if (!limit) return undefined;
  if (identity.roles.some((r) => exemptRoles.includes(r))) return undefined;
  const bucket = bucketOf(identity);
  if (bucket === undefined) return undefined;
  let r: TokenResult;
  try {
    r = await takeToken(api, bucket, limit);
  } catch (cause) {
    return { error: 'unavailable', retryAfterS: 1, text: LIMIT_UNAVAILABLE_TEXT, cause };
  }
  if ('ok' in r) return undefined;
  return { error: 'limited', retryAfterS: r.retryAfterS, text: limitedText(bucket, limit, r.retryAfterS) };
}
