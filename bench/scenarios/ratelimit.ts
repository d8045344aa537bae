/**
 * `npm run bench -- --scenario ratelimit [--requests N]`: what the per-client limit
 * (RATE_LIMIT, functions/store/ratelimit.ts) adds to a request. The same cheap
 * authenticated request (`GET /resource_classes/VCPU`: a standard class, no table read of
 * its own) is timed in alternating rounds with the limit off and on (a bucket large enough
 * never to refuse), and the DynamoDB calls of the limited rounds are counted: the
 * difference is the bucket's round trip, its calls and write units per request.
 */
import { VALUE, callCounts, ddbCallsDuring, pct, placementClient, r1, r2, type BenchContext, type Scenario } from '../kit.js';

async function round(ctx: BenchContext, limit: string | undefined, n: number) {
  const { resetConfig } = await import('../../functions/config.js');
  if (limit) process.env.RATE_LIMIT = limit;
  else delete process.env.RATE_LIMIT;
  resetConfig();
  const api = placementClient(ctx.stack.placementUrl);
  const ms: number[] = [];
  const { calls } = await ddbCallsDuring(async () => {
    for (let i = 0; i < n; i++) {
      const r = await api('GET', '/resource_classes/VCPU', undefined, '1.7');
      if (r.status !== 200) throw new Error(`GET /resource_classes/VCPU: ${r.status}`);
      ms.push(r.ms);
    }
  });
  return { ms, calls };
}

export const rateLimitScenario: Scenario = {
  name: 'ratelimit',
  options: { requests: VALUE },
  description: 'the per-client limit: latency and DynamoDB calls it adds per request (limit off vs on, alternating)',
  async run(ctx) {
    const n = Number(ctx.args.requests ?? (ctx.quick ? 100 : 300));
    const rounds = ctx.quick ? 2 : 4;
    const off: number[] = [];
    const on: number[] = [];
    let updates = 0;
    let limitedCalls = 0;
    let plainCalls = 0;
    // warm the handlers and the connection first
    await round(ctx, undefined, 20);
    for (let k = 0; k < rounds; k++) {
      const a = await round(ctx, undefined, n);
      off.push(...a.ms);
      plainCalls += a.calls.length;
      // 500/s with a burst no bench reaches: every request takes a token, none is refused
      const b = await round(ctx, '500:1000000', n);
      on.push(...b.ms);
      limitedCalls += b.calls.length;
      updates += callCounts(b.calls).UpdateItem ?? 0;
    }
    delete process.env.RATE_LIMIT;
    const requests = rounds * n;
    const rec = {
      scenario: 'ratelimit',
      requests,
      offP50Ms: r2(pct(off, 50)),
      onP50Ms: r2(pct(on, 50)),
      addedP50Ms: r2(pct(on, 50) - pct(off, 50)),
      offP99Ms: r2(pct(off, 99)),
      onP99Ms: r2(pct(on, 99)),
      ddbCallsPerRequestOff: r2(plainCalls / requests),
      ddbCallsPerRequestOn: r2(limitedCalls / requests),
      updateItemPerRequest: r2(updates / requests),
    };
    ctx.emit(rec);
    ctx.say(
      `ratelimit: ${requests} requests per side; p50 ${rec.offP50Ms} → ${rec.onP50Ms} ms (+${r1(rec.addedP50Ms)}), p99 ${rec.offP99Ms} → ${rec.onP99Ms} ms; DynamoDB calls per request ${rec.ddbCallsPerRequestOff} → ${rec.ddbCallsPerRequestOn} (UpdateItem ${rec.updateItemPerRequest})`,
    );
  },
};
