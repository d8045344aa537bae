/**
 * The warm provider snapshot against DynamoDB Local: read-your-writes through the change
 * log, the overlap window for late-committing writes, writes committed later than it
 * announced again, and the periodic full resync that catches a write the log never showed.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { callCounts, ddbCallsDuring } from '../../../bench/kit.js';
import { useTable } from '../harness.js';

let store: typeof import('../../../functions/store/placement/providers.js');
let lifecycle: typeof import('../../../functions/usecases/placement/providers.js');
let snap: typeof import('../../../functions/store/placement/snapshot.js');
let client: typeof import('../../../functions/store/ddb/client.js');
let reads: typeof import('../../../functions/store/ddb/reads.js');
let cfg: typeof import('../../../functions/config.js');
let log: typeof import('../../../functions/store/placement/changelog.js');

beforeAll(async () => {
  await useTable({ SNAPSHOT_RESYNC_S: '0' });
  store = await import('../../../functions/store/placement/providers.js');
  lifecycle = await import('../../../functions/usecases/placement/providers.js');
  snap = await import('../../../functions/store/placement/snapshot.js');
  client = await import('../../../functions/store/ddb/client.js');
  reads = await import('../../../functions/store/ddb/reads.js');
  cfg = await import('../../../functions/config.js');
  log = await import('../../../functions/store/placement/changelog.js');
});

async function rename(uuid: string, name: string) {
  // a write that bypasses the change log (as if its entry were never seen)
  await reads.ddb().send(
    new UpdateCommand({
      TableName: client.tableName(),
      Key: { pk: `RP#${uuid}`, sk: 'RP' },
      UpdateExpression: 'SET #n = :n',
      ExpressionAttributeNames: { '#n': 'name' },
      ExpressionAttributeValues: { ':n': name },
    }),
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Run `body` while the first DynamoDB call of the given command is held back `ms` before it is sent. */
async function delayed<T>(command: string, ms: number, body: () => Promise<T>): Promise<T> {
  const real = reads.ddb().send.bind(reads.ddb());
  let held = false;
  (reads.ddb() as unknown as { send: unknown }).send = async (cmd: { constructor: { name: string } }) => {
    if (!held && cmd.constructor.name === command) {
      held = true;
      await sleep(ms);
    }
    return real(cmd as never);
  };
  try {
    return await body();
  } finally {
    (reads.ddb() as unknown as { send: unknown }).send = real;
  }
}

