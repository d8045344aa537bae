/**
 * Least-privilege DynamoDB access per function, beyond read vs read-write: each grant
 * is a list of rules "these actions, on items whose partition key matches these
 * patterns" (IAM condition `ForAllValues:StringLike dynamodb:LeadingKeys`), on the
 * table or on one named index. Key prefixes are those of functions/store/placement/keys.ts and
 * functions/store/baremetal/keys.ts (docs/items.md and docs/baremetal.md list the items).
 *
 * TransactWriteItems is authorised per item as PutItem / UpdateItem / DeleteItem /
 * ConditionCheckItem, BatchGetItem per key, so the same rules cover transactions.
 * On an index statement the condition names the index's partition key; were
 * DynamoDB not to evaluate it there, `ForAllValues` over an absent key is true, so the
 * statement degrades to "Query this index only", never to more.
 *
 * test/integration/security/iam-usage.test.ts records every DynamoDB request the real
 * handlers make (per family) and checks it against these rules; test/unit/cdk/
 * permissions.test.ts checks the synthesised policies say exactly this.
 */
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';

export type DdbAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:ConditionCheckItem'
  | 'dynamodb:BatchWriteItem'
  | 'dynamodb:Scan';

export interface AccessRule {
  actions: DdbAction[];
  /** partition-key patterns (IAM StringLike: `*` is any suffix) */
  keys: string[];
  /** on this index (Query only) instead of the table */
  index?: 'gsi1' | 'gsi2';
}

const GET: DdbAction = 'dynamodb:GetItem';
const BATCH_GET: DdbAction = 'dynamodb:BatchGetItem';
const QUERY: DdbAction = 'dynamodb:Query';
const PUT: DdbAction = 'dynamodb:PutItem';
const UPDATE: DdbAction = 'dynamodb:UpdateItem';
const DELETE: DdbAction = 'dynamodb:DeleteItem';
const CHECK: DdbAction = 'dynamodb:ConditionCheckItem';
const BATCH_WRITE: DdbAction = 'dynamodb:BatchWriteItem';
const SCAN: DdbAction = 'dynamodb:Scan';

// ---- building blocks (one per store concern)

/**
 * The marker and fence of a transaction that has no change-log entry to serve as its
 * marker (functions/store/ddb/tx.ts): a Put in the transaction, a PutItem to resolve
 * an unknown outcome. Placement's are TX#<token>; bare metal's BMTX#<token>.
 */
const TX_MARKER: AccessRule[] = [{ actions: [PUT], keys: ['TX#*'] }];

/**
 * The change feed (functions/store/ddb/feed.ts): every write transaction Puts its change's
 * feed item; a description too large for one item is stored in parts first (BatchWriteItem).
 */
export const FEED_WRITE: AccessRule[] = [
  { actions: [PUT], keys: ['FEED#*'] },
  { actions: [BATCH_WRITE], keys: ['FEEDPART#*'] },
];

/**
 * The stream processor (functions/feed/, cdk/lib/feed.ts): the parts of a large
 * description, and the allocation history's items (store/history/history.ts) with its
 * watermark (META / history). Nothing else of the table.
 */
export const FEED_PROCESSOR_ACCESS: AccessRule[] = [
  { actions: [BATCH_GET], keys: ['FEEDPART#*'] },
  { actions: [PUT, QUERY], keys: ['HIST#*', 'HISTP#*', 'HISTR#*', 'HISTPROJECTS'] },
  { actions: [UPDATE], keys: ['META'] },
];

/**
 * the provider snapshot: the forest image (its manifest FOREST, its chunks IMG#), or a cold
 * load through gsi1; the change log since; re-reads of changed providers
 */
