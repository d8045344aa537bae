/**
 * Placement's events (source berth.placement): a provider's, a consumer's allocations,
 * a resource class's or trait's name; and the Placement side other events carry — an
 * internal change's, a bare-metal change's (BAREMETAL_SCHEDULER=placement: the node's
 * provider, the allocation's consumer). Pure.
 */
import type { Change, ConsumerFact, ProviderFact } from './change.js';
import { baseEvent, type FeedEvent, keyed } from './event-envelope.js';

/** an event of no API's (berth.internal): what changed, and why, where the change says */
export function internalEvent(c: Change): FeedEvent {
  const subjects = [...(c.allocations ?? []), ...(c.nodes ?? [])].map((f) => f.uuid);
  return baseEvent(c, 'berth.internal', 'internal.change', {
    generation: null,
    project_id: null,
    user_id: null,
    subjects,
    before: {},
    after: {},
    note: c.note ?? c.op,
    ...placementSide(c),
  });
}

const PROVIDER_TYPES: Partial<Record<Change['op'], string>> = {
  'provider.create': 'resource_provider.create',
  'provider.update': 'resource_provider.update',
  'provider.delete': 'resource_provider.delete',
  'provider.inventories': 'resource_provider.inventories.update',
  'provider.traits': 'resource_provider.traits.update',
  'provider.aggregates': 'resource_provider.aggregates.update',
};

export function providerEvent(c: Change): FeedEvent {
  const providers = c.providers ?? [];
  let type = PROVIDER_TYPES[c.op];
  // the scheduler migration brings a node's provider in line with its node
  if (!type) type = providers.some((p) => p.before === null) ? 'resource_provider.create' : 'resource_provider.update';
  const first = providers[0];
  const gen = first ? (first.after?.generation ?? first.before?.generation ?? null) : null;
  return baseEvent(c, 'berth.placement', type, {
    generation: gen,
    project_id: null,
    user_id: null,
    subjects: providers.map((p) => p.uuid),
    before: keyed(providers, 'before'),
    after: keyed(providers, 'after'),
    ...(c.consumers?.length ? { consumers: consumerList(c.consumers) } : {}),
  });
}

const CONSUMER_ACTIONS: Partial<Record<Change['op'], string>> = {
  'allocations.set': 'set',
  'allocations.delete': 'delete',
  'allocations.reshape': 'reshape',
  'allocations.import': 'import',
  'allocations.migrate': 'migrate',
};

function consumerList(consumers: ConsumerFact[]) {
  return consumers.map((f) => {
    const v = f.after ?? f.before;
    return {
      consumer_uuid: f.uuid,
      project_id: v?.project ?? null,
      user_id: v?.user ?? null,
      consumer_type: v?.type ?? null,
      generation: f.after?.generation ?? null,
      previous: f.prev,
    };
  });
}

export function consumerEvent(c: Change): FeedEvent {
  const consumers = c.consumers ?? [];
  const one = consumers.length === 1 ? (consumers[0]!.after ?? consumers[0]!.before) : undefined;
  return baseEvent(c, 'berth.placement', 'consumer.allocations.update', {
    action: CONSUMER_ACTIONS[c.op] ?? 'set',
    generation: consumers.length === 1 ? (consumers[0]!.after?.generation ?? null) : null,
    project_id: one?.project ?? null,
    user_id: one?.user ?? null,
    subjects: consumers.map((f) => f.uuid),
    before: keyed(consumers, 'before'),
    after: keyed(consumers, 'after'),
    consumers: consumerList(consumers),
    // a reshape moves inventory too: each provider's before and after
    ...(c.providers?.length ? { resource_providers: providerList(c.providers) } : {}),
  });
}

function providerList(providers: ProviderFact[]) {
  return providers.map((p) => ({ uuid: p.uuid, before: p.before, after: p.after }));
}

export function nameEvent(c: Change): FeedEvent {
  const names = c.names ?? [];
  const key = (n: string | null) => n ?? '';
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const n of names) {
    const id = key(n.after ?? n.before);
    before[id] = n.before === null ? null : { name: n.before };
    after[id] = n.after === null ? null : { name: n.after };
  }
  return baseEvent(c, 'berth.placement', c.op, {
    generation: null,
    project_id: null,
    user_id: null,
    subjects: names.map((n) => key(n.after ?? n.before)),
    before,
    after,
  });
}

/** A bare-metal change's Placement side (BAREMETAL_SCHEDULER=placement): the node's provider, the allocation's consumer. */
export function placementSide(c: Change): Record<string, unknown> {
  if (!c.providers?.length && !c.consumers?.length) return {};
  return {
    placement: {
      resource_providers: providerList(c.providers ?? []),
      consumers: consumerList(c.consumers ?? []),
      consumer_changes: c.consumers ?? [],
    },
  };
}