describe('provider snapshot', () => {
  it('shows every committed write to the next request (read-your-writes through the change log)', async () => {
    const s = snap.snapshot();
    await s.fresh();
    const uuid = randomUUID();
    const made = await lifecycle.createProvider({ uuid, name: `snap-${uuid}` });
    expect('uuid' in made).toBe(true);
    expect((await s.fresh()).get(uuid)?.name).toBe(`snap-${uuid}`);
    expect(await lifecycle.deleteProvider(uuid)).toBe(true);
    expect((await s.fresh()).get(uuid)).toBeUndefined();
  });

  it('picks up a log entry that commits after a later one was read, within the overlap window', async () => {
    const s = snap.snapshot();
    const uuid = randomUUID();
    await lifecycle.createProvider({ uuid, name: `late-${uuid}` });
    await s.fresh();
    await rename(uuid, `renamed-${uuid}`);
    // the entry carries a timestamp from before the last refresh (a slow transaction)
    const entry = log.logPut({ rereads: [uuid] }, log.logStamp(Date.now() - 2_000));
    await reads.ddb().send(new PutCommand(entry.Put as never));
    expect((await s.fresh()).get(uuid)?.name).toBe(`renamed-${uuid}`);
  });

  it('announces again, before answering it, a write that commits later than the overlap window allows', async () => {
    const s = snap.snapshot();
    const uuid = randomUUID();
    await lifecycle.createProvider({ uuid, name: `slow-${uuid}` });
    await s.fresh();
    // the transaction reaches DynamoDB (and commits) this long after its entry's timestamp
    const delay = log.overlapMs() + 1_000;
    const done = await delayed('TransactWriteCommand', delay, async () => {
      const writing = lifecycle.updateProvider(uuid, { name: `renamed-${uuid}` }, { allowReparenting: false, subtree: async () => [] });
      // a refresh after the entry's timestamp, before the commit: it cannot see it yet
      await sleep(delay - 500);
      expect((await s.fresh()).get(uuid)?.name).toBe(`slow-${uuid}`);
      return writing;
    });
    expect(done).toMatchObject({ name: `renamed-${uuid}` });
    // the next refresh reads from the last one's start minus the overlap: past the
    // original entry, so only the entry announcing the write again can show it
    expect((await s.fresh()).get(uuid)?.name).toBe(`renamed-${uuid}`);
  });

  it('announces again a bulk-loaded batch that was stored later than the overlap window allows', async () => {
    const { bulkLoadProviders } = await import('../../../functions/store/placement/bulk.js');
    const s = snap.snapshot();
    await s.fresh();
    const uuid = randomUUID();
    const delay = log.overlapMs() + 1_000;
    const result = await delayed('BatchWriteCommand', delay, async () => {
      const loading = bulkLoadProviders([{ uuid, name: `bulk-slow-${uuid}` }]);
      await sleep(delay - 500);
      expect((await s.fresh()).get(uuid)).toBeUndefined();
      return loading;
    });
    // the loader counts the entry written again among its own
    expect(result.logEntries.length).toBe(2);
    expect((await s.fresh()).get(uuid)?.name).toBe(`bulk-slow-${uuid}`);
  });

  it('repairs, at the next full resync, a write whose log entry was never seen', async () => {
    const s = snap.snapshot();
    const uuid = randomUUID();
    await lifecycle.createProvider({ uuid, name: `lost-${uuid}` });
    await s.fresh();
    await rename(uuid, `repaired-${uuid}`);
    expect((await s.fresh()).get(uuid)?.name).toBe(`lost-${uuid}`);
    process.env.SNAPSHOT_RESYNC_S = '1';
    cfg.resetConfig();
    await new Promise((r) => setTimeout(r, 1_100));
    const before = s.stats.resyncs;
    expect((await s.fresh()).get(uuid)?.name).toBe(`repaired-${uuid}`);
    expect(s.stats.resyncs).toBe(before + 1);
    process.env.SNAPSHOT_RESYNC_S = '0';
    cfg.resetConfig();
  });
});

describe('reading many providers at once', () => {
  it('reads what one Query per provider reads, in a few BatchGetItem calls when there are many', async () => {
    const inv = await import('../../../functions/usecases/placement/provider-aspects.js');
    const uuids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const uuid = randomUUID();
      expect('uuid' in (await lifecycle.createProvider({ uuid, name: `many-${uuid}` }))).toBe(true);
      if (i % 2) {
        const res = await inv.changeInventories(
          uuid,
          {},
          {
            kind: 'replace',
            inventories: { VCPU: { total: 8 + i, reserved: 0, min_unit: 1, max_unit: 8, step_size: 1, allocation_ratio: 1 } },
          },
        );
        expect('uuid' in res).toBe(true);
      }
      uuids.push(uuid);
    }
    const missing = randomUUID();
    const one = new Map<string, unknown>();
    for (const u of uuids) one.set(u, await store.readProvider(u));
    const { value: many, calls } = await ddbCallsDuring(() => store.readProviders([...uuids, missing]));
    expect(many.size).toBe(uuids.length);
    expect(many.has(missing)).toBe(false);
    for (const u of uuids) expect(many.get(u), u).toEqual(one.get(u));
    // both items of 50 providers per call: 61 providers are 2 calls, not 61 Queries
    expect(callCounts(calls)).toEqual({ BatchGetItem: 2 });
    // a few providers: one Query each, in parallel (one read unit each)
    const few = await ddbCallsDuring(() => store.readProviders(uuids.slice(0, 3)));
    expect(callCounts(few.calls)).toEqual({ Query: 3 });
    expect([...few.value.keys()].sort()).toEqual(uuids.slice(0, 3).sort());
  });
});

