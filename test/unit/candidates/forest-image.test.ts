/**
 * The forest image round-trips: whatever the forest holds (nested trees, shared and
 * distinct inventory definitions, usage, traits, aggregates, timestamps), encoding it,
 * going through JSON and decoding gives back the same records in the same order with the
 * same indexes — and tree membership matches a brute-force walk of the parent links.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImageFormatError } from '../../../functions/core/placement/forest-image.js';
import { decodeDelta, decodeForest, decodeSome } from '../../../functions/core/placement/forest-image-decode.js';
import { encodeDelta, encodeForest } from '../../../functions/core/placement/forest-image-encode.js';
import { Forest } from '../../../functions/core/placement/forest.js';
import { IdSet } from '../../../functions/core/placement/forest-index.js';
import type { ProviderRecord } from '../../../functions/core/placement/model.js';

const RCS = ['VCPU', 'MEMORY_MB', 'DISK_GB', 'CUSTOM_X'];
const TRAITS = ['HW_CPU_X86_AVX2', 'MISC_SHARES_VIA_AGGREGATE', 'CUSTOM_GOLD'];
const AGGS = ['a0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000002'];

const spec = fc.record({
  parent: fc.option(fc.nat(), { nil: undefined }),
  inv: fc.subarray(RCS),
  total: fc.integer({ min: 1, max: 3 }),
  ratio: fc.constantFrom(1, 1.5, 16),
  used: fc.nat({ max: 4 }),
  traits: fc.subarray(TRAITS),
  aggs: fc.subarray(AGGS),
  time: fc.nat({ max: 3 }),
});

interface Spec {
  parent?: number;
  inv: string[];
  total: number;
  ratio: number;
  used: number;
  traits: string[];
  aggs: string[];
  time: number;
}

function build(specs: Spec[]) {
  const f = new Forest();
  const made: ProviderRecord[] = [];
  specs.forEach((s, i) => {
    const uuid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const parent = s.parent !== undefined && made.length ? made[s.parent % made.length] : undefined;
    const rec: ProviderRecord = {
      uuid,
      name: `rp-${i}`,
      generation: i % 5,
      parent: parent?.uuid,
      root: parent ? parent.root : uuid,
      inventories: Object.fromEntries(
        s.inv.map((rc) => [rc, { total: s.total * 10, reserved: 0, min_unit: 1, max_unit: s.total * 10, step_size: 1, allocation_ratio: s.ratio }]),
      ),
      invVersion: s.inv.length ? 1 : 0,
      usages: Object.fromEntries(s.inv.slice(0, 1).map((rc) => [rc, s.used])),
      traits: s.traits,
      aggregates: s.aggs,
      children: 0,
      allocationCount: s.used ? 1 : 0,
      createdAt: `2026-11-23T00:00:0${s.time}.000000+00:00`,
      updatedAt: `2026-11-23T00:00:0${s.time + 1}.000000+00:00`,
      seq: 1000 + i,
    };
    made.push(rec);
    f.put(rec);
  });
  return f;
}

const sortedIndex = (m: ReadonlyMap<string, Iterable<string>>) => Object.fromEntries([...m].map(([k, s]) => [k, [...s].sort()]).sort());

describe('forest image', () => {
  it('round-trips every record, the creation order and every index', () => {
    fc.assert(
      fc.property(fc.array(spec, { maxLength: 40 }), (specs) => {
        const f = build(specs);
        const g = decodeForest(JSON.parse(JSON.stringify(encodeForest(f, 1234))));
        expect(g.all()).toEqual(f.all());
        expect(g.roots().map((p) => p.uuid)).toEqual(f.roots().map((p) => p.uuid));
        for (const idx of ['byResourceClass', 'byTrait', 'byAggregate', 'byRoot', 'childrenOf'] as const) {
          expect(sortedIndex(g[idx])).toEqual(sortedIndex(f[idx]));
        }
        // tree membership: treeIds(root) is exactly the providers whose parent chain reaches root
        for (const r of g.roots()) {
          const walk = g.all().filter((p) => {
            let q: ProviderRecord | undefined = p;
            while (q?.parent) q = g.get(q.parent);
            return q?.uuid === r.uuid;
          });
          expect([...g.treeIds(r.uuid)].sort()).toEqual(walk.map((p) => p.uuid).sort());
        }
      }),
      { numRuns: 200 },
    );
  });

  it('decodes only the providers asked for, each as the whole image decodes it', () => {
    fc.assert(
      fc.property(fc.array(spec, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 10 }), (specs, picks) => {
        const f = build(specs);
        const all = f.all();
        const absent = 'ffffffff-0000-4000-8000-000000000000';
        const only = new Set([...picks.map((k) => all[k % Math.max(1, all.length)]?.uuid ?? absent), absent]);
        const some = decodeSome(JSON.parse(JSON.stringify(encodeForest(f, 1234))), only);
        expect(some).toEqual(all.filter((p) => only.has(p.uuid)));
      }),
      { numRuns: 200 },
    );
  });

  it('shares what providers have in common, in the image and after decoding', () => {
    const specs = Array.from({ length: 100 }, (_, i) => ({
      inv: ['VCPU', 'MEMORY_MB'],
      total: 2,
      ratio: 16,
      used: i % 3,
      traits: ['CUSTOM_GOLD'],
      aggs: [AGGS[0]!],
      time: 0,
    }));
    const img = encodeForest(build(specs), 1);
    expect(img.definitions).toHaveLength(1);
    expect(img.lists).toHaveLength(2);
    expect(img.times).toHaveLength(2);
    const g = decodeForest(img);
    const [a, b] = g.all();
    expect(a!.inventories).toBe(b!.inventories);
    expect(a!.traits).toBe(b!.traits);
  });

  it('refuses what is not an image of this version', () => {
    expect(() => decodeForest({ format: 'berth-forest-image', version: 1 } as never)).toThrow(ImageFormatError);
    expect(() => decodeForest({ format: 'berth-forest-image', version: 99 } as never)).toThrow(ImageFormatError);
    const img = encodeForest(build([{ inv: [], total: 1, ratio: 1, used: 0, traits: [], aggs: [], time: 0 }]), 1);
    expect(() => decodeForest({ ...img, name: [] })).toThrow(/name has 0 entries, not 1/);
  });

  it('keeps every index exact through changes after a bulk (image) load: what a rebuild from the records would give', () => {
    const fromScratch = (f: Forest) => {
      const g = new Forest();
      for (const p of f.all()) g.put({ ...p });
      return g;
    };
    const change = fc.record({
      who: fc.nat(),
      kind: fc.constantFrom('usage', 'traits', 'aggs', 'inv', 'delete', 'same'),
      traits: fc.subarray(TRAITS),
      aggs: fc.subarray(AGGS),
      inv: fc.subarray(RCS),
      used: fc.nat({ max: 4 }),
    });
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 30 }), fc.array(change, { maxLength: 60 }), (specs, changes) => {
        const g = decodeForest(JSON.parse(JSON.stringify(encodeForest(build(specs), 1234))));
        for (const c of changes) {
          const all = g.all();
          if (!all.length) break;
          const p = all[c.who % all.length]!;
          if (c.kind === 'delete') {
            if (!g.children(p.uuid).length) g.delete(p.uuid);
            continue;
          }
          const inv =
            c.kind === 'inv'
              ? Object.fromEntries(c.inv.map((rc) => [rc, { ...Object.values(p.inventories)[0]!, total: 5 } as never]))
              : { ...p.inventories };
          g.put({
            ...p,
            generation: p.generation + 1,
            usages: c.kind === 'usage' ? { [Object.keys(p.inventories)[0] ?? 'VCPU']: c.used } : p.usages,
            traits: c.kind === 'traits' ? c.traits : [...p.traits],
            aggregates: c.kind === 'aggs' ? c.aggs : [...p.aggregates],
            inventories: c.kind === 'inv' && !Object.keys(p.inventories).length ? {} : inv,
          });
          const want = fromScratch(g);
          for (const idx of ['byResourceClass', 'byTrait', 'byAggregate', 'byRoot', 'childrenOf'] as const) {
            expect(sortedIndex(g[idx])).toEqual(sortedIndex(want[idx]));
            for (const [, members] of g[idx]) expect(members.size).toBe([...members].length);
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('delta images', () => {
  it('the base with a delta put in is the forest the delta was made of: records, order, indexes', () => {
    const edit = fc.record({
      who: fc.nat(),
      kind: fc.constantFrom('usage', 'traits', 'delete', 'untouched'),
      traits: fc.subarray(TRAITS),
      used: fc.nat({ max: 4 }),
    });
    fc.assert(
      fc.property(
        fc.array(spec, { minLength: 1, maxLength: 30 }),
        fc.array(spec, { maxLength: 15 }),
        fc.array(edit, { maxLength: 15 }),
        (specs, more, edits) => {
          const base = build(specs);
          const baseImg = JSON.parse(JSON.stringify(encodeForest(base, 1)));
          // the forest later: new providers (some under old ones), changed and deleted ones
          const later = build([...specs, ...more]);
          const changed = new Set(
            later
              .all()
              .slice(specs.length)
              .map((p) => p.uuid),
          );
          for (const e of edits) {
            const all = later.all();
            if (!all.length) break;
            const p = all[e.who % all.length]!;
            changed.add(p.uuid);
            if (e.kind === 'delete' && !later.children(p.uuid).length) later.delete(p.uuid);
            else if (e.kind === 'usage') later.put({ ...p, generation: p.generation + 1, usages: { VCPU: e.used } });
            else if (e.kind === 'traits') later.put({ ...p, generation: p.generation + 1, traits: e.traits });
          }
          const delta = JSON.parse(JSON.stringify(encodeDelta(later, changed, 2)));
          expect(delta.uuid.length / 36 + delta.deleted.length).toBe(changed.size);
          const g = decodeForest(baseImg);
          const d = decodeDelta(delta, g.intern);
          for (const u of d.deleted) g.delete(u);
          g.putMany(d.records);
          expect(g.all()).toEqual(later.all());
          expect(g.roots().map((p) => p.uuid)).toEqual(later.roots().map((p) => p.uuid));
          for (const idx of ['byResourceClass', 'byTrait', 'byAggregate', 'byRoot', 'childrenOf'] as const) {
            expect(sortedIndex(g[idx])).toEqual(sortedIndex(later[idx]));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('Forest.putMany (a catch-up puts many records at once)', () => {
  it('leaves the forest exactly as put() one by one would: records, order, indexes, also for providers it holds, deleted ones and repeats', () => {
    const change = fc.record({
      who: fc.nat(),
      kind: fc.constantFrom('new', 'changed', 'same', 'repeat'),
      traits: fc.subarray(TRAITS),
      used: fc.nat({ max: 4 }),
    });
    fc.assert(
      fc.property(
        fc.array(spec, { minLength: 1, maxLength: 30 }),
        fc.array(spec, { maxLength: 30 }),
        fc.array(change, { maxLength: 20 }),
        fc.nat({ max: 5 }),
        (specs, more, changes, deletions) => {
          // the records of a larger forest: the first `specs` are held, `more` are new to it
          const whole = build([...specs, ...more]).all();
          const held = whole.slice(0, specs.length);
          const batch: ProviderRecord[] = whole.slice(specs.length);
          for (const c of changes) {
            const p = whole[c.who % whole.length]!;
            if (c.kind === 'changed') batch.push({ ...p, generation: p.generation + 1, traits: c.traits, usages: { VCPU: c.used } });
            else if (c.kind === 'same') batch.push({ ...p });
            else if (c.kind === 'repeat') batch.push({ ...p, name: `${p.name}-again` });
          }
          const one = decodeForest(JSON.parse(JSON.stringify(encodeForest(build(specs), 1))));
          const many = decodeForest(JSON.parse(JSON.stringify(encodeForest(build(specs), 1))));
          // a provider deleted before the batch may come back in it (its old index entries are gone)
          for (const p of held.slice(0, deletions)) {
            if (one.children(p.uuid).length) continue;
            one.delete(p.uuid);
            many.delete(p.uuid);
          }
          for (const r of batch) one.put(r);
          many.putMany(batch);
          expect(many.all()).toEqual(one.all());
          expect(many.roots().map((p) => p.uuid)).toEqual(one.roots().map((p) => p.uuid));
          for (const idx of ['byResourceClass', 'byTrait', 'byAggregate', 'byRoot', 'childrenOf'] as const) {
            expect(sortedIndex(many[idx])).toEqual(sortedIndex(one[idx]));
            for (const [, members] of many[idx]) expect(members.size).toBe([...members].length);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('IdSet (an index entry)', () => {
  it('counts and lists its members through adds and deletes, folded or not', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 40 }), { maxLength: 20 }),
        fc.array(fc.tuple(fc.boolean(), fc.nat({ max: 600 })), { maxLength: 2000 }),
        (base, ops) => {
          const start = [...new Set(base.map(String))];
          const s = new IdSet(start.slice());
          const ref = new Set(start);
          for (const [add, n] of ops) {
            const u = String(n);
            // the forest's invariant: add a non-member, delete a member
            if (add && !ref.has(u)) {
              s.add(u);
              ref.add(u);
            } else if (!add && ref.has(u)) {
              s.delete(u);
              ref.delete(u);
            }
          }
          expect(s.size).toBe(ref.size);
          expect([...s].sort()).toEqual([...ref].sort());
        },
      ),
      { numRuns: 200 },
    );
  });
});
