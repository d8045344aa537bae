/**
 * The feed tests' own checker (test/integration/feed/check.ts) finds what it is there to
 * find: a committed change without its event, an event without a change, one twice, a
 * transaction that recorded nothing, and per-key order broken.
 */
import { describe, expect, it } from 'vitest';
import { committedChanges, orderProblems, type EventLine } from '../../integration/feed/check.js';

const id = (n: number) => `${String(1_800_000_000_000_000 + n).padStart(16, '0')}#${'0'.repeat(16)}`;
const C = 'consumer-1';
const claim = (n: number, previous: number | null): EventLine => ({
  source: 'berth.placement',
  'detail-type': 'consumer.allocations.update',
  detail: { id: id(n), subjects: [C], consumers: [{ consumer_uuid: C, previous: previous === null ? null : id(previous) }] },
});

describe("the feed tests' checker", () => {
  it('counts committed changes from the markers: entries, named markers; not fences, intent steps, late announcements', () => {
    const items = [
      { pk: 'LOG#0', sk: id(1) },
      { pk: 'LOG#0', sk: id(2), again: id(1) },
      { pk: 'LOG#0', sk: id(3), fence: 't' },
      { pk: 'TX#a', sk: 'TX', cid: id(4) },
      { pk: 'TX#b', sk: 'TX', intent: 'i' },
      { pk: 'BMTX#c', sk: 'BMTX', cid: id(5) },
      { pk: 'BMTX#d', sk: 'BMTX', fence: 't' },
      { pk: 'TX#e', sk: 'TX' },
      { pk: 'RP#x', sk: 'RP' },
    ];
    expect(committedChanges(items)).toEqual({ ids: [id(1), id(4), id(5)], unnamed: ['TX#e'] });
  });

  it("finds a consumer's events out of order or with one missing between them", () => {
    expect(orderProblems([claim(1, null), claim(2, 1), claim(3, 2)])).toEqual([]);
    expect(orderProblems([claim(2, 1), claim(1, null)])).toHaveLength(1);
    // the event of change 2 never came: 3 follows 2, the checker saw 1
    expect(orderProblems([claim(1, null), claim(3, 2)])).toEqual([`consumer ${C}: ${id(3)} follows ${id(2)}, seen ${id(1)}`]);
  });

  it("finds a node's versions going backwards", () => {
    const node = (ver: number, n: number): EventLine => ({
      source: 'berth.baremetal',
      'detail-type': 'baremetal.node.update.end',
      detail: { id: id(n), subjects: ['n'], after: { n: { ver } } },
    });
    expect(orderProblems([node(1, 1), node(2, 2)])).toEqual([]);
    expect(orderProblems([node(2, 1), node(1, 2)])).toEqual(['n: version 1 after 2']);
  });
});