const SNAPSHOT: AccessRule[] = [
  { actions: [GET], keys: ['FOREST'] },
  { actions: [BATCH_GET], keys: ['IMG#*'] },
  { index: 'gsi1', actions: [QUERY], keys: ['RPS#*'] },
  { actions: [QUERY], keys: ['LOG#*'] },
  // a provider read again (a Query of its partition), the state items of a load through gsi1
  { actions: [QUERY, BATCH_GET], keys: ['RP#*'] },
];
/** the forest image writer (functions/maintenance/image.ts): chunks, then the manifest */
const IMAGE_WRITE: AccessRule[] = [
  { actions: [BATCH_WRITE], keys: ['IMG#*'] },
  { actions: [PUT], keys: ['FOREST'] },
];
/** catalog look-ups of custom classes and traits (is this name defined?) */
const CATALOG: AccessRule[] = [{ actions: [BATCH_GET], keys: ['RCS#*', 'TRAITS#*'] }];
/** the creation order of custom classes / traits, for answers that list them (catalog.ts customOrder: a cached Query) */
const CLASS_ORDER: AccessRule[] = [{ actions: [QUERY], keys: ['RCS#*'] }];
const TRAIT_ORDER: AccessRule[] = [{ actions: [QUERY], keys: ['TRAITS#*'] }];
/** provider writes (provider-writes.ts): read, conditional update, refs on custom items, change log, an aggregate's list of sharing providers */
const PROVIDER_WRITE: AccessRule[] = [
  { actions: [QUERY, UPDATE], keys: ['RP#*'] },
  { actions: [PUT, DELETE], keys: ['AGG#*'] },
  { actions: [UPDATE], keys: ['RCS#*', 'TRAITS#*'] },
  { actions: [PUT], keys: ['LOG#*'] },
];
/** claims (allocations.ts, consumers.ts, usage.ts): reads, then one transaction */
const CLAIM: AccessRule[] = [
  { actions: [GET, BATCH_GET], keys: ['CONS#*', 'RP#*', 'META'] },
  { actions: [QUERY], keys: ['RP#*'] },
  { index: 'gsi1', actions: [QUERY], keys: ['CONSALLOC#*'] },
  { actions: [BATCH_GET], keys: ['RCS#*'] },
  { actions: [UPDATE, PUT, DELETE], keys: ['RP#*'] },
  { actions: [PUT, DELETE, CHECK], keys: ['CONS#*'] },
  { actions: [UPDATE], keys: ['USAGE#*'] },
  { actions: [PUT], keys: ['LOG#*'] },
];

const TABLE_WRITES: DdbAction[] = [PUT, UPDATE, DELETE, CHECK];

/**
 * Changes larger than one transaction (functions/store/ddb/intents/). Every reader
 * reads intents (what a locked item reads as); a writer writes its own intents and, on
 * the items it may write, the protocol's own steps: lock (UpdateItem), undo (UpdateItem,
 * DeleteItem of a placeholder, after a BatchGetItem). No family finishes another's change:
 * that is the maintenance function's (MAINTENANCE_ACCESS), so each keeps to its own items.
 */
function withLargeChanges(rules: AccessRule[]): AccessRule[] {
  const out = [...rules, { actions: [GET, BATCH_GET], keys: ['INTENT#*'] } as AccessRule];
  const writes = rules.filter((r) => !r.index && r.actions.some((a) => TABLE_WRITES.includes(a)));
  if (writes.length) {
    // every write records its change (the feed item: at the commit point of a larger one)
    out.push(...FEED_WRITE);
    out.push({ actions: [PUT, UPDATE, BATCH_WRITE], keys: ['INTENT#*'] });
    for (const r of writes) out.push({ actions: [UPDATE, DELETE, BATCH_GET], keys: r.keys });
  }
  return out;
}

/**
 * The table's layout record (store/layout/state.ts): every request reads it (cached per
 * process), nothing but the maintenance function (and operators' tools) writes it.
 */
export const LAYOUT_READ: AccessRule[] = [{ actions: [GET], keys: ['META'] }];

