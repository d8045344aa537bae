/**
 * What every change-feed event carries (the envelope of "events.ts"): EventBridge's
 * `source`, `detail-type`, `time`, and the detail's version, change id and time; every
 * detail-type there is, by source; each subject's state keyed by its id; the key one
 * event is ordered by. Pure.
 */
import type { Change } from './change.js';

export const EVENT_VERSION = '1';
export type EventSource = 'berth.placement' | 'berth.baremetal' | 'berth.internal';

export interface FeedEvent {
  source: EventSource;
  detailType: string;
  /** ISO 8601 */
  time: string;
  detail: Record<string, unknown>;
}

export interface EventOptions {
  /** the host Ironic's publisher_id names (the bare-metal API's conductor name) */
  host: string;
}

/** every detail-type, by source: the schema documents are named after them */
export const EVENT_TYPES: Record<EventSource, readonly string[]> = {
  'berth.placement': [
    'resource_provider.create',
    'resource_provider.update',
    'resource_provider.delete',
    'resource_provider.inventories.update',
    'resource_provider.traits.update',
    'resource_provider.aggregates.update',
    'consumer.allocations.update',
    'resource_class.create',
    'resource_class.update',
    'resource_class.delete',
    'trait.create',
    'trait.delete',
  ],
  'berth.baremetal': [
    'baremetal.node.create.end',
    'baremetal.node.update.end',
    'baremetal.node.delete.end',
    'baremetal.node.maintenance_set.end',
    'baremetal.node.provision_set.start',
    'baremetal.node.provision_set.end',
    'baremetal.node.provision_set.success',
    'baremetal.node.provision_set.error',
    'baremetal.node.power_set.start',
    'baremetal.node.power_set.end',
    'baremetal.node.power_set.error',
    'baremetal.allocation.create.end',
    'baremetal.allocation.update.end',
    'baremetal.allocation.delete.end',
  ],
  'berth.internal': ['internal.change'],
};

export const iso = (ms: number) => new Date(ms).toISOString();

/** each fact's state on one side of the change, keyed by its uuid (null: absent) */
export function keyed<T extends { uuid: string }>(facts: T[] | undefined, side: 'before' | 'after'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of facts ?? []) out[f.uuid] = (f as unknown as Record<string, unknown>)[side] ?? null;
  return out;
}

/** an event of `source` and `detailType` with the detail every event has, and `extra` */
export function baseEvent(c: Change, source: EventSource, detailType: string, extra: Record<string, unknown>): FeedEvent {
  return {
    source,
    detailType,
    time: iso(c.at),
    detail: { version: EVENT_VERSION, id: c.id, time: iso(c.at), type: detailType, ...extra },
  };
}

/** the key one event is ordered by, per subject: its subjects' ids (tests check per-key order on them) */
export function subjectsOf(e: FeedEvent): string[] {
  return (e.detail.subjects as string[]) ?? [];
}
