/**
 * The per-client limit (functions/core/ratelimit.ts): the token bucket's arithmetic, and
 * what one request costs under the accountant's unit rules (functions/store/ddb/units.ts): the
 * bucket item is ~100 bytes, so taking a token — or failing to — is one write unit.
 */
import { describe, expect, it } from 'vitest';
import { admissibleAt, bucketOf, latestAdmissibleTat, nextTat, retryAfterS } from '../../functions/core/ratelimit.js';
import { parseRateLimit } from '../../functions/config.js';
import { failedConditionUnits, itemSize, itemWriteUnits } from '../../functions/store/ddb/units.js';
import { rateKey } from '../../functions/store/ratelimit.js';

describe('the token bucket (GCRA)', () => {
  const l = { rate: 2, burst: 3 };
  /** admit or refuse a sequence of request times against one bucket, as the store does */
  function run(times: number[]): boolean[] {
    let tat: number | undefined;
    return times.map((now) => {
      if (tat !== undefined && Math.max(tat, now) > latestAdmissibleTat(l, now)) return false;
      tat = nextTat(l, now, tat);
      return true;
    });
  }

  it('admits the burst at once, then one request per interval', () => {
    expect(run([0, 0, 0, 0])).toEqual([true, true, true, false]);
    // at 2/s a token comes back every 500 ms
    expect(run([0, 0, 0, 499, 500, 501, 1000])).toEqual([true, true, true, false, true, false, true]);
    // a quiet second refills two tokens, never more than the burst
    expect(run([0, 0, 0, 10_000, 10_000, 10_000, 10_000])).toEqual([true, true, true, true, true, true, false]);
  });

  it('says when the next request can pass, in whole seconds, at least 1', () => {
    // three at 0: tat = 1500; admissible again at 1500 - 2·500 = 500
    expect(admissibleAt(l, 1500)).toBe(500);
    expect(retryAfterS(l, 0, 1500)).toBe(1);
    expect(retryAfterS({ rate: 0.1, burst: 1 }, 0, 10_000)).toBe(10);
    expect(retryAfterS(l, 499, 1500)).toBe(1);
  });

  it('reads RATE[:BURST], nothing else, and draws on the project, the system scope or the user', () => {
    expect(parseRateLimit('20:40')).toEqual({ rate: 20, burst: 40 });
    expect(parseRateLimit('2.5')).toEqual({ rate: 2.5, burst: 3 });
    for (const bad of ['', 'fast', '0', '5:0', '-1:2', '5:2.5']) expect(parseRateLimit(bad), bad).toBeUndefined();
    expect(bucketOf({ projectId: 'p1', userId: 'u' })).toBe('p1');
    expect(bucketOf({ systemScope: 'all', userId: 'u' })).toBe('system:all');
    expect(bucketOf({ userId: 'u' })).toBe('user:u');
    expect(bucketOf({})).toBeUndefined();
  });
});

describe('what a request costs in DynamoDB (the accountant’s rules)', () => {
  it('one write unit to take a token, one to be refused: the bucket item stays far below 1 KB', () => {
    // the longest usual caller: a Keystone project id (32 hex), a tat with a fraction of a ms
    const key = rateKey('placement', 'f'.repeat(32));
    const item = { pk: { S: key.pk }, sk: { S: key.sk }, tat: { N: '1798765432109.3333' }, ttl: { N: '1798769033' } };
    const bytes = itemSize(item);
    expect(bytes).toBeLessThan(100);
    expect(itemWriteUnits(bytes, bytes)).toBe(1);
    expect(failedConditionUnits(bytes)).toBe(1);
    // a first request (no item yet) too
    expect(itemWriteUnits(0, bytes)).toBe(1);
  });
});
