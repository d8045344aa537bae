/**
 * One committed change → exactly one event (docs/consistency.md, "The change feed"; the shapes
 * are schemas/events/v1/*.json, checked against every event the tests see).
 *
 * EventBridge's envelope: `source` (berth.placement, berth.baremetal, berth.internal),
 * `detail-type` (what happened), `time` (the change's), `detail`:
 *   version      "1": this shape
 *   id           the change id: the same for every delivery of one change (de-duplicate on it);
 *                per provider and per consumer, ids grow in commit order
 *   time         when the change was stamped (ISO 8601, ms)
 *   generation   what the change produced for its subject (a provider's or consumer's
 *                generation, a node's or allocation's version); null where there is none
 *   project_id, user_id   whose it is, where there is one
 *   subjects     the ids of what changed (provider and consumer uuids, names, nodes)
 *   before, after    each subject's state before and after, keyed by its id (null: absent)
 * and per kind a little more (a consumer change's `action`). Bare-metal events are named
 * and shaped as Ironic's notifications: `detail-type` is the `event_type`
 * (baremetal.node.provision_set.end, baremetal.allocation.create.end, …) and the detail
 * carries `priority`, `event_type`, `publisher_id`, `timestamp`, `message_id` and the
 * versioned `payload` (`ironic_object.name` NodeSetProvisionStatePayload 1.17, …) with the
 * fields Ironic's payload has, so a consumer of Ironic's notifications can map them.
 *
 * This module picks the event of a change; the envelope every event has is in
 * event-envelope.ts, Placement's events in placement-events.ts, bare metal's in
 * ironic-events.ts.
 *
 * Pure.
 */
import type { Change } from './change.js';
import type { EventOptions, FeedEvent } from './event-envelope.js';
import { allocationEvent, nodeEvent } from './ironic-events.js';
import { consumerEvent, internalEvent, nameEvent, providerEvent } from './placement-events.js';

/** The one event of a committed change. */
export function eventOf(c: Change, opts: EventOptions): FeedEvent {
  switch (c.op) {
    case 'provider.create':
    case 'provider.update':
    case 'provider.delete':
    case 'provider.inventories':
    case 'provider.traits':
    case 'provider.aggregates':
    case 'node.provider':
      return providerEvent(c);
    case 'allocations.set':
    case 'allocations.delete':
    case 'allocations.reshape':
    case 'allocations.import':
    case 'allocations.migrate':
      return consumerEvent(c);
    case 'resource_class.create':
    case 'resource_class.update':
    case 'resource_class.delete':
    case 'trait.create':
    case 'trait.delete':
      return nameEvent(c);
    case 'node.create':
    case 'node.update':
    case 'node.delete':
      return nodeEvent(c, opts);
    case 'allocation.create':
    case 'allocation.backfill':
    case 'allocation.update':
    case 'allocation.reserve':
    case 'allocation.fail':
    case 'allocation.delete':
      return allocationEvent(c, opts);
    default:
      return internalEvent(c);
  }
}
