/**
 * Bare-metal allocation races against the local stack (real handlers, DynamoDB Local,
 * the allocation state machine run from its ASL file):
 *
 *  baremetal-race  N available nodes of one resource class, M allocations POSTed at
 *                  once; the settle time runs from the first POST until no allocation
 *                  is `allocating` any more, as a client polling the API sees it.
 *                  Cases: 40 allocations / 10 nodes (Ironic 21.4, one process, took
 *                  25-34 s; target < 2 s; --rounds N, default 3), 200 / 50
 *                  (--big-rounds N, default 1). PASS iff exactly N are active,
 *                  M - N error, no node is reserved twice and every node's
 *                  instance_uuid is its allocation's UUID.
 */
import {
  VALUE,
  availableNodes,
  baremetalClient,
  callCounts,
  cpuDuring,
  ddbCallsDuring,
  until,
  type BaremetalClient,
  type BenchContext,
  type Scenario,
} from '../kit.js';

async function raceCase(ctx: BenchContext, api: BaremetalClient, label: string, nodes: number, allocations: number): Promise<boolean> {
  // the stack runs in this process: its reservation counters are readable (imported
  // lazily, after the runner has set the log level)
  const { listen } = await import('../../functions/observability/counters.js');
  const rc = `race-${label}`;
  const uuids = await availableNodes(api, rc, nodes);
  const counted = listen();
  // the forest this process keeps (BAREMETAL_SCHEDULER=placement looks at it): its refreshes during the race
  const { snapshot } = await import('../../functions/store/placement/snapshot.js');
  const forest0 = { ...snapshot().stats };
  // the DynamoDB work of the race: its calls, and the items all its transactions carried
  const {
    value: {
      value: { postMs, settleMs },
      calls,
    },
    nodeS,
    ddbS,
  } = await cpuDuring(ctx.stack, () =>
    ddbCallsDuring(async () => {
      const t0 = performance.now();
      const created = await Promise.all(
        Array.from({ length: allocations }, (_, i) => api('POST', '/v1/allocations', { resource_class: rc, name: `${rc}-a${i}` })),
      );
      const postMs = performance.now() - t0;
      if (created.some((c) => c.status !== 201))
        throw new Error(`allocation create failed: ${JSON.stringify(created.find((c) => c.status !== 201))}`);
      await until(
        'allocations to settle',
        async () => (await api('GET', `/v1/allocations?resource_class=${rc}&state=allocating&fields=uuid`)).json.allocations.length === 0,
        120_000,
        10,
      );
      const settleMs = performance.now() - t0;
      return { postMs, settleMs };
    }),
  );
  const txItems = calls.reduce((n, c) => n + (c.input.TransactItems?.length ?? 0), 0);

  const all = (await api('GET', `/v1/allocations?resource_class=${rc}`)).json.allocations as any[];
  const active = all.filter((a) => a.state === 'active');
  const errors = all.filter((a) => a.state === 'error');
  const booked = new Set(active.map((a) => a.node_uuid));
  const listed = (await api('GET', `/v1/nodes?resource_class=${rc}&fields=uuid,instance_uuid,allocation_uuid`)).json.nodes as any[];
  const byNode = new Map(active.map((a) => [a.node_uuid, a.uuid]));
  const consistent = listed.every((n) => n.instance_uuid === byNode.get(n.uuid) && n.allocation_uuid === n.instance_uuid);
  const pass =
    active.length === nodes && errors.length === allocations - nodes && booked.size === nodes && uuids.every((u) => booked.has(u)) && consistent;
  const stats = counted.group('reserve');
  counted.stop();
  const f1 = snapshot().stats;
  const forest = {
    refreshes: f1.refreshes - forest0.refreshes,
    refresh_ms: Math.round(f1.refreshMs - forest0.refreshMs),
    log_queries: f1.logQueries - forest0.logQueries,
    log_entries: f1.logEntries - forest0.logEntries,
    provider_reads: f1.providerReads - forest0.providerReads,
  };
  const scheduler = process.env.BAREMETAL_SCHEDULER ?? 'database';
  ctx.say(
    `[${scheduler} scheduler] ${allocations} allocations / ${nodes} nodes: settled in ${(settleMs / 1000).toFixed(2)} s (POSTs answered in ${(postMs / 1000).toFixed(2)} s); ` +
      `${active.length} active, ${errors.length} error, ${nodes - booked.size} nodes unbooked, consistent=${consistent} -> ${pass ? 'PASS' : 'FAIL'}`,
  );
  ctx.say(
    `  reservation attempts: ${stats.attempts} (won ${stats.won}, lost ${stats.taken}, held by another ${stats.held}, busy ${stats.busy}), refreshes ${stats.refreshes}, find steps ${stats.find}, reserve steps ${stats.reserveCalls}, fail steps ${stats.failed}; looking ${Math.round(stats.lookMs)} ms (${(stats.lookMs / Math.max(1, stats.find + stats.refreshes)).toFixed(1)} per look), reserving ${Math.round(stats.reserveMs)} ms (${(stats.reserveMs / Math.max(1, stats.attempts)).toFixed(1)} per attempt)`,
  );
  if (forest.refreshes)
    ctx.say(
      `  forest refreshes: ${forest.refreshes} (${(forest.refresh_ms / forest.refreshes).toFixed(1)} ms each), change-log queries ${forest.log_queries}, entries read ${forest.log_entries}, providers read again ${forest.provider_reads}`,
    );
  ctx.say(`  DynamoDB calls while settling: ${JSON.stringify(callCounts(calls))}; transaction items ${txItems}`);
  ctx.say(`  CPU while settling: this process ${nodeS.toFixed(2)} s, DynamoDB Local ${ddbS === undefined ? 'n/a' : `${ddbS.toFixed(2)} s`}`);
  ctx.emit({
    case: label,
    scheduler,
    nodes,
    allocations,
    settle_ms: Math.round(settleMs),
    post_ms: Math.round(postMs),
    active: active.length,
    error: errors.length,
    pass,
    stats,
    forest,
    ddb_calls: callCounts(calls),
    tx_items: txItems,
    cpu_node_s: Math.round(nodeS * 100) / 100,
    ...(ddbS === undefined ? {} : { cpu_ddb_s: Math.round(ddbS * 100) / 100 }),
  });
  return pass;
}

export const baremetalRaceScenario: Scenario = {
  name: 'baremetal-race',
  options: { rounds: VALUE, 'big-rounds': VALUE },
  description: 'bare-metal allocations racing for nodes: settle time, exactly-once reservation (Ironic: 25-34 s for 40 over 10)',
  async run(ctx) {
    const api = baremetalClient(ctx.stack.baremetalUrl);
    const rounds = ctx.quick ? 1 : Number(ctx.args.rounds ?? 3);
    let ok = true;
    for (let i = 0; i < rounds; i++) ok = (await raceCase(ctx, api, `40x10-${i}`, 10, 40)) && ok;
    const bigRounds = ctx.quick ? 1 : Number(ctx.args['big-rounds'] ?? 1);
    for (let i = 0; i < bigRounds; i++) ok = (await raceCase(ctx, api, bigRounds > 1 ? `200x50-${i}` : '200x50', 50, 200)) && ok;
    if (!ok) throw new Error('baremetal-race: a case failed (see above)');
  },
};