describe('provider snapshot failures', () => {
  it('does not lose changes when a refresh fails half-way (the next refresh applies them)', async () => {
    const s = snap.snapshot();
    await s.fresh();
    const uuid = randomUUID();
    await lifecycle.createProvider({ uuid, name: `flaky-${uuid}` });
    // make the re-read of the changed provider (a Query of its partition between its two items) fail once
    const real = reads.ddb().send.bind(reads.ddb());
    let failed = false;
    (reads.ddb() as unknown as { send: unknown }).send = async (cmd: {
      constructor: { name: string };
      input?: { ExpressionAttributeValues?: Record<string, unknown> };
    }) => {
      if (!failed && cmd.constructor.name === 'QueryCommand' && cmd.input?.ExpressionAttributeValues?.[':pk'] === `RP#${uuid}`) {
        failed = true;
        throw new Error('injected provider read failure');
      }
      return real(cmd as never);
    };
    try {
      await expect(s.fresh()).rejects.toThrow('injected provider read failure');
    } finally {
      (reads.ddb() as unknown as { send: unknown }).send = real;
    }
    expect((await s.fresh()).get(uuid)?.name).toBe(`flaky-${uuid}`);
  });
});

describe('usage changes the change log carries', () => {
  let claims: typeof import('../../../functions/usecases/placement/allocations.js');
  let inv: typeof import('../../../functions/usecases/placement/provider-aspects.js');
  beforeAll(async () => {
    claims = await import('../../../functions/usecases/placement/allocations.js');
    inv = await import('../../../functions/usecases/placement/provider-aspects.js');
  });

  const claim = (consumer: string, allocations: Record<string, Record<string, number>>) =>
    claims.claimAllocations([{ uuid: consumer, allocations, project: 'p', user: 'u', generation: { check: false } }]);

  async function providerWith(total: number): Promise<string> {
    const uuid = randomUUID();
    await lifecycle.createProvider({ uuid, name: `usage-${uuid}` });
    const res = await inv.changeInventories(
      uuid,
      {},
      {
        kind: 'replace',
        inventories: { VCPU: { total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1 } },
      },
    );
    expect('uuid' in res).toBe(true);
    return uuid;
  }

  /** usage, generation and allocation count as a fresh read of the table has them */
  async function stored(uuids: string[]) {
    const read = await store.getProviders(uuids);
    return uuids.map((u) => {
      const p = read.get(u)!;
      return { uuid: u, used: p.usages.VCPU ?? 0, generation: p.generation, allocs: p.allocationCount, inventory: p.inventories.VCPU?.total };
    });
  }

  function held(s: InstanceType<typeof snap.ProviderSnapshot>, uuids: string[]) {
    return uuids.map((u) => {
      const p = s.forest.get(u)!;
      return { uuid: u, used: p.usages.VCPU ?? 0, generation: p.generation, allocs: p.allocationCount, inventory: p.inventories.VCPU?.total };
    });
  }

  it("adds a claim's and a delete's usage change to the provider it holds, without reading the provider", async () => {
    const s = new snap.ProviderSnapshot({ useImage: false });
    const rp = await providerWith(100);
    await s.fresh();
    const c = randomUUID();
    expect(await claim(c, { [rp]: { VCPU: 7 } })).toBe(true);
    const reads = s.stats.providerReads;
    await s.fresh();
    expect(held(s, [rp])).toEqual(await stored([rp]));
    expect(held(s, [rp])[0]).toMatchObject({ used: 7, allocs: 1 });
    expect(await claims.deleteConsumerAllocations(c)).toBe(true);
    await s.fresh();
    expect(held(s, [rp])).toEqual(await stored([rp]));
    expect(held(s, [rp])[0]).toMatchObject({ used: 0, allocs: 0 });
    expect(s.stats.providerReads).toBe(reads);
  });

  it('never adds a claim twice when the provider is read again after the claim committed', async () => {
    const s = new snap.ProviderSnapshot({ useImage: false });
    const rp = await providerWith(100);
    await s.fresh();
    expect(await claim(randomUUID(), { [rp]: { VCPU: 1 } })).toBe(true);
    // an inventory change: the next refresh reads the provider again ...
    const vcpu = { total: 200, reserved: 0, min_unit: 1, max_unit: 100, step_size: 1, allocation_ratio: 1 };
    await inv.changeInventories(rp, {}, { kind: 'update', resourceClass: 'VCPU', inventory: vcpu });
    // ... and a claim commits after that refresh read the log, before it reads the provider
    const real = reads.ddb().send.bind(reads.ddb());
    let injected = false;
    (reads.ddb() as unknown as { send: unknown }).send = async (cmd: {
      constructor: { name: string };
      input?: { ExpressionAttributeValues?: Record<string, unknown> };
    }) => {
      if (!injected && cmd.constructor.name === 'QueryCommand' && cmd.input?.ExpressionAttributeValues?.[':pk'] === `RP#${rp}`) {
        injected = true;
        (reads.ddb() as unknown as { send: unknown }).send = real;
        expect(await claim(randomUUID(), { [rp]: { VCPU: 2 } })).toBe(true);
      }
      return real(cmd as never);
    };
    try {
      await s.fresh();
    } finally {
      (reads.ddb() as unknown as { send: unknown }).send = real;
    }
    expect(injected).toBe(true);
    // the read held the second claim; the next refresh reads its entry, and must not add it again
    await s.fresh();
    expect(held(s, [rp])).toEqual(await stored([rp]));
    expect(held(s, [rp])[0]).toMatchObject({ used: 3, allocs: 2, inventory: 200 });
  });

  it('after random concurrent claims, moves, deletes and inventory changes, every warm snapshot holds what the table holds', async () => {
    const rps = [await providerWith(1000), await providerWith(1000), await providerWith(1000)];
    const readers = [0, 1, 2].map(() => new snap.ProviderSnapshot({ useImage: false }));
    await Promise.all(readers.map((r) => r.fresh()));
    const consumers = Array.from({ length: 6 }, () => randomUUID());
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let writing = true;
    const refreshing = readers.map(async (r) => {
      while (writing) {
        await r.fresh();
        await sleep(rand(20));
      }
    });
    const writers = [0, 1, 2, 3].map(async (w) => {
      for (let i = 0; i < 25; i++) {
        const c = consumers[(w + i * 3) % consumers.length]!;
        const op = rand(10);
        if (op < 5) await claim(c, { [rps[rand(3)]!]: { VCPU: 1 + rand(5) } });
        else if (op < 7) await claim(c, { [rps[rand(3)]!]: { VCPU: 1 + rand(3) }, [rps[rand(3)]!]: { VCPU: 1 } });
        else if (op < 9) await claims.deleteConsumerAllocations(c);
        else
          await inv.changeInventories(
            rps[rand(3)]!,
            {},
            {
              kind: 'update',
              resourceClass: 'VCPU',
              inventory: { total: 1001 + w * 25 + i, reserved: 0, min_unit: 1, max_unit: 1000, step_size: 1, allocation_ratio: 1 },
            },
          );
      }
    });
    await Promise.all(writers);
    writing = false;
    await Promise.all(refreshing);
    const truth = await stored(rps);
    for (const r of readers) {
      await r.fresh();
      expect(held(r, rps)).toEqual(truth);
    }
  });
});