/** Placement families (functions/placement/<family>.ts), before withLargeChanges and LAYOUT_READ */
const PLACEMENT_RULES: Record<string, AccessRule[]> = {
  root: [],
  'resource-classes': [{ actions: [GET, QUERY, PUT, DELETE], keys: ['RCS#*'] }, ...TX_MARKER],
  'resource-providers': [
    ...SNAPSHOT,
    ...CATALOG, // resources= / required= filters naming custom classes and traits
    { actions: [GET, QUERY], keys: ['RP#*'] },
    { actions: [PUT, UPDATE, DELETE], keys: ['RP#*'] },
    { actions: [PUT, DELETE, CHECK], keys: ['RPNAME#*'] },
    // a list narrowed by name reads the name item (providers.ts providersFor)
    { actions: [BATCH_GET], keys: ['RPNAME#*'] },
    // Nova's sharing-providers list reads the aggregates' lists; a deleted provider leaves them
    { actions: [QUERY, DELETE], keys: ['AGG#*'] },
    { actions: [UPDATE], keys: ['RCS#*', 'TRAITS#*'] },
    { actions: [PUT], keys: ['LOG#*'] },
  ],
  inventories: [...PROVIDER_WRITE, ...CATALOG, ...CLASS_ORDER],
  aggregates: [
    { actions: [QUERY, UPDATE], keys: ['RP#*'] },
    { actions: [PUT], keys: ['LOG#*'] },
    // an aggregate's first sighting (its order: aggregates.ts), its list of sharing providers
    { actions: [BATCH_GET, PUT, DELETE], keys: ['AGG#*'] },
  ],
  traits: [...SNAPSHOT, ...PROVIDER_WRITE, ...CATALOG, { actions: [GET, QUERY, PUT, DELETE], keys: ['TRAITS#*'] }, ...TX_MARKER],
  allocations: [...CLAIM, ...CLASS_ORDER],
  reshaper: [...CLAIM, ...PROVIDER_WRITE],
  usages: [{ actions: [QUERY], keys: ['RP#*'] }, { actions: [QUERY, BATCH_GET], keys: ['USAGE#*'] }, ...CLASS_ORDER],
  'allocation-candidates': [...SNAPSHOT, ...CATALOG, ...CLASS_ORDER, ...TRAIT_ORDER],
};

/** Placement families (functions/placement/<family>.ts) */
export const PLACEMENT_ACCESS: Record<string, AccessRule[]> = Object.fromEntries(
  Object.entries(PLACEMENT_RULES).map(([family, rules]) => [family, rules.length ? [...withLargeChanges(rules), ...LAYOUT_READ] : rules]),
);

/** every Placement item family a change larger than one transaction may write (the maintenance function finishes or undoes any) */
const LARGE_CHANGE_ITEMS = ['RP#*', 'RPNAME#*', 'CONS#*', 'USAGE#*', 'RCS#*', 'TRAITS#*', 'AGG#*', 'LOG#*', 'TX#*'];

/**
 * The scheduled maintenance function's Placement side: the incomplete-consumer
 * migration (functions/maintenance/consumers.ts, functions/store/placement/migration.ts): the
 * sparse legacy index, its progress/flag META items, consumer records, the legacy
 * allocation rows and the usage aggregates. Its bare-metal side is granted by
 * BaremetalApi.grantOrphanRecovery.
 */
export const MAINTENANCE_ACCESS: AccessRule[] = [
  // changes larger than one transaction nobody finishes (intents/recovery.ts recoverIntents)
  { index: 'gsi2', actions: [QUERY], keys: ['INTENTS#*'] },
  { actions: [GET, PUT, UPDATE, BATCH_GET], keys: ['INTENT#*'] },
  { actions: [BATCH_GET, PUT, UPDATE, DELETE, CHECK], keys: LARGE_CHANGE_ITEMS },
  { index: 'gsi2', actions: [QUERY], keys: ['LEGACYALLOC#*'] },
  { actions: [GET, UPDATE], keys: ['META'] },
  { actions: [GET, BATCH_GET, PUT], keys: ['CONS#*'] },
  { actions: [BATCH_GET, UPDATE], keys: ['RP#*'] },
  { actions: [UPDATE], keys: ['USAGE#*'] },
  ...TX_MARKER,
  ...FEED_WRITE,
  ...SNAPSHOT,
  ...IMAGE_WRITE,
  // the layout record (written first by ensureLayout: a table without one is classified by
  // one item of each provider index shard and layout 1's catalog partitions) and the
  // layout migration (store/layout/migrate.ts): a parallel Scan of the table — IAM cannot
  // narrow a Scan by key; this function reaches every Placement item and, for orphan
  // recovery, every bare-metal one already —, layout 1's catalog partitions (`RCS`,
  // `TRAITS`, no suffix) and usage items moved, derived items checked and written
  { actions: [GET, PUT, UPDATE], keys: ['META'] },
  { actions: [QUERY, PUT, DELETE], keys: ['RCS', 'TRAITS'] },
  { actions: [SCAN], keys: [] },
];

