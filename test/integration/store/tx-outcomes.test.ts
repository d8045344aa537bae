/**
 * The outcome resolution of store/ddb/tx.ts, one case at a time, against DynamoDB Local:
 * the answers of DynamoDB a lost response, a TransactionInProgress or a 5xx leave behind
 * are played by wrapping the store's client, and each case checks that transact()'s
 * answer is what the table holds — and that an attempt resolved as "not committed" can
 * never commit afterwards (its fence stops a late copy).
 */
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useTable } from '../harness.js';
import { listen } from '../../../functions/observability/counters.js';

/** these tests write bare items: their change, for the feed, says only that */
const ANY_CHANGE = { change: { op: 'internal' as const, note: 'a test write' } };

let client: typeof import('../../../functions/store/ddb/client.js');
let reads: typeof import('../../../functions/store/ddb/reads.js');
let tx: typeof import('../../../functions/store/ddb/tx.js');

beforeAll(async () => {
  await useTable();
  client = await import('../../../functions/store/ddb/client.js');
  reads = await import('../../../functions/store/ddb/reads.js');
  tx = await import('../../../functions/store/ddb/tx.js');
});

type Send = (cmd: unknown) => Promise<unknown>;
let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

/** replace the document client's send for TransactWriteCommand (the fence uses the raw client, untouched) */
function onTransact(fake: (cmd: TransactWriteCommand, real: Send) => Promise<unknown>): void {
  const doc = reads.ddb() as unknown as { send: Send };
  const real = doc.send.bind(doc);
  doc.send = (cmd) => (cmd instanceof TransactWriteCommand ? fake(cmd, real) : real(cmd));
  restore = () => {
    doc.send = real;
  };
}

function sdkError(name: string, attempts: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(name), { name, $metadata: { attempts }, ...extra });
}

const item = (id: string) => ({
  Put: { TableName: client.tableName(), Item: { pk: `TXTEST#${id}`, sk: 'X', v: 1 }, ConditionExpression: 'attribute_not_exists(pk)' },
});
const stored = async (id: string) =>
  !!(await reads.ddb().send(new GetCommand({ TableName: client.tableName(), Key: { pk: `TXTEST#${id}`, sk: 'X' }, ConsistentRead: true }))).Item;

describe('transact(): every outcome known', () => {
  it('committed, then the answer lost and the retries refused (TransactionInProgress): success', async () => {
    const id = randomUUID();
    onTransact(async (cmd, real) => {
      await real(cmd);
      throw sdkError('TransactionInProgressException', 3);
    });
    const counted = listen();
    expect(await tx.transact([item(id)], ANY_CHANGE)).toEqual({ ok: true });
    expect(await stored(id)).toBe(true);
    expect(counted.get('tx.resolvedCommitted')).toBe(1);
    counted.stop();
  });

  it('committed, then a retry cancelled by our own marker (the token not recognised): success', async () => {
    const id = randomUUID();
    onTransact(async (cmd, real) => {
      await real(cmd);
      // the retry, as DynamoDB would evaluate it afresh
      const again = new TransactWriteCommand({ ...cmd.input, ClientRequestToken: randomUUID() });
      try {
        await real(again);
      } catch (e) {
        throw Object.assign(e as Error, { $metadata: { attempts: 2 } });
      }
      throw new Error('the second copy should have been cancelled');
    });
    expect(await tx.transact([item(id)], ANY_CHANGE)).toEqual({ ok: true });
    expect(await stored(id)).toBe(true);
  });

  it('never arrived (5xx on every attempt): not committed, and a late copy can no longer commit', async () => {
    const id = randomUUID();
    let copy: TransactWriteCommand | undefined;
    onTransact(async (cmd) => {
      copy = cmd;
      throw sdkError('InternalServerError', 3, { $fault: 'server' });
    });
    const counted = listen();
    // not applied, and not worth planning again: the API answers a 5xx with nothing stored
    await expect(tx.transact([item(id)], ANY_CHANGE)).rejects.toThrow('InternalServerError');
    expect(counted.get('tx.resolvedNotCommitted')).toBe(1);
    counted.stop();
    restore!();
    restore = undefined;
    expect(await stored(id)).toBe(false);
    // the request was only delayed and arrives now: its marker meets the fence
    const late = await reads
      .ddb()
      .send(new TransactWriteCommand({ ...copy!.input, ClientRequestToken: randomUUID() }))
      .then(
        () => 'committed',
        (e: Error & { CancellationReasons?: Array<{ Code?: string }> }) => e.CancellationReasons?.map((r) => r.Code).join(','),
      );
    // the item, the change's feed item (store/ddb/feed.ts), then the marker, which meets the fence
    expect(late).toBe('None,None,ConditionalCheckFailed');
    expect(await stored(id)).toBe(false);
  });

  it('a cancellation, a conflict or throttling of the only attempt is an answer, not an unknown', async () => {
    const id = randomUUID();
    expect(await tx.transact([item(id)], ANY_CHANGE)).toEqual({ ok: true });
    const counted = listen();
    // a real condition failure
    const out = await tx.transact([item(id)], ANY_CHANGE);
    expect(out).toMatchObject({ ok: false, failed: [0], conflict: false });
    let answer = sdkError('TransactionConflictException', 1);
    onTransact(async () => {
      throw answer;
    });
    // another transaction in the way: planned again by the caller
    expect(await tx.transact([item(randomUUID())], ANY_CHANGE)).toMatchObject({ ok: false, conflict: true });
    // throttled after the SDK's own retries: a 5xx, nothing stored
    answer = sdkError('ThrottlingException', 1);
    await expect(tx.transact([item(randomUUID())], ANY_CHANGE)).rejects.toThrow('ThrottlingException');
    expect(counted.get('tx.unknown')).toBe(0);
    // the counters did count: the calls above were transactions
    expect(counted.get('tx.transactions')).toBeGreaterThan(0);
    counted.stop();
  });

  it('a Placement write is its own marker: the change-log entry, no marker item (the entry names the change)', async () => {
    const { logPut } = await import('../../../functions/store/placement/changelog.js');
    let sent: TransactWriteCommand | undefined;
    onTransact(async (cmd, real) => {
      sent = cmd;
      return real(cmd);
    });
    const id = randomUUID();
    expect(await tx.transact([item(id), logPut({ rereads: [id] })], ANY_CHANGE)).toEqual({ ok: true });
    // the item, the entry, and the change's feed item under the entry's sort key: no TX# marker
    const items = sent!.input.TransactItems!;
    expect(items).toHaveLength(3);
    expect(items[1]!.Put!.ConditionExpression).toBe('attribute_not_exists(pk)');
    expect(String(items[2]!.Put!.Item!.pk)).toMatch(/^FEED#/);
    expect(items[2]!.Put!.Item!.sk).toBe(items[1]!.Put!.Item!.sk);
    expect(items.some((it) => String(it.Put?.Item?.pk).startsWith('TX#'))).toBe(false);
    expect(typeof sent!.input.ClientRequestToken).toBe('string');
  });
});
