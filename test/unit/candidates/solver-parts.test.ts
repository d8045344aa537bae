/**
 * The solver's parts on their own: the frozen slot plan, anchor choice, the per-anchor
 * prechecks and the resumable search (the whole solver is tested in solver.test.ts,
 * solver.property.test.ts and spec-examples.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseCandidatesQuery } from '../../../functions/core/placement/candidates/request.js';
import { planSlots } from '../../../functions/core/placement/candidates/plan.js';
import { pickAnchors, Trees } from '../../../functions/core/placement/candidates/anchors.js';
import { SlotOptions } from '../../../functions/core/placement/candidates/options.js';
import { feasible, loneRootFits } from '../../../functions/core/placement/candidates/prechecks.js';
import { AnchorSearch } from '../../../functions/core/placement/candidates/search.js';
import { viewIn, type ProviderView } from '../../../functions/core/placement/candidates/view.js';
import type { Forest } from '../../../functions/core/placement/forest.js';
import { parseQuery } from '../../../functions/http/types.js';
import { buildForest, namesOf, SHARES, uuidOf, version } from './forests.js';

const parse = (qs: string, v = '1.39') => parseCandidatesQuery(parseQuery(qs), version(v));
const view = (f: Forest, name: string) => viewIn(f, uuidOf(name))!;

describe('the slot plan', () => {
  const flat = buildForest([{ name: 'cn', inv: { VCPU: { total: 8 }, MEMORY_MB: { total: 1024 } } }]);
  const nested = buildForest([
    { name: 'cn', inv: { VCPU: { total: 8 }, MEMORY_MB: { total: 1024 } } },
    { name: 'pf', parent: 'cn', inv: { CUSTOM_VF: { total: 4 } } },
  ]);

  it('orders slots same_subtree groups first, then the unnumbered classes, then the rest; renders in request order', () => {
    const req = parse(
      'resources=MEMORY_MB:1,VCPU:1&resources1=CUSTOM_VF:1&resources2=CUSTOM_VF:1&required3=CUSTOM_X&same_subtree=2,3&group_policy=none',
    );
    const plan = planSlots(nested, req);
    expect(plan.slots.map((s) => req.groups[s.group]!.suffix)).toEqual(['2', '3', '', '', '1']);
    expect(plan.slots.map((s) => s.amounts.map(([rc]) => rc).join())).toEqual(['CUSTOM_VF', '', 'MEMORY_MB', 'VCPU', 'CUSTOM_VF']);
    expect(plan.lastUnsuffixedSlot).toBe(3);
    expect(plan.subtreeChecks[1]).toEqual([[0, 1]]);
    expect(plan.sharedClasses).toEqual(['CUSTOM_VF']);
    expect(plan.sharedTotals).toEqual([['CUSTOM_VF', 2]]);
    expect(plan.granularSlots).toBe(3);
    // request order; nested providers: the unnumbered group's classes in class order (VCPU before MEMORY_MB)
    expect(plan.renderOrder).toEqual([3, 2, 4, 0, 1]);
    expect([...plan.requestedResources]).toEqual(['MEMORY_MB', 'VCPU', 'CUSTOM_VF']);
  });

  it("keeps the unnumbered group's classes in request order where upstream does (no nested or sharing providers)", () => {
    const req = parse('resources=MEMORY_MB:1,VCPU:1');
    expect(planSlots(flat, req).multiProvider).toBe(false);
    expect(planSlots(flat, req).renderOrder).toEqual([0, 1]);
    expect(planSlots(nested, req).multiProvider).toBe(true);
    expect(planSlots(nested, req).renderOrder).toEqual([1, 0]);
    const sharing = buildForest([{ name: 'ss', inv: { DISK_GB: { total: 8 } }, traits: [SHARES] }]);
    expect(planSlots(sharing, req).multiProvider).toBe(true);
  });

  it('is frozen', () => {
    // the plan object at run time; its slots and groups are readonly by type (freezing
    // each of them too measurably slowed requests with many groups)
    expect(Object.isFrozen(planSlots(nested, parse('resources=VCPU:1&resources1=CUSTOM_VF:1')))).toBe(true);
  });
});

describe('anchors', () => {
  const specs = Array.from({ length: 12 }, (_, i) => ({ name: `cn${i}`, inv: { VCPU: { total: 8 } } }));
  specs.push({ name: 'gpu', inv: { VCPU: { total: 8 }, CUSTOM_GPU: { total: 1 } } } as (typeof specs)[number]);
  const f = buildForest(specs);
  const names = namesOf(f);
  const list = (qs: string) => {
    const a = pickAnchors(f, planSlots(f, parse(qs)).groups, parse(qs).rootRequired);
    return Array.from({ length: a.length }, (_, i) => names.get(a.at(i).uuid));
  };
  it('visits every root in creation order, or only those a rare class reaches', () => {
    expect(list('resources=VCPU:1')).toHaveLength(13);
    expect(list('resources=VCPU:1&resources1=CUSTOM_GPU:1')).toEqual(['gpu']);
  });
  it("a tree's providers and the sharing providers of other trees it reaches by aggregate", () => {
    const g = buildForest([
      { name: 'cn', inv: { VCPU: { total: 8 } } },
      { name: 'numa', parent: 'cn', inv: { VCPU: { total: 8 } }, aggs: [uuidOf('agg')] },
      { name: 'ss', inv: { DISK_GB: { total: 8 } }, traits: [SHARES], aggs: [uuidOf('agg')] },
    ]);
    const trees = new Trees(g);
    const tree = trees.of(view(g, 'cn'));
    expect(tree.map((p) => p.record.name)).toEqual(['cn', 'numa']);
    expect(trees.sharedWith(view(g, 'cn'), tree).map((p) => p.record.name)).toEqual(['ss']);
    expect(trees.sharedWith(view(g, 'ss'), trees.of(view(g, 'ss')))).toEqual([]);
  });
});

describe('prechecks per anchor', () => {
  const f = buildForest([
    { name: 'cn', inv: { VCPU: { total: 8 } } },
    { name: 'pf1', parent: 'cn', inv: { CUSTOM_VF: { total: 2 } } },
    { name: 'pf2', parent: 'cn', inv: { CUSTOM_VF: { total: 2 } } },
  ]);
  const cn = view(f, 'cn');
  const fill = (qs: string) => {
    const plan = planSlots(f, parse(qs));
    const options = new SlotOptions(plan);
    return { plan, options, filled: options.fill(new Trees(f).of(cn), [], true) };
  };
  it('rejects an anchor whose options together lack the supply several slots ask for', () => {
    const ok = fill('resources1=CUSTOM_VF:2&resources2=CUSTOM_VF:2&group_policy=none');
    expect(ok.filled && feasible(ok.plan, ok.options)).toBe(true);
    const short = fill('resources1=CUSTOM_VF:2&resources2=CUSTOM_VF:2&resources3=CUSTOM_VF:1&group_policy=none');
    expect(short.filled).toBe(true);
    expect(feasible(short.plan, short.options)).toBe(false);
  });
  it('rejects isolate with fewer distinct providers than granular groups', () => {
    const r = fill('resources1=CUSTOM_VF:1&resources2=CUSTOM_VF:1&resources3=CUSTOM_VF:1&group_policy=isolate');
    expect(r.filled && feasible(r.plan, r.options)).toBe(false);
  });
  it('a slot without options fails the fill', () => {
    expect(fill('resources=CUSTOM_GPU:1').filled).toBe(false);
  });
  it('decides a one-provider tree at once: every slot on its root', () => {
    const g = buildForest([{ name: 'cn', inv: { VCPU: { total: 4 } } }]);
    const fits = (qs: string) => {
      const plan = planSlots(g, parse(qs));
      return loneRootFits(plan, new SlotOptions(plan), view(g, 'cn'), true);
    };
    expect(fits('resources=VCPU:2&resources1=VCPU:2&group_policy=none')).toBe(true);
    expect(fits('resources=VCPU:2&resources1=VCPU:3&group_policy=none')).toBe(false); // the sum does not fit
    expect(fits('resources1=VCPU:1&resources2=VCPU:1&group_policy=isolate')).toBe(false);
  });
});

describe('the resumable search', () => {
  const f = buildForest([
    { name: 'cn', inv: { VCPU: { total: 8 } } },
    { name: 'pf1', parent: 'cn', inv: { CUSTOM_VF: { total: 1 } } },
    { name: 'pf2', parent: 'cn', inv: { CUSTOM_VF: { total: 1 } } },
    { name: 'pf3', parent: 'cn', inv: { CUSTOM_VF: { total: 1 } } },
  ]);
  const plan = planSlots(f, parse('resources1=CUSTOM_VF:1&resources2=CUSTOM_VF:1&group_policy=none'));
  const pfs = ['pf1', 'pf2', 'pf3'].map((n) => view(f, n));
  const search = (counter = { nodes: 0 }) => new AnchorSearch(plan, f, [pfs.slice(), pfs.slice()], counter);
  const drain = (s: AnchorSearch) => {
    const out: string[] = [];
    for (let c = s.step(); c; c = s.step()) out.push(c.map((p: ProviderView) => p.record.name).join('+'));
    return out;
  };
  it('yields every assignment that fits, depth first, then is done', () => {
    const counter = { nodes: 0 };
    const s = search(counter);
    expect(drain(s)).toEqual(['pf1+pf2', 'pf1+pf3', 'pf2+pf1', 'pf2+pf3', 'pf3+pf1', 'pf3+pf2']);
    expect(s.done).toBe(true);
    expect(s.step()).toBeUndefined();
    expect(counter.nodes).toBe(12);
  });
  it('owns its state: searches stepped in turns give what each gives alone', () => {
    const a = search();
    const b = search();
    const turns: string[][] = [[], []];
    for (let i = 0; i < 6; i++) {
      turns[0]!.push(
        a
          .step()!
          .map((p) => p.record.name)
          .join('+'),
      );
      turns[1]!.push(
        b
          .step()!
          .map((p) => p.record.name)
          .join('+'),
      );
    }
    expect(turns[0]).toEqual(drain(search()));
    expect(turns[1]).toEqual(turns[0]);
  });
});
