/**
 * The one shape of every generation-guarded provider write (inventories, traits,
 * aggregates): read the provider, let the caller plan the change from what it read,
 * then write it in ONE TransactWriteItems
 *   Update RP   SET <planned attributes>[, updated]  [ADD gen 1][, invVer 1]
 *               IF attribute_exists(pk) AND gen = <generation read> [AND <planned conditions>]
 *   Update refs +1 / -1 on the custom traits / classes gained / lost
 *   [the caller's extra actions, e.g. Put AGG IF absent: an aggregate's first sighting]
 *   Put LOG     (the provider changed; every process's snapshot re-reads it)
 * The condition on the generation read makes the plan's view of the provider the one
 * the write applies to: anything that changed the provider in between (another
 * write, a claim: claims bump the generation too) makes the transaction fail, and the
 * write is re-planned on a fresh read. When the client sent a generation, a fresh read
 * that does not carry it is the client's 409 (placement.concurrent_update).
 */
import type { ProviderRecord } from '../../core/placement/model.js';
import { tableName } from '../ddb/client.js';
import { logPut } from './changelog.js';
import { K } from './keys.js';
import { getProvider } from './providers.js';
import { refUpdates, type RefChange } from './refs.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { RETRY, withRetries } from '../ddb/retry.js';

export type GuardedWriteFailure =
  | { error: 'not_found' }
  /** the client's generation is not the provider's */
  | { error: 'generation' };

export interface ProviderPatch {
  /** item attributes to SET (item attribute names, see providers.ts toItem) */
  set: Record<string, unknown>;
  /** bump the generation (and `updated`) */
  bumpGeneration: boolean;
  /** bump invVer: every inventory change does (claims condition on it) */
  bumpInvVersion?: boolean;
  /** extra condition clauses on the provider item; `#x` / `:x` placeholders they use */
  conditions?: string[];
  names?: Record<string, string>;
  values?: Record<string, unknown>;
  /** reference-count changes on custom traits / resource classes */
  refs?: RefChange[];
  /** more actions for the same transaction (an aggregate's first sighting) */
  extra?: TxItem[];
  /** the provider as it is after the write (generation, invVersion, updatedAt are filled in) */
  next: ProviderRecord;
}

export interface GuardedWriteOptions {
  /** the generation the client sent; undefined = whatever was read (lost races re-plan) */
  generation?: number;
  /** a record the caller has just read: saves the first read */
  current?: ProviderRecord;
}

/**
 * Plan and apply one change to a provider. `plan` returns the patch, `null` when there
 * is nothing to change (nothing is written, the provider is returned as read), or its
 * own failure (returned as is).
 */
export async function guardedProviderWrite<F extends { error: string }>(
  uuid: string,
  opts: GuardedWriteOptions,
  plan: (cur: ProviderRecord) => Promise<ProviderPatch | F | null>,
): Promise<ProviderRecord | F | GuardedWriteFailure> {
  let first = opts.current;
  return withRetries<ProviderRecord | F | GuardedWriteFailure>(async () => {
    const cur = first ?? (await getProvider(uuid));
    first = undefined;
    if (!cur) return { error: 'not_found' } as const;
    if (opts.generation !== undefined && cur.generation !== opts.generation) return { error: 'generation' } as const;
    const patch = await plan(cur);
    if (patch === null) return cur;
    if ('error' in patch) return patch;

    const now = new Date().toISOString();
    const names: Record<string, string> = { '#gen': 'gen', ...patch.names };
    const values: Record<string, unknown> = { ':g': cur.generation, ...patch.values };
    const sets: string[] = [];
    const adds: string[] = [];
    Object.entries(patch.set).forEach(([attr, value], i) => {
      names[`#s${i}`] = attr;
      values[`:s${i}`] = value;
      sets.push(`#s${i} = :s${i}`);
    });
    if (patch.bumpGeneration) {
      names['#updated'] = 'updated';
      values[':now'] = now;
      sets.push('#updated = :now');
      adds.push('#gen :one');
    }
    if (patch.bumpInvVersion) {
      names['#invVer'] = 'invVer';
      adds.push('#invVer :one');
    }
    if (adds.length) values[':one'] = 1;
    const update = [sets.length ? `SET ${sets.join(', ')}` : '', adds.length ? `ADD ${adds.join(', ')}` : ''].filter(Boolean).join(' ');
    const items: TxItem[] = [
      {
        Update: {
          TableName: tableName(),
          Key: K.provider(uuid),
          UpdateExpression: update,
          ConditionExpression: ['attribute_exists(pk)', '#gen = :g', ...(patch.conditions ?? [])].join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      ...refUpdates(patch.refs ?? []).items,
      ...(patch.extra ?? []),
      logPut([uuid]),
    ];
    const out = await transact(items);
    if (!out.ok) return RETRY; // something moved under us (or a class/trait vanished): re-plan on a fresh read
    return {
      ...patch.next,
      generation: cur.generation + (patch.bumpGeneration ? 1 : 0),
      invVersion: cur.invVersion + (patch.bumpInvVersion ? 1 : 0),
      updatedAt: patch.bumpGeneration ? now : cur.updatedAt,
    };
  });
}
