/**
 * The Forest's ordered lists the solver walks (all(), roots(), hasTrees()) stay equal
 * to a from-scratch sort whatever mix of creations, in-place updates, re-parenting and
 * deletions the snapshot applies — including the append fast path for new providers.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Forest } from '../../../functions/core/placement/forest.js';
import { newProviderRecord, type ProviderRecord } from '../../../functions/core/placement/model.js';

function record(uuid: string, seq: number, parent?: string): ProviderRecord {
  return newProviderRecord({ uuid, name: uuid, parent, root: parent ?? uuid, seq, at: '' });
}

const op = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), parent: fc.option(fc.nat(), { nil: undefined }), seqDelta: fc.integer({ min: -3, max: 5 }) }),
  fc.record({ kind: fc.constant('update' as const), which: fc.nat() }),
  fc.record({ kind: fc.constant('reparent' as const), which: fc.nat(), parent: fc.option(fc.nat(), { nil: undefined }) }),
  fc.record({ kind: fc.constant('delete' as const), which: fc.nat() }),
  fc.record({ kind: fc.constant('read' as const) }),
);

describe('Forest ordering', () => {
  it('all() and roots() match a fresh sort after any sequence of changes', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const f = new Forest();
        let seq = 100;
        let n = 0;
        const sorted = () => [...f.providers.values()].sort((a, b) => a.seq - b.seq || (a.uuid < b.uuid ? -1 : 1));
        for (const o of ops) {
          const live = [...f.providers.values()];
          if (o.kind === 'create') {
            seq += o.seqDelta;
            const parent = o.parent !== undefined && live.length ? live[o.parent % live.length] : undefined;
            f.put(record(`p${String(n++).padStart(3, '0')}`, seq, parent?.uuid));
          } else if (o.kind === 'update' && live.length) {
            const p = live[o.which % live.length]!;
            f.put({ ...p, generation: p.generation + 1 });
          } else if (o.kind === 'reparent' && live.length) {
            const p = live[o.which % live.length]!;
            const parent = o.parent !== undefined ? live[o.parent % live.length] : undefined;
            if (parent && parent.uuid !== p.uuid) f.put({ ...p, parent: parent.uuid, root: parent.root });
            else f.put({ ...p, parent: undefined, root: p.uuid });
          } else if (o.kind === 'delete' && live.length) {
            f.delete(live[o.which % live.length]!.uuid);
          } else {
            expect(f.all()).toEqual(sorted());
            expect(f.roots()).toEqual(sorted().filter((p) => !p.parent));
          }
        }
        expect(f.all()).toEqual(sorted());
        expect(f.roots()).toEqual(sorted().filter((p) => !p.parent));
        expect(f.hasTrees()).toBe(sorted().some((p) => p.parent));
      }),
      { numRuns: 400 },
    );
  });
});

describe('Forest versions', () => {
  it('moves only when a provider really changes (re-reading an unchanged one keeps cached answers valid)', () => {
    const f = new Forest();
    const a: ProviderRecord = {
      ...record('a', 1),
      inventories: { VCPU: { total: 8, reserved: 0, min_unit: 1, max_unit: 8, step_size: 1, allocation_ratio: 1 } },
      usages: { VCPU: 2 },
    };
    f.put(a);
    const v = f.version;
    f.put(structuredClone(a));
    expect(f.version).toBe(v);
    f.put({ ...structuredClone(a), usages: { VCPU: 3 } });
    expect(f.version).toBe(v + 1);
    f.put({ ...structuredClone(a), usages: { VCPU: 3 }, traits: ['CUSTOM_X'] });
    expect(f.version).toBe(v + 2);
  });
});