/**
 * BAREMETAL_SCHEDULER=placement (docs/baremetal.md, "Bare metal through Placement"): the
 * Placement items a bare-metal function touches besides its own, granted only in that
 * mode. A node write reads its provider (a Query of its partition) and the consumer it
 * releases or claims, and writes them in its own transaction: the provider's items and
 * name, allocation rows, the consumer, the usage aggregate, the change-log entry, refs on
 * custom classes and traits — and creates a custom class or trait the node introduces
 * (a catalog look-up, then a one-item transaction with its TX# marker).
 */
const NODE_PROVIDER_WRITE: AccessRule[] = [
  { actions: [QUERY, PUT, UPDATE, DELETE], keys: ['RP#*'] },
  { actions: [PUT, DELETE], keys: ['RPNAME#*'] },
  { actions: [GET, PUT, DELETE], keys: ['CONS#*'] },
  { actions: [UPDATE], keys: ['USAGE#*'] },
  { actions: [PUT], keys: ['LOG#*'] },
  { actions: [BATCH_GET, PUT, UPDATE], keys: ['RCS#*', 'TRAITS#*'] },
  ...TX_MARKER,
];
/** whether allocations take their candidates from the forest yet (the migration's META item) */
const SCHEDULER_STATE: AccessRule[] = [{ actions: [GET], keys: ['META'] }];

/** Per bare-metal family and step, and for the maintenance function: the Placement items it may touch with the placement scheduler. */
export const BAREMETAL_PLACEMENT_ACCESS: { families: Record<string, AccessRule[]>; steps: Record<string, AccessRule[]>; maintenance: AccessRule[] } =
  {
    families: {
      root: [],
      drivers: [],
      nodes: withLargeChanges(NODE_PROVIDER_WRITE),
      'node-traits': withLargeChanges(NODE_PROVIDER_WRITE),
      'node-states': withLargeChanges(NODE_PROVIDER_WRITE),
      'node-vifs': withLargeChanges(NODE_PROVIDER_WRITE),
      allocations: withLargeChanges(NODE_PROVIDER_WRITE),
    },
    steps: {
      // the forest (a snapshot of its own), the node named like the allocation (a bare-metal item)
      'find-candidates': [...SNAPSHOT, ...SCHEDULER_STATE],
      // the reservation's claim; a fresh look at the forest after a lost race
      'reserve-node': withLargeChanges([...NODE_PROVIDER_WRITE, ...SNAPSHOT, ...SCHEDULER_STATE]),
      'fail-allocation': [],
      'advance-node': withLargeChanges(NODE_PROVIDER_WRITE),
      'fail-node-action': withLargeChanges(NODE_PROVIDER_WRITE),
    },
    // the migration (functions/maintenance/baremetal-placement.ts): MAINTENANCE_ACCESS covers
    // the Placement items; its progress is one more META item it writes
    maintenance: [{ actions: [PUT], keys: ['META'] }],
  };

/**
 * The per-project token bucket (`-c projectRateLimit`; functions/store/ratelimit.ts):
 * one UpdateItem per request on the caller's bucket, `RATE#<api>#<project>`, each API
 * on its own buckets. Granted to every API family but the version documents', only
 * when the limit is on.
 */
export const RATE_LIMIT_ACCESS: Record<'placement' | 'baremetal', AccessRule[]> = {
  placement: [{ actions: [UPDATE], keys: ['RATE#placement#*'] }],
  baremetal: [{ actions: [UPDATE], keys: ['RATE#baremetal#*'] }],
};

