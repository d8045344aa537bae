/**
 * The intent protocol (functions/store/ddb/intents/) against DynamoDB Local: a change
 * larger than one transaction is seen all or nothing; its writer dying between steps —
 * before the commit point or after it — leaves nothing half done: readers see all of a
 * committed change and nothing of another, writers meeting its locks plan again (409
 * once their retries run out), and the maintenance function finishes it (committed) or
 * undoes it (its lease run out).
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTable } from '../harness.js';

/** these tests write bare items: their change, for the feed, says only that */
const ANY_CHANGE = { change: { op: 'internal' as const, note: 'a test write' } };

let tx: typeof import('../../../functions/store/ddb/tx.js');
let lock: typeof import('../../../functions/store/ddb/intents/lock.js');
let recovery: typeof import('../../../functions/store/ddb/intents/recovery.js');
let client: typeof import('../../../functions/store/ddb/client.js');
let reads: typeof import('../../../functions/store/ddb/reads.js');
let providers: typeof import('../../../functions/store/placement/providers.js');
let lifecycle: typeof import('../../../functions/usecases/placement/providers.js');
let inventories: typeof import('../../../functions/usecases/placement/provider-aspects.js');
let claims: typeof import('../../../functions/usecases/placement/allocations.js');
let consumers: typeof import('../../../functions/store/placement/consumers.js');
let retry: typeof import('../../../functions/store/ddb/retry.js');

// long enough that the steps below run within it on a busy machine (a full npm test at a
// load of 20 on 2 cores took more than 6 s); the tests then wait only until it ran out
const LEASE_MS = 15_000;

/** Run the maintenance function until the abandoned change's lease has run out and its locks are gone (or give up). */
async function maintainUntilUnlocked(rps: string[]): Promise<void> {
  const { runMaintenance } = await import('../../../functions/maintenance/handler.js');
  const deadline = Date.now() + LEASE_MS + 20_000;
  do {
    await sleep(500);
    await runMaintenance();
  } while ((await stillLocked(rps)) > 0 && Date.now() < deadline);
}

