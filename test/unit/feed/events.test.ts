/**
 * The change feed's pure parts: a change's one event (its detail-type, its Ironic shape for
 * bare metal) against the schema documents, the documents up to date, the feed item's
 * encoding, and the allocation history's intervals and questions.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completeChange, recordFact, type Change, type ChangeSpec, type ConsumerView } from '../../../functions/core/feed/change.js';
import { EVENT_TYPES, type FeedEvent } from '../../../functions/core/feed/event-envelope.js';
import { eventOf } from '../../../functions/core/feed/events.js';
import { allocationsAt, asOf, historyWrites, resourceHours, type Interval } from '../../../functions/core/feed/history.js';
import { decodeFeedItem, feedWrite } from '../../../functions/store/ddb/feed.js';
import { EVENT_SCHEMA_DIR, eventProblems, eventSchemas, renderSchema } from '../../../schemas/events/shapes.js';

const ROOT = join(__dirname, '..', '..', '..');
const HOST = 'berth';
let n = 0;
const id = (ms = 1_800_000_000_000) => `${String(ms * 1000 + n++).padStart(16, '0')}#${'ab'.repeat(8)}`;
const change = (spec: ChangeSpec, at?: number): Change => completeChange(spec, id(at));
const envelope = (e: FeedEvent) => ({ source: e.source, 'detail-type': e.detailType, detail: e.detail });
const valid = (e: FeedEvent) => expect(eventProblems(envelope(e), ROOT)).toEqual([]);

const RP = '11111111-1111-4111-8111-111111111111';
const C = '22222222-2222-4222-8222-222222222222';
const consumer = (allocations: ConsumerView['allocations'], generation = 1): ConsumerView => ({
  project: 'p1',
  user: 'u1',
  type: 'INSTANCE',
  generation,
  allocations,
});
const node = (over: Record<string, unknown> = {}) => ({
  uuid: '33333333-3333-4333-8333-333333333333',
  name: 'n1',
  driver: 'fake-hardware',
  provision_state: 'available',
  target_provision_state: null,
  power_state: 'power off',
  target_power_state: null,
  maintenance: false,
  last_error: null,
  instance_info: { image_source: 'x', password: 'secret' },
  driver_info: { ipmi_password: 'secret' },
  driver_internal_info: {},
  owner: 'p1',
  traits: [],
  lock: null,
  ver: 3,
  ...over,
});

describe('the schema documents', () => {
  it('are what schemas/events/shapes.ts writes (npm run event-schemas), one per detail-type', () => {
    const docs = eventSchemas();
    expect([...docs.keys()].sort()).toEqual(Object.values(EVENT_TYPES).flat().sort());
    for (const [type, schema] of docs) {
      const file = join(ROOT, EVENT_SCHEMA_DIR, `${type}.json`);
      expect(existsSync(file), `${file}: run npm run event-schemas`).toBe(true);
      expect(readFileSync(file, 'utf8'), `${type}: run npm run event-schemas`).toBe(renderSchema(schema));
    }
  });
});

describe('one change, one event', () => {
  it('Placement: a provider created, its inventory, a consumer claiming, moving and leaving', () => {
    const created = eventOf(
      change({ op: 'provider.create', providers: [{ uuid: RP, before: null, after: { name: 'cn1', parent: null, root: RP, generation: 0 } }] }),
      { host: HOST },
    );
    expect(created).toMatchObject({ source: 'berth.placement', detailType: 'resource_provider.create', detail: { generation: 0, subjects: [RP] } });
    valid(created);
    const inv = eventOf(
      change({
        op: 'provider.inventories',
        providers: [
          {
            uuid: RP,
            before: { name: 'cn1', parent: null, root: RP, generation: 0, inventories: {} },
            after: {
              name: 'cn1',
              parent: null,
              root: RP,
              generation: 1,
              inventories: { VCPU: { total: 8, reserved: 0, min_unit: 1, max_unit: 8, step_size: 1, allocation_ratio: 1 } },
            },
          },
        ],
      }),
      { host: HOST },
    );
    expect(inv.detailType).toBe('resource_provider.inventories.update');
    expect(inv.detail.generation).toBe(1);
    valid(inv);
    const claim = change({ op: 'allocations.set', consumers: [{ uuid: C, prev: null, before: null, after: consumer({ [RP]: { VCPU: 2 } }) }] });
    const e = eventOf(claim, { host: HOST });
    expect(e.detail).toMatchObject({
      action: 'set',
      generation: 1,
      project_id: 'p1',
      user_id: 'u1',
      before: { [C]: null },
      after: { [C]: { allocations: { [RP]: { VCPU: 2 } } } },
    });
    valid(e);
    const gone = eventOf(
      change({ op: 'allocations.delete', consumers: [{ uuid: C, prev: claim.id, before: consumer({ [RP]: { VCPU: 2 } }), after: null }] }),
      { host: HOST },
    );
    expect(gone.detail).toMatchObject({ action: 'delete', generation: null, consumers: [{ consumer_uuid: C, previous: claim.id }] });
    valid(gone);
    const names = eventOf(change({ op: 'trait.create', names: [{ kind: 'trait', before: null, after: 'CUSTOM_X' }] }), { host: HOST });
    expect(names).toMatchObject({ detailType: 'trait.create', detail: { subjects: ['CUSTOM_X'], after: { CUSTOM_X: { name: 'CUSTOM_X' } } } });
    valid(names);
  });

  it('bare metal: named and shaped as Ironic notifications (event_type, versioned payload, secrets masked)', () => {
    const created = eventOf(change({ op: 'node.create', nodes: [recordFact('n', undefined, node())] }), { host: HOST });
    expect(created.detailType).toBe('baremetal.node.create.end');
    expect(created.detail).toMatchObject({
      event_type: 'baremetal.node.create.end',
      priority: 'info',
      publisher_id: 'ironic-api.berth',
      generation: 3,
      project_id: 'p1',
      payload: { 'ironic_object.name': 'NodeCRUDPayload', 'ironic_object.version': '1.14' },
    });
    const data = (created.detail.payload as Record<string, any>)['ironic_object.data'];
    expect(data.driver_info.ipmi_password).toBe('******');
    expect(data.instance_info.password).toBe('******');
    valid(created);
    // provide: available -> manageable? no: manageable -> cleaning (start), cleaning -> available (end)
    const start = eventOf(
      change({
        op: 'node.update',
        nodes: [
          recordFact(
            'n',
            node({ provision_state: 'manageable' }),
            node({ provision_state: 'cleaning', target_provision_state: 'available', ver: 4 }),
          ),
        ],
      }),
      { host: HOST },
    );
    expect(start.detailType).toBe('baremetal.node.provision_set.start');
    expect((start.detail.payload as any)['ironic_object.data']).toMatchObject({
      event: 'provide',
      previous_provision_state: 'manageable',
      previous_target_provision_state: null,
    });
    valid(start);
    const end = eventOf(
      change({
        op: 'node.update',
        nodes: [recordFact('n', node({ provision_state: 'cleaning', target_provision_state: 'available' }), node({ ver: 5 }))],
      }),
      { host: HOST },
    );
    expect(end.detailType).toBe('baremetal.node.provision_set.end');
    expect((end.detail.payload as any)['ironic_object.data'].event).toBe('done');
    valid(end);
    const fail = eventOf(
      change({
        op: 'node.update',
        nodes: [recordFact('n', node({ provision_state: 'deploying' }), node({ provision_state: 'deploy failed', last_error: 'x' }))],
      }),
      { host: HOST },
    );
    expect(fail.detail).toMatchObject({ type: 'baremetal.node.provision_set.error', priority: 'error' });
    valid(fail);
    const power = eventOf(change({ op: 'node.update', nodes: [recordFact('n', node(), node({ target_power_state: 'power on' }))] }), { host: HOST });
    expect(power.detailType).toBe('baremetal.node.power_set.start');
    expect((power.detail.payload as any)['ironic_object.data'].to_power).toBe('power on');
    valid(power);
    const powered = eventOf(
      change({ op: 'node.update', nodes: [recordFact('n', node({ target_power_state: 'power on' }), node({ power_state: 'power on' }))] }),
      { host: HOST },
    );
    expect(powered.detailType).toBe('baremetal.node.power_set.end');
    valid(powered);
    const maint = eventOf(change({ op: 'node.update', nodes: [recordFact('n', node(), node({ maintenance: true }))] }), { host: HOST });
    expect(maint.detailType).toBe('baremetal.node.maintenance_set.end');
    valid(maint);
    // a lock taken or given back changes nothing anyone sees: an internal change, still one event
    const lock = eventOf(change({ op: 'node.update', nodes: [recordFact('n', node(), node({ lock: 'exec-1', ver: 4 }))] }), { host: HOST });
    expect(lock).toMatchObject({ source: 'berth.internal', detailType: 'internal.change' });
    valid(lock);
  });

  it('bare-metal allocations: created, reserved (its Placement side with the placement scheduler), deleted', () => {
    const a = {
      uuid: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
      name: null,
      resource_class: 'gold',
      traits: [],
      candidate_nodes: [],
      extra: {},
      owner: null,
      state: 'allocating',
      last_error: null,
      node_uuid: null,
      created_at: 't',
      updated_at: null,
      exec: 'e',
      ver: 0,
    };
    const created = eventOf(change({ op: 'allocation.create', allocations: [recordFact(a.uuid, undefined, a)] }), { host: HOST });
    expect(created.detail).toMatchObject({
      type: 'baremetal.allocation.create.end',
      payload: { 'ironic_object.name': 'AllocationCRUDPayload', 'ironic_object.version': '1.1' },
    });
    expect((created.detail.payload as any)['ironic_object.data'].exec).toBeUndefined();
    valid(created);
    const reserved = eventOf(
      change({
        op: 'allocation.reserve',
        allocations: [{ uuid: a.uuid, before: { state: 'allocating', node_uuid: null }, after: { uuid: a.uuid, state: 'active', node_uuid: 'n' } }],
        consumers: [{ uuid: a.uuid, prev: null, before: null, after: { ...consumer({ n: { CUSTOM_GOLD: 1 } }), type: 'BAREMETAL' } }],
      }),
      { host: HOST },
    );
    expect(reserved.detail).toMatchObject({
      type: 'baremetal.allocation.update.end',
      publisher_id: 'ironic-conductor.berth',
      placement: { consumers: [{ consumer_uuid: a.uuid, consumer_type: 'BAREMETAL' }] },
    });
    valid(reserved);
    valid(eventOf(change({ op: 'allocation.delete', allocations: [recordFact(a.uuid, a, undefined)] }), { host: HOST }));
  });

  it('the message id is the same for every delivery of one change (de-duplication)', () => {
    const c = change({ op: 'node.create', nodes: [recordFact('n', undefined, node())] });
    expect(eventOf(c, { host: HOST }).detail.message_id).toBe(eventOf(structuredClone(c), { host: HOST }).detail.message_id);
  });
});

describe('the feed item', () => {
  it('keeps a small description as it is, compresses a larger one, and splits a huge one into parts', async () => {
    const small = change({ op: 'trait.create', names: [{ kind: 'trait', before: null, after: 'CUSTOM_X' }] });
    const w = feedWrite(small);
    expect(w.item.c).toBeTypeOf('string');
    expect(await decodeFeedItem(w.item, async () => [])).toEqual(small);
    const consumers = Array.from({ length: 300 }, (_, i) => ({
      uuid: `c${i}`,
      prev: null,
      before: null,
      after: consumer({ [`rp${i}`]: { VCPU: i } }),
    }));
    const big = change({ op: 'allocations.reshape', consumers });
    const wb = feedWrite(big);
    expect(wb.item.z).toBeInstanceOf(Buffer);
    expect(await decodeFeedItem(wb.item, async () => [])).toEqual(big);
    // random text does not compress: a description of ~1 MB needs parts
    const noise = Array.from({ length: 400 }, (_, i) => ({
      uuid: `c${i}`,
      prev: null,
      before: null,
      after: { ...consumer({}), project: Buffer.from(Array.from({ length: 2500 }, () => Math.floor(Math.random() * 256))).toString('base64') },
    }));
    const huge = change({ op: 'allocations.reshape', consumers: noise });
    const wh = feedWrite(huge);
    expect(wh.parts.length).toBeGreaterThan(1);
    expect(wh.item.parts).toBe(wh.parts.length);
    expect(await decodeFeedItem(wh.item, async () => wh.parts.map((p) => p.z))).toEqual(huge);
  });
});

describe('the allocation history', () => {
  const t0 = 1_800_000_000_000;
  it('a consumer claimed, resized, deleted: intervals that close where the next change opens', () => {
    const a = change({ op: 'allocations.set', consumers: [{ uuid: C, prev: null, before: null, after: consumer({ [RP]: { VCPU: 2 } }) }] }, t0);
    const b = change(
      {
        op: 'allocations.set',
        consumers: [{ uuid: C, prev: a.id, before: consumer({ [RP]: { VCPU: 2 } }), after: consumer({ [RP]: { VCPU: 4 } }, 2) }],
      },
      t0 + 3_600_000,
    );
    const d = change(
      { op: 'allocations.delete', consumers: [{ uuid: C, prev: b.id, before: consumer({ [RP]: { VCPU: 4 } }, 2), after: null }] },
      t0 + 5_400_000,
    );
    // applied in any order, any number of times: the same intervals (closes win over opens)
    const byKey = new Map<string, Interval>();
    for (const c of [d, a, b, a, d]) {
      for (const w of historyWrites(c).writes) if (!w.ifAbsent || !byKey.has(w.interval.id)) byKey.set(w.interval.id, w.interval);
    }
    const intervals = [...byKey.values()].sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(intervals.map((i) => [i.from - t0, i.to === undefined ? null : i.to - t0])).toEqual([
      [0, 3_600_000],
      [3_600_000, 5_400_000],
    ]);
    expect(allocationsAt(intervals, t0 + 1000).get(C)?.allocations).toEqual({ [RP]: { VCPU: 2 } });
    expect(allocationsAt(intervals, t0 + 4_000_000).get(C)?.allocations).toEqual({ [RP]: { VCPU: 4 } });
    expect(allocationsAt(intervals, t0 + 6_000_000).size).toBe(0);
    // 2 VCPU for an hour, 4 for half an hour
    expect(
      resourceHours(intervals, t0, t0 + 10_000_000)
        .get('p1')
        ?.get('VCPU'),
    ).toBeCloseTo(4, 9);
    // the watermark: a change not yet applied whole is not shown, nor does it end an interval
    expect(asOf(intervals[1]!, a.id)).toBeUndefined();
    expect(asOf(intervals[0]!, a.id)?.to).toBeUndefined();
    expect(asOf(intervals[0]!, b.id)?.to).toBe(t0 + 3_600_000);
  });
});
