/**
 * The slot plan: what one request asks of every anchor, worked out once and then
 * frozen. A _slot_ is one decision of the search — a granular group, or one class of
 * the unnumbered group; every candidate has one provider per slot, in slot order.
 *
 * Slot order: groups named in same_subtree first (set by set, so each set is checked
 * as early as possible), then the unnumbered group's classes, then the other granular
 * groups. Rendering uses request order instead (renderOrder).
 */
import type { Forest } from '../forest.js';
import { compareResourceClasses, type CustomOrder } from '../standard.js';
import { planGroup, type GroupPlan } from './groups.js';
import type { CandidatesRequest } from './request.js';
import { SHARING_TRAIT } from './view.js';

/** One decision of the search: a granular group, or one class of the unnumbered group. */
export interface Slot {
  /** index of the group in request.groups */
  readonly group: number;
  readonly granular: boolean;
  /** what the chosen provider gives for this slot (empty for a resourceless group) */
  readonly amounts: ReadonlyArray<readonly [string, number]>;
}

export interface SlotPlan {
  /** the request's groups, in request order */
  readonly groups: readonly GroupPlan[];
  /** the unnumbered group, if the request has one */
  readonly unsuffixed: GroupPlan | undefined;
  readonly slots: readonly Slot[];
  /** per slot: its group, granular?, and (unnumbered group) its class and amount */
  readonly slotGroup: readonly GroupPlan[];
  readonly slotGranular: readonly boolean[];
  readonly slotRc: readonly string[];
  readonly slotAmount: readonly number[];
  /** how many slots are granular groups */
  readonly granularSlots: number;
  /** slot index after which the unnumbered group's collective traits are checked (-1: none) */
  readonly lastUnsuffixedSlot: number;
  /** slot index -> the same_subtree slot sets completed there */
  readonly subtreeChecks: ReadonlyArray<ReadonlyArray<readonly number[]> | undefined>;
  /** classes more than one slot asks for (the only ones the supply bound can reject) */
  readonly sharedClasses: readonly string[];
  /** those classes with the total amount all slots ask for */
  readonly sharedTotals: ReadonlyArray<readonly [string, number]>;
  /** group_policy=isolate: granular groups on distinct providers */
  readonly isolate: boolean;
  /** before 1.29 (with nested providers): no two providers of one tree in one request */
  readonly distinctRoots: boolean;
  /**
   * The deployment has nested or sharing providers: upstream then takes its
   * multi-provider path (the unnumbered group built per class id, searched across
   * trees), which shows in the render order and in the summaries' order.
   */
  readonly multiProvider: boolean;
  /** slot indices in request-group order (how allocations and mappings are rendered) */
  readonly renderOrder: readonly number[];
  /** every resource class any group asked for (summaries before 1.27 show only these) */
  readonly requestedResources: ReadonlySet<string>;
}

export function planSlots(forest: Forest, req: CandidatesRequest, order?: CustomOrder): SlotPlan {
  const groups = req.groups.map((g, index) => planGroup(forest, g, index));
  const unsuffixed = groups.find((p) => !p.granular);

  const ordered: GroupPlan[] = [];
  const bySuffix = new Map(groups.map((p) => [p.group.suffix, p]));
  for (const set of req.sameSubtrees) {
    for (const s of set) {
      const p = bySuffix.get(s);
      if (p && !ordered.includes(p)) ordered.push(p);
    }
  }
  if (unsuffixed) ordered.push(unsuffixed);
  for (const p of groups) if (!ordered.includes(p)) ordered.push(p);

  const slots: Slot[] = [];
  const slotGroup: GroupPlan[] = [];
  const slotsOfGroup = new Map<number, number[]>();
  let lastUnsuffixedSlot = -1;
  for (const p of ordered) {
    const idx: number[] = [];
    if (p.granular) {
      idx.push(slots.length);
      slots.push({ group: p.index, granular: true, amounts: p.resources });
      slotGroup.push(p);
    } else {
      for (const r of p.resources) {
        idx.push(slots.length);
        slots.push({ group: p.index, granular: false, amounts: [r] });
        slotGroup.push(p);
      }
      lastUnsuffixedSlot = slots.length - 1;
    }
    slotsOfGroup.set(p.index, idx);
  }

  const seen = new Map<string, number>();
  for (const s of slots) for (const [rc] of s.amounts) seen.set(rc, (seen.get(rc) ?? 0) + 1);
  const sharedClasses = [...seen].filter(([, n]) => n > 1).map(([rc]) => rc);
  const sharedTotals = sharedClasses.map((rc): [string, number] => [
    rc,
    slots.reduce((t, s) => t + s.amounts.reduce((a, [r, n]) => a + (r === rc ? n : 0), 0), 0),
  ]);

  const subtreeChecks: Array<number[][] | undefined> = [];
  for (const set of req.sameSubtrees) {
    const idx = set.flatMap((s) => slotsOfGroup.get(bySuffix.get(s)?.index ?? -1) ?? []);
    if (idx.length < 2) continue;
    const at = Math.max(...idx);
    (subtreeChecks[at] ??= []).push(idx);
  }

  const multiProvider = forest.hasTrees() || (forest.byTrait.get(SHARING_TRAIT)?.size ?? 0) > 0;

  const requestedResources = new Set<string>();
  for (const g of req.groups) for (const [rc] of g.resources) requestedResources.add(rc);

  return Object.freeze({
    groups,
    unsuffixed,
    slots,
    slotGroup,
    slotGranular: slots.map((s) => s.granular),
    slotRc: slots.map((s) => (s.granular ? '' : s.amounts[0]![0])),
    slotAmount: slots.map((s) => (s.granular ? 0 : s.amounts[0]![1])),
    granularSlots: slots.filter((s) => s.granular).length,
    lastUnsuffixedSlot,
    subtreeChecks,
    sharedClasses,
    sharedTotals,
    isolate: req.groupPolicy === 'isolate',
    distinctRoots: !req.nestedAware && forest.hasTrees(),
    multiProvider,
    renderOrder: renderOrder(slots, multiProvider, order),
    requestedResources,
  });
}

/**
 * Groups in request order; the unnumbered group's classes in request order, or in
 * class order where upstream takes its multi-provider path (it builds that group's
 * requests per class id).
 */
function renderOrder(slots: readonly Slot[], multiProvider: boolean, order: CustomOrder | undefined): number[] {
  const cmp = compareResourceClasses(order);
  const classOf = (i: number) => slots[i]!.amounts[0]?.[0] ?? '';
  return slots
    .map((_, i) => i)
    .sort(
      (a, b) =>
        slots[a]!.group - slots[b]!.group || (multiProvider && !slots[a]!.granular && !slots[b]!.granular ? cmp(classOf(a), classOf(b)) : 0) || a - b,
    );
}
