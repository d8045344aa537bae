/**
 * The recovery of changes larger than one transaction (protocol.ts): the maintenance
 * function walks the open intents every minute and finishes each one nobody is finishing —
 * a committed one is rolled forward, one pending past its lease (its writer timed out or
 * crashed) or aborted is undone, its locks released.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddbPlain, tableName } from '../client.js';
import { log } from '../../../observability/log.js';
import { INTENT_KEYS, readIntent } from './items.js';
import { tally } from '../../../observability/counters.js';
import { abort, rollForward } from './protocol.js';

/**
 * Finish each of these intents that committed, abort each one whose writer is gone (its
 * lease ran out), release each aborted one's locks (the maintenance function's recovery).
 * One within its lease is left alone (its writer is at work).
 */
export async function helpIntents(ids: string[]): Promise<void> {
  for (const id of ids) {
    const it = await readIntent(id);
    if (!it || it.closed) continue;
    tally('intent.helped');
    if (it.status === 'committed') await rollForward(it);
    else if (it.status === 'aborted') await abort(id);
    else if (it.lease < Date.now()) await abort(id);
  }
}

/** The maintenance function's pass: every open intent nobody is finishing (committed, or past its lease). */
export async function recoverIntents(): Promise<{ open: number; recovered: number }> {
  let open = 0;
  let recovered = 0;
  for (const pk of INTENT_KEYS.openPks) {
    let start: Record<string, unknown> | undefined;
    do {
      const r = await ddbPlain().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'gsi2',
          KeyConditionExpression: 'gsi2pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ExclusiveStartKey: start,
        }),
      );
      for (const it of r.Items ?? []) {
        open++;
        const id = String(it.pk).slice('INTENT#'.length);
        const now = await readIntent(id);
        if (!now || now.closed) continue;
        if (now.status !== 'pending' || now.lease < Date.now()) {
          try {
            await helpIntents([id]);
            recovered++;
          } catch (e) {
            log.error('recovering a change larger than one transaction failed', { intent: id, error: (e as Error)?.name ?? String(e) });
          }
        }
      }
      start = r.LastEvaluatedKey;
    } while (start);
  }
  return { open, recovered };
}
