/**
 * The warm provider snapshot against DynamoDB Local: read-your-writes through the change
 * log, the overlap window for late-committing writes, writes committed later than it
 * announced again, and the periodic full resync that catches a write the log never showed.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTable } from '../harness.js';

let store: typeof import('../../../functions/store/placement/providers.js');
let snap: typeof import('../../../functions/store/placement/snapshot.js');
let client: typeof import('../../../functions/store/ddb/client.js');
let cfg: typeof import('../../../functions/config.js');
let log: typeof import('../../../functions/store/placement/changelog.js');

beforeAll(async () => {
  await useTable({ SNAPSHOT_RESYNC_S: '0' });
  store = await import('../../../functions/store/placement/providers.js');
  snap = await import('../../../functions/store/placement/snapshot.js');
  client = await import('../../../functions/store/ddb/client.js');
  cfg = await import('../../../functions/config.js');
  log = await import('../../../functions/store/placement/changelog.js');
});

async function rename(uuid: string, name: string) {
  // a write that bypasses the change log (as if its entry were never seen)
  await client.ddb().send(
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
  const real = client.ddb().send.bind(client.ddb());
  let held = false;
  (client.ddb() as unknown as { send: unknown }).send = async (cmd: { constructor: { name: string } }) => {
    if (!held && cmd.constructor.name === command) {
      held = true;
      await sleep(ms);
    }
    return real(cmd as never);
  };
  try {
    return await body();
  } finally {
    (client.ddb() as unknown as { send: unknown }).send = real;
  }
}

describe('provider snapshot', () => {
  it('shows every committed write to the next request (read-your-writes through the change log)', async () => {
    const s = snap.snapshot();
    await s.fresh();
    const uuid = randomUUID();
    const made = await store.createProvider({ uuid, name: `snap-${uuid}` });
    expect('uuid' in made).toBe(true);
    expect((await s.fresh()).get(uuid)?.name).toBe(`snap-${uuid}`);
    expect(await store.deleteProvider(uuid)).toBe(true);
    expect((await s.fresh()).get(uuid)).toBeUndefined();
  });

  it('picks up a log entry that commits after a later one was read, within the overlap window', async () => {
    const s = snap.snapshot();
    const uuid = randomUUID();
    await store.createProvider({ uuid, name: `late-${uuid}` });
    await s.fresh();
    await rename(uuid, `renamed-${uuid}`);
    // the entry carries a timestamp from before the last refresh (a slow transaction)
    const entry = log.logPut([uuid], Date.now() - 2_000);
    await client.ddb().send(new PutCommand(entry.Put as never));
    expect((await s.fresh()).get(uuid)?.name).toBe(`renamed-${uuid}`);
  });

  it('announces again, before answering it, a write that commits later than the overlap window allows', async () => {
    const s = snap.snapshot();
    const uuid = randomUUID();
    await store.createProvider({ uuid, name: `slow-${uuid}` });
    await s.fresh();
    // the transaction reaches DynamoDB (and commits) this long after its entry's timestamp
    const delay = log.OVERLAP_MS + 1_000;
    const done = await delayed('TransactWriteCommand', delay, async () => {
      const writing = store.updateProvider(uuid, { name: `renamed-${uuid}` }, { allowReparenting: false, subtree: async () => [] });
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
    const delay = log.OVERLAP_MS + 1_000;
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
    await store.createProvider({ uuid, name: `lost-${uuid}` });
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

describe('provider snapshot failures', () => {
  it('does not lose changes when a refresh fails half-way (the next refresh applies them)', async () => {
    const s = snap.snapshot();
    await s.fresh();
    const uuid = randomUUID();
    await store.createProvider({ uuid, name: `flaky-${uuid}` });
    // make the re-read of changed providers fail once
    const real = client.ddb().send.bind(client.ddb());
    let failed = false;
    (client.ddb() as unknown as { send: unknown }).send = async (cmd: { constructor: { name: string } }) => {
      if (!failed && cmd.constructor.name === 'BatchGetCommand') {
        failed = true;
        throw new Error('injected BatchGet failure');
      }
      return real(cmd as never);
    };
    try {
      await expect(s.fresh()).rejects.toThrow('injected BatchGet failure');
    } finally {
      (client.ddb() as unknown as { send: unknown }).send = real;
    }
    expect((await s.fresh()).get(uuid)?.name).toBe(`flaky-${uuid}`);
  });
});
