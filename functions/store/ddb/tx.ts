/**
 * TransactWriteItems with Placement-shaped outcomes. DynamoDB cancels a transaction
 * either because one of our conditions failed (ConditionalCheckFailed, with the
 * index of the failing action) or because another transaction touched the same item
 * (TransactionConflict): the first is a domain answer, the second is retried.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ddb } from './client.js';
import { Problem } from '../../core/errors.js';

export type TxItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export const MAX_TX_ACTIONS = 100;

export type TxOutcome =
  | { ok: true }
  | {
      ok: false;
      /** indexes of actions whose condition failed */
      failed: number[];
      /** the items as they were when a condition failed (ReturnValuesOnConditionCheckFailure) */
      oldItems: Record<number, Record<string, unknown> | undefined>;
      /** cancelled because of a concurrent transaction (retryable) */
      conflict: boolean;
    };

/** A change too big for one DynamoDB transaction: refused (never half-applied). */
export class TooManyActionsError extends Problem {
  constructor(readonly count: number) {
    super(409, `This change would modify ${count} items at once; at most ${MAX_TX_ACTIONS} can change atomically. Split the request.`);
  }
}

export async function transact(items: TxItem[]): Promise<TxOutcome> {
  if (items.length === 0) return { ok: true };
  if (items.length > MAX_TX_ACTIONS) throw new TooManyActionsError(items.length);
  try {
    await ddb().send(new TransactWriteCommand({ TransactItems: items }));
    return { ok: true };
  } catch (e) {
    if (e instanceof TransactionCanceledException || (e as Error)?.name === 'TransactionCanceledException') {
      const reasons = (e as TransactionCanceledException).CancellationReasons ?? [];
      const failed: number[] = [];
      const oldItems: Record<number, Record<string, unknown> | undefined> = {};
      let conflict = false;
      reasons.forEach((r, i) => {
        if (r.Code === 'ConditionalCheckFailed') {
          failed.push(i);
          oldItems[i] = r.Item ? unmarshall(r.Item as never) : undefined;
        } else if (r.Code === 'TransactionConflict' || r.Code === 'ThrottlingError' || r.Code === 'ProvisionedThroughputExceeded') {
          conflict = true;
        }
      });
      if (!failed.length && !conflict) conflict = true;
      return { ok: false, failed, oldItems, conflict: conflict && failed.length === 0 };
    }
    if ((e as Error)?.name === 'TransactionConflictException' || (e as Error)?.name === 'TransactionInProgressException') {
      return { ok: false, failed: [], oldItems: {}, conflict: true };
    }
    throw e;
  }
}
