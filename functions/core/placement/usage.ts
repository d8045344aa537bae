/**
 * Project / user usage aggregates (what GET /usages answers, the way Nova's quota
 * counting asks: seed 001), pure. Every claim changes them in its own transaction, so
 * GET /usages reads a handful of small items whatever the number of consumers.
 *
 * An aggregate item holds, per consumer type (key '' = no type, "unknown"):
 *   n:<type>          number of consumers of that type holding allocations
 *   r:<type>:<class>  amount allocated
 * One item per user of a project and shard (hash of the consumer): a claim writes one
 * item; a project's usage is the sum of its users' items over the shards, a user's the
 * sum of its own.
 */
import type { ConsumerChange } from './claim.js';
import { UNKNOWN_CONSUMER_TYPE, type AllocationMap, type ConsumerRecord } from './consumers.js';
import { NO_CUSTOM_ORDER, compareResourceClasses, inResourceClassOrder, sortResourceClasses, type CustomOrder } from './standard.js';

export const COUNT_PREFIX = 'n:';
export const AMOUNT_PREFIX = 'r:';

const typeKey = (t: string | null) => t ?? '';
export const countAttr = (type: string | null) => `${COUNT_PREFIX}${typeKey(type)}`;
export const amountAttr = (type: string | null, rc: string) => `${AMOUNT_PREFIX}${typeKey(type)}:${rc}`;

/** One aggregate item's changes: one user's usage in one shard of a project. */
export interface UsageDelta {
  project: string;
  user: string;
  shard: number;
  add: Record<string, number>;
}

function totals(a: AllocationMap): Record<string, number> {
  const t: Record<string, number> = {};
  for (const res of Object.values(a)) for (const [rc, n] of Object.entries(res)) t[rc] = (t[rc] ?? 0) + n;
  return t;
}

/**
 * The aggregate changes of a set of consumer changes, merged per item (a transaction
 * may touch each item once). Legacy allocations (no record) were never counted: like
 * upstream, usages only count consumers that have a record.
 */
export function usageDeltas(changes: ConsumerChange[], shardOf: (consumer: string) => number): UsageDelta[] {
  const items = new Map<string, UsageDelta>();
  const apply = (c: ConsumerRecord, sign: number, shard: number) => {
    const key = JSON.stringify([c.project, c.user, shard]);
    let it = items.get(key);
    if (!it) {
      it = { project: c.project, user: c.user, shard, add: {} };
      items.set(key, it);
    }
    const inc = (attr: string, d: number) => (it!.add[attr] = (it!.add[attr] ?? 0) + d);
    inc(countAttr(c.type), sign);
    for (const [rc, n] of Object.entries(totals(c.allocations))) inc(amountAttr(c.type, rc), sign * n);
  };
  for (const ch of changes) {
    const shard = shardOf(ch.uuid);
    if (ch.before) apply(ch.before, -1, shard);
    if (ch.after) apply(ch.after, 1, shard);
  }
  const out: UsageDelta[] = [];
  for (const it of items.values()) {
    for (const [k, v] of Object.entries(it.add)) if (v === 0) delete it.add[k];
    if (Object.keys(it.add).length) out.push(it);
  }
  return out;
}

/** Usage of one consumer type: consumer count and amounts by class. */
export interface TypeUsage {
  count: number;
  resources: Record<string, number>;
}

/** Add up aggregate items (their n:/r: attributes) into usage per type key ('' = none). */
export function sumUsage(items: Iterable<Record<string, unknown>>): Map<string, TypeUsage> {
  const out = new Map<string, TypeUsage>();
  const get = (t: string) => {
    let u = out.get(t);
    if (!u) out.set(t, (u = { count: 0, resources: {} }));
    return u;
  };
  for (const it of items) {
    for (const [attr, v] of Object.entries(it)) {
      if (typeof v !== 'number') continue;
      if (attr.startsWith(COUNT_PREFIX)) get(attr.slice(COUNT_PREFIX.length)).count += v;
      else if (attr.startsWith(AMOUNT_PREFIX)) {
        const rest = attr.slice(AMOUNT_PREFIX.length);
        const i = rest.lastIndexOf(':');
        const u = get(rest.slice(0, i));
        const rc = rest.slice(i + 1);
        u.resources[rc] = (u.resources[rc] ?? 0) + v;
      }
    }
  }
  for (const [t, u] of out) {
    for (const [rc, n] of Object.entries(u.resources)) if (n === 0) delete u.resources[rc];
    if (u.count <= 0 && !Object.keys(u.resources).length) out.delete(t);
  }
  return out;
}

/** GET /usages before 1.38: amounts by class over every consumer type, in Placement's class order (its GROUP BY class id). */
export function totalUsagesView(byType: Map<string, TypeUsage>, order: CustomOrder = NO_CUSTOM_ORDER): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const u of byType.values()) for (const [rc, n] of Object.entries(u.resources)) sums[rc] = (sums[rc] ?? 0) + n;
  return inResourceClassOrder(sums, order);
}

/**
 * GET /usages from 1.38 (usage.get_by_consumer_type): grouped by consumer type with
 * consumer_count; `filter` 'all' groups everything under "all", 'unknown' selects
 * consumers without a type, any other name that type only.
 *
 * Order as upstream builds it from rows grouped by (class id, consumer type id): a
 * type's classes in class order with consumer_count right after its first class, and
 * the types by their first class. (Between types whose first class is the same,
 * upstream goes by the order in which the deployment first used each type, which
 * Berth does not record: "unknown" first, then by name.)
 */
export function usagesByTypeView(
  byType: Map<string, TypeUsage>,
  filter?: string,
  order: CustomOrder = NO_CUSTOM_ORDER,
): Record<string, Record<string, number>> {
  const cmp = compareResourceClasses(order);
  const view = (u: TypeUsage) => {
    const out: Record<string, number> = {};
    sortResourceClasses(Object.keys(u.resources), order).forEach((rc, i) => {
      out[rc] = u.resources[rc]!;
      if (i === 0) out.consumer_count = u.count;
    });
    return out;
  };
  const out: Record<string, Record<string, number>> = {};
  if (filter === 'all') {
    const all: TypeUsage = { count: 0, resources: {} };
    for (const u of byType.values()) {
      all.count += u.count;
      for (const [rc, n] of Object.entries(u.resources)) all.resources[rc] = (all.resources[rc] ?? 0) + n;
    }
    if (Object.keys(all.resources).length) out.all = view(all);
    return out;
  }
  const types: Array<{ name: string; first: string; u: TypeUsage }> = [];
  for (const [t, u] of byType) {
    if (!Object.keys(u.resources).length) continue;
    const name = t === '' ? UNKNOWN_CONSUMER_TYPE : t;
    if (filter !== undefined && filter !== name) continue;
    types.push({ name, first: sortResourceClasses(Object.keys(u.resources), order)[0]!, u });
  }
  types.sort(
    (a, b) =>
      cmp(a.first, b.first) ||
      (a.name === UNKNOWN_CONSUMER_TYPE ? -1 : b.name === UNKNOWN_CONSUMER_TYPE ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  for (const t of types) out[t.name] = view(t.u);
  return out;
}