beforeAll(async () => {
  await useTable({ INTENT_LEASE_MS: String(LEASE_MS) });
  tx = await import('../../../functions/store/ddb/tx.js');
  lock = await import('../../../functions/store/ddb/intents/lock.js');
  recovery = await import('../../../functions/store/ddb/intents/recovery.js');
  client = await import('../../../functions/store/ddb/client.js');
  reads = await import('../../../functions/store/ddb/reads.js');
  providers = await import('../../../functions/store/placement/providers.js');
  lifecycle = await import('../../../functions/usecases/placement/providers.js');
  inventories = await import('../../../functions/usecases/placement/provider-aspects.js');
  claims = await import('../../../functions/usecases/placement/allocations.js');
  consumers = await import('../../../functions/store/placement/consumers.js');
  retry = await import('../../../functions/store/ddb/retry.js');
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Cmd = {
  constructor: { name: string };
  input?: { TransactItems?: Array<Record<string, { ConditionExpression?: string; Key?: { pk: string } }>> };
};

/**
 * The writer "dies" at the first TransactWriteItems `when` picks: that call never returns
 * (as a Lambda that timed out or crashed). Resolves once it happened.
 */
function dieAt(when: (cmd: Cmd) => boolean): Promise<void> {
  const doc = reads.ddb() as unknown as { send: (c: Cmd) => Promise<unknown> };
  const real = doc.send.bind(doc);
  return new Promise((died) => {
    doc.send = async (cmd: Cmd) => {
      if (cmd.constructor.name === 'TransactWriteCommand' && when(cmd)) {
        doc.send = real;
        died();
        return new Promise(() => undefined);
      }
      return real(cmd);
    };
  });
}

const first = (cmd: Cmd) => Object.values(cmd.input!.TransactItems![0]!)[0]!;
/** a lock step (it starts by checking the intent is still pending) after the first */
const secondLockStep = () => {
  let n = 0;
  return (cmd: Cmd) => String(first(cmd).Key?.pk ?? '').startsWith('INTENT#') && first(cmd).ConditionExpression === '#s = :pending' && ++n === 2;
};
/** the first apply step (after the commit point): actions conditioned on the lock */
const firstApplyStep = (cmd: Cmd) => first(cmd).ConditionExpression === '#lk = :lk';

async function provider(total = 1000): Promise<string> {
  const uuid = randomUUID();
  await lifecycle.createProvider({ uuid, name: `i-${uuid}` });
  await inventories.changeInventories(
    uuid,
    {},
    {
      kind: 'replace',
      inventories: { VCPU: { total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1 } },
    },
  );
  return uuid;
}

const claim = (consumer: string, allocations: Record<string, Record<string, number>>) =>
  claims.claimAllocations([{ uuid: consumer, allocations, project: 'p', user: 'u', generation: { check: false } }]);

/** a claim on 60 providers: 123 actions, more than one transaction holds */
async function largeClaim() {
  const rps = await Promise.all(Array.from({ length: 60 }, () => provider()));
  const consumer = randomUUID();
  return { rps, consumer, allocations: Object.fromEntries(rps.map((rp) => [rp, { VCPU: 1 }])) };
}

const used = async (rps: string[]) => {
  const read = await providers.getProviders(rps);
  return rps.map((rp) => read.get(rp)!.usages.VCPU ?? 0);
};

/** items of these providers still carrying a lock, read as stored */
async function stillLocked(rps: string[]): Promise<number> {
  const { batchGet } = await import('../../../functions/store/ddb/reads.js');
  const { K } = await import('../../../functions/store/placement/keys.js');
  const got = await batchGet(
    rps.flatMap((rp) => [K.provider(rp), K.providerState(rp)]),
    { raw: true },
  );
  return [...got.values()].filter((it) => it[lock.LOCK] !== undefined).length;
}

describe('changes larger than one transaction', () => {
  it('answers a failed condition of any action with its index, and leaves nothing written or locked', async () => {
    const ids = Array.from({ length: 150 }, () => randomUUID());
    const put = (id: string) => ({
      Put: { TableName: client.tableName(), Item: { pk: `T#${id}`, sk: 'T' }, ConditionExpression: 'attribute_not_exists(pk)' },
    });
    // one of them exists already
    expect(await tx.transact([put(ids[120]!)], ANY_CHANGE)).toEqual({ ok: true });
    const out = await tx.transact(ids.map(put), ANY_CHANGE);
    expect(out).toMatchObject({ ok: false, failed: [120], conflict: false });
    const { batchGet } = await import('../../../functions/store/ddb/reads.js');
    const got = await batchGet(
      ids.map((id) => ({ pk: `T#${id}`, sk: 'T' })),
      { raw: true },
    );
    expect([...got.keys()]).toHaveLength(1);
    expect([...got.values()][0]![lock.LOCK]).toBeUndefined();
  });

  it('an absence check leaves nothing behind, whether it names pk or a placeholder for it (store/ddb/expr.ts)', async () => {
    const { Expr } = await import('../../../functions/store/ddb/expr.js');
    const ids = Array.from({ length: 150 }, () => randomUUID());
    const put = (id: string) => new Expr().putItem({ pk: `T#${id}`, sk: 'T' });
    const spelled = { pk: `C#${randomUUID()}`, sk: 'C' };
    const named = { pk: `C#${randomUUID()}`, sk: 'C' };
    const e = new Expr();
    const checks = [
      { ConditionCheck: { TableName: client.tableName(), Key: spelled, ConditionExpression: 'attribute_not_exists(pk)' } },
      e.when(e.absent('pk')).checkItem(named),
    ];
    expect(await tx.transact([...checks, ...ids.map(put)], ANY_CHANGE)).toEqual({ ok: true });
    const { batchGet } = await import('../../../functions/store/ddb/reads.js');
    const got = await batchGet([spelled, named, ...ids.map((id) => ({ pk: `T#${id}`, sk: 'T' }))], { raw: true });
    // the placeholders the checks locked are gone; the Puts are written, unlocked
    expect(got.size).toBe(ids.length);
    expect([...got.values()].every((it) => String(it.pk).startsWith('T#') && it[lock.LOCK] === undefined)).toBe(true);
  });

  it('a writer that dies while locking: nothing of its change is seen; once its lease ran out the maintenance function undoes it', async () => {
    const { rps, consumer, allocations } = await largeClaim();
    const died = dieAt(secondLockStep());
    void claim(consumer, allocations);
    await died;
    // (the first lock step runs alongside the one that never returns)
    for (let i = 0; i < 50 && !(await stillLocked(rps)); i++) await sleep(50);
    expect(await stillLocked(rps)).toBeGreaterThan(0);
    // readers see every item as it was
    expect(await consumers.getConsumer(consumer)).toBeUndefined();
    expect(await used(rps)).toEqual(rps.map(() => 0));
    // a writer meeting the locks gives up (409 in the API)
    let locked = '';
    for (const rp of rps) if (await stillLocked([rp])) locked = rp;
    const blocked = () =>
      claims.claimAllocations(
        [{ uuid: randomUUID(), allocations: { [locked]: { VCPU: 1 } }, project: 'p', user: 'u', generation: { check: false } }],
        {
          maxAttempts: 2,
        },
      );
    await expect(blocked()).rejects.toThrow(retry.RetriesExhausted);
    // within its lease the maintenance function leaves it alone (its writer could be at work)
    const { runMaintenance } = await import('../../../functions/maintenance/handler.js');
    await runMaintenance();
    await expect(blocked()).rejects.toThrow(retry.RetriesExhausted);
    await maintainUntilUnlocked(rps);
    // undone: the next writer is written
    expect(await claim(randomUUID(), { [locked]: { VCPU: 5 } })).toBe(true);
    expect(await stillLocked(rps)).toBe(0);
    expect(await consumers.getConsumer(consumer)).toBeUndefined();
    expect(await used(rps)).toEqual(rps.map((rp) => (rp === locked ? 5 : 0)));
  }, 90_000);

  it('a writer that dies after the commit point: readers see all of its change at once, the maintenance function writes it', async () => {
    const { rps, consumer, allocations } = await largeClaim();
    const died = dieAt(firstApplyStep);
    void claim(consumer, allocations);
    await died;
    expect(await stillLocked(rps)).toBeGreaterThan(0);
    // a reader of any item it locked sees all of it (and writes nothing)
    expect(Object.keys((await consumers.getConsumer(consumer))!.allocations).sort()).toEqual([...rps].sort());
    expect(await used(rps)).toEqual(rps.map(() => 1));
    expect(await stillLocked(rps)).toBeGreaterThan(0);
    // committed: the maintenance function finishes it whatever its lease
    const { runMaintenance } = await import('../../../functions/maintenance/handler.js');
    await runMaintenance();
    expect(await stillLocked(rps)).toBe(0);
    expect(await claim(randomUUID(), { [rps[0]!]: { VCPU: 2 } })).toBe(true);
    expect(await used(rps)).toEqual(rps.map((_, i) => (i === 0 ? 3 : 1)));
  }, 60_000);

  it('the maintenance function finishes a committed change and undoes an abandoned one nobody touches', async () => {
    const done = await largeClaim();
    const diedAfter = dieAt(firstApplyStep);
    void claim(done.consumer, done.allocations);
    await diedAfter;
    const undone = await largeClaim();
    const diedBefore = dieAt(secondLockStep());
    void claim(undone.consumer, undone.allocations);
    await diedBefore;
    await maintainUntilUnlocked([...done.rps, ...undone.rps]);
    expect(await stillLocked([...done.rps, ...undone.rps])).toBe(0);
    const { batchGet } = await import('../../../functions/store/ddb/reads.js');
    const { K } = await import('../../../functions/store/placement/keys.js');
    // as stored (no reader helped): the committed change is applied, the other is not
    const states = await batchGet(
      [...done.rps, ...undone.rps].map((rp) => K.providerState(rp)),
      { raw: true },
    );
    for (const rp of done.rps) expect(states.get(`${K.providerState(rp).pk}\u0000RPU`)!.used.VCPU).toBe(1);
    for (const rp of undone.rps) expect(states.get(`${K.providerState(rp).pk}\u0000RPU`)!.used.VCPU ?? 0).toBe(0);
    expect(await consumers.getConsumer(undone.consumer)).toBeUndefined();
    expect(await recovery.recoverIntents()).toEqual({ open: 0, recovered: 0 });
  }, 90_000);
});