/**
 * Bare-metal items (functions/store/baremetal/keys.ts) and their gsi2 partitions. The
 * bare-metal construct (cdk/lib/baremetal.ts) decides the actions per family and step;
 * these bind them to bare-metal items, so no bare-metal function can read or write a
 * Placement item (and no Placement function a bare-metal one: none lists these keys) —
 * except, with the placement scheduler only, the Placement items of
 * BAREMETAL_PLACEMENT_ACCESS above.
 */
export const BAREMETAL_ITEM_KEYS = ['BMN#*', 'BMNNAME#*', 'BMNINST#*', 'BMA#*', 'BMANAME#*'];
export const BAREMETAL_INDEX_KEYS = ['BMNS#*', 'BMAS#*'];
/** bare-metal transaction markers and fences (functions/store/ddb/tx.ts): PutItem only */
export const BAREMETAL_MARKER_KEYS = ['BMTX#*'];

/**
 * A bare-metal function's actions as rules: on bare-metal items, Query on gsi2 when it
 * queries, and PutItem of transaction markers when it writes (every bare-metal write
 * is a transaction with a marker).
 */
export function baremetalRules(actions: string[]): AccessRule[] {
  if (!actions.length) return [];
  const rules: AccessRule[] = [{ actions: actions as DdbAction[], keys: BAREMETAL_ITEM_KEYS }];
  if (actions.includes(QUERY)) rules.push({ index: 'gsi2', actions: [QUERY], keys: BAREMETAL_INDEX_KEYS });
  if (actions.some((a) => a === PUT || a === UPDATE || a === DELETE)) rules.push({ actions: [PUT], keys: BAREMETAL_MARKER_KEYS }, ...FEED_WRITE);
  return rules;
}

/** bare-metal families whose routes need no table (no layout check either: functions/store/layout/state.ts) */
export const TABLELESS_BAREMETAL_FAMILIES = ['root', 'drivers'];

/** A bare-metal API family's rules: its actions on bare-metal items and, when it reads the table, the layout record. */
export function baremetalFamilyRules(family: string, actions: string[]): AccessRule[] {
  return [...baremetalRules(actions), ...(TABLELESS_BAREMETAL_FAMILIES.includes(family) ? [] : LAYOUT_READ)];
}

/** Merge rules with the same index and key set (fewer, clearer statements). */
export function normalise(rules: AccessRule[]): AccessRule[] {
  const by = new Map<string, AccessRule>();
  for (const r of rules) {
    const keys = [...new Set(r.keys)].sort();
    const id = `${r.index ?? ''}|${keys.join(',')}`;
    const cur = by.get(id);
    if (cur) cur.actions = [...new Set([...cur.actions, ...r.actions])].sort() as DdbAction[];
    else by.set(id, { actions: [...new Set(r.actions)].sort() as DdbAction[], keys, ...(r.index ? { index: r.index } : {}) });
  }
  return [...by.values()];
}

/** Does a rule list allow this request item? (what IAM decides for one item) */
export function allows(rules: AccessRule[], action: string, pk: string | undefined, index?: string): boolean {
  return rules.some(
    (r) =>
      (r.index ?? undefined) === (index ?? undefined) &&
      r.actions.includes(action as DdbAction) &&
      ((r.keys.length === 0 && pk === undefined) ||
        (pk !== undefined && r.keys.some((k) => (k.endsWith('*') ? pk.startsWith(k.slice(0, -1)) : pk === k)))),
  );
}

/** Attach the rules to a function's role: one statement per (index, key set). */
export function grantTableAccess(grantee: IGrantable, table: dynamodb.ITableV2, rules: AccessRule[]): void {
  for (const r of normalise(rules)) {
    const resource = r.index ? `${table.tableArn}/index/${r.index}` : table.tableArn;
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: r.actions,
        resources: [resource],
        // a rule without keys (a Scan: no leading key to condition on) is the action alone
        ...(r.keys.length ? { conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': r.keys } } } : {}),
      }),
    );
  }
}
