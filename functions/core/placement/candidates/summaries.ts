/**
 * Which providers provider_summaries lists, in upstream's order (order.ts
 * compareSummaryProviders): trees by the first request group that finds them, then by
 * their root's creation; each tree's providers as created.
 */
import type { Forest } from '../forest.js';
import { compareSummaryProviders, type SummaryOrderKey } from '../order.js';
import type { Trees } from './anchors.js';
import { granularOk } from './groups.js';
import type { SlotPlan } from './plan.js';
import { nextMark, viewIn, type ProviderView } from './view.js';

interface SummaryEntry extends SummaryOrderKey {
  view: ProviderView;
}

/**
 * Every provider of every tree a candidate takes resources from (resourceless groups'
 * providers are in those trees); before 1.29 with nested providers, only the
 * providers the candidates use.
 */
export function summarise(forest: Forest, plan: SlotPlan, trees: Trees, candidates: readonly ProviderView[][]): ProviderView[] {
  const firstGroup = firstGroups(forest, plan, trees, candidates);
  const resourceSlots: number[] = [];
  for (const [i, s] of plan.slots.entries()) if (s.amounts.length) resourceSlots.push(i);
  const out: SummaryEntry[] = [];
  const entry = (p: ProviderView): SummaryEntry => ({
    view: p,
    seq: p.seq,
    rootSeq: p.parent === undefined ? p.seq : (viewIn(forest, p.root)?.seq ?? p.seq),
    firstGroup: firstGroup.get(p.root) ?? 0,
  });
  const mark = nextMark();
  if (plan.distinctRoots) {
    for (const c of candidates) {
      for (const i of resourceSlots) {
        const p = c[i]!;
        if (p.mark !== mark) {
          p.mark = mark;
          out.push(entry(p));
        }
      }
    }
    return out.sort(compareSummaryProviders).map((e) => e.view);
  }
  const roots = new Set<string>();
  for (const c of candidates) {
    for (const i of resourceSlots) {
      const p = c[i]!;
      if (p.mark === mark) continue;
      p.mark = mark;
      if (p.alone) {
        out.push(entry(p));
        continue;
      }
      if (roots.has(p.root)) continue;
      roots.add(p.root);
      const root = viewIn(forest, p.root);
      if (root) {
        for (const q of trees.of(root)) {
          q.mark = mark;
          out.push(entry(q));
        }
      }
    }
  }
  return out.sort(compareSummaryProviders).map((e) => e.view);
}

/**
 * The first group (request order) that finds each tree: one that takes something from
 * it in the answer, or an earlier one a provider of the tree satisfies on its own
 * (upstream searches group by group and summarises every tree a group finds).
 */
function firstGroups(forest: Forest, plan: SlotPlan, trees: Trees, candidates: readonly ProviderView[][]): Map<string, number> {
  const firstGroup = new Map<string, number>();
  for (const c of candidates) {
    for (const [i, s] of plan.slots.entries()) {
      const root = c[i]!.root;
      const g = firstGroup.get(root);
      if (g === undefined || s.group < g) firstGroup.set(root, s.group);
    }
  }
  // upstream's unnumbered group, searched across trees and sharing providers, also
  // finds the anchor tree of every combination it makes
  const u = plan.unsuffixed;
  if (u && plan.multiProvider) {
    for (const c of candidates) {
      const anchor = c.find((p) => !p.sharing)?.root;
      if (anchor === undefined) continue;
      const g = firstGroup.get(anchor);
      if (g === undefined || u.index < g) firstGroup.set(anchor, u.index);
    }
  }
  const alone = plan.groups.filter((g) => g.granular || !plan.multiProvider).sort((a, b) => a.index - b.index);
  for (const [root, g] of firstGroup) {
    const rv = viewIn(forest, root);
    if (!rv) continue;
    const finder = alone.find((group) => group.index < g && trees.of(rv).some((q) => granularOk(group, q)));
    if (finder) firstGroup.set(root, finder.index);
  }
  return firstGroup;
}
