/**
 * Anchors: which trees the solver visits, and what an anchor's slots choose from —
 * the providers of its tree and the sharing providers associated with it by aggregate.
 */
import type { Forest } from '../forest.js';
import type { Members } from '../forest-index.js';
import type { ProviderRecord } from '../model.js';
import { aggsSatisfy, granularOk, type GroupPlan } from './groups.js';
import type { RootTraits } from './request.js';
import { bySeq, RootViews, SHARING_TRAIT, viewIn, viewOf, type ProviderView } from './view.js';

/** anchors in visiting order */
export interface AnchorList {
  readonly length: number;
  at(i: number): ProviderView;
}

const NONE: ProviderView[] = [];

/** A request's view of the forest's trees and sharing providers (caches per request). */
export class Trees {
  private readonly sharingByAgg = new Map<string, ProviderView[]>();
  private readonly anySharing: boolean;
  private readonly cache = new Map<string, ProviderView[]>();
  private readonly single: ProviderView[] = [];

  constructor(private readonly forest: Forest) {
    const sharing = [...(forest.byTrait.get(SHARING_TRAIT) ?? [])]
      .map((u) => viewIn(forest, u)!)
      .filter(Boolean)
      .sort(bySeq);
    this.anySharing = sharing.length > 0;
    for (const s of sharing) {
      for (const a of s.aggs) {
        let l = this.sharingByAgg.get(a);
        if (!l) this.sharingByAgg.set(a, (l = []));
        l.push(s);
      }
    }
  }

  /** the tree's providers in creation order (a reused buffer for one-provider trees) */
  of(root: ProviderView): ProviderView[] {
    if (root.alone) {
      this.single[0] = root;
      return this.single;
    }
    const ids = this.forest.treeIds(root.uuid);
    if (ids.size <= 1) {
      this.single[0] = root;
      return this.single;
    }
    let t = this.cache.get(root.uuid);
    if (!t) {
      t = [];
      for (const u of ids) {
        const p = viewIn(this.forest, u);
        if (p) t.push(p);
      }
      t.sort(bySeq);
      this.cache.set(root.uuid, t);
    }
    return t;
  }

  /** sharing providers of other trees associated (by aggregate) with this tree */
  sharedWith(root: ProviderView, tree: readonly ProviderView[]): ProviderView[] {
    if (!this.anySharing) return NONE;
    let set: Set<ProviderView> | undefined;
    for (const q of tree) {
      for (const a of q.aggs) {
        const l = this.sharingByAgg.get(a);
        if (!l) continue;
        for (const s of l) {
          if (s.root === root.uuid) continue;
          (set ??= new Set()).add(s);
        }
      }
    }
    return set ? [...set].sort(bySeq) : NONE;
  }
}

/** roots of every tree with a provider in one of the sharing provider's aggregates */
function anchorsOfSharing(forest: Forest, s: ProviderView, into: Set<string>): void {
  into.add(s.root);
  for (const a of s.aggs) {
    for (const u of forest.byAggregate.get(a) ?? []) {
      const q = forest.get(u);
      if (q) into.add(q.root);
    }
  }
}

/**
 * Anchors worth visiting, in creation order: every root, or — when some group or
 * root_required can only be met through a small index (a rare class, trait or
 * aggregate) — the anchors reachable from that index.
 */
export function pickAnchors(forest: Forest, groups: readonly GroupPlan[], rr: RootTraits | undefined): AnchorList {
  const f = forest;
  const roots = f.roots();
  let best: { size: number; expand: (into: Set<string>) => void } | undefined;
  const consider = (size: number, expand: (into: Set<string>) => void) => {
    if (!best || size < best.size) best = { size, expand };
  };
  const sizeOf = (m: ReadonlyMap<string, Members>, names: readonly string[]) => names.reduce((n, x) => n + (m.get(x)?.size ?? 0), 0);
  const idsOf = (m: ReadonlyMap<string, Members>, names: readonly string[]) => names.flatMap((x) => [...(m.get(x) ?? [])]);
  for (const t of rr?.required ?? []) {
    consider(f.byTrait.get(t)?.size ?? 0, (into) => {
      for (const u of f.byTrait.get(t) ?? []) if (!f.get(u)?.parent) into.add(u);
    });
  }
  for (const g of groups) {
    const expandGranular = (ids: Iterable<string>) => (into: Set<string>) => {
      for (const u of ids) {
        const p = viewIn(f, u);
        if (!p || !granularOk(g, p)) continue;
        into.add(p.root);
        if (p.sharing) anchorsOfSharing(f, p, into);
      }
    };
    if (g.granular) {
      for (const [rc] of g.resources) consider(f.byResourceClass.get(rc)?.size ?? 0, expandGranular(f.byResourceClass.get(rc) ?? []));
      for (const any of g.required) consider(sizeOf(f.byTrait, any), (into) => expandGranular(idsOf(f.byTrait, any))(into));
      for (const any of g.memberOf) consider(sizeOf(f.byAggregate, any), (into) => expandGranular(idsOf(f.byAggregate, any))(into));
      if (g.inTreeRoot !== undefined) {
        const members = f.treeIds(g.inTreeRoot);
        consider(members.size, expandGranular(members));
      }
    } else {
      if (g.inTreeRoot !== undefined) {
        const r = g.inTreeRoot;
        consider(1, (into) => into.add(r));
      }
      for (const [rc, n] of g.resources) {
        const ids = f.byResourceClass.get(rc);
        consider(ids?.size ?? 0, (into) => {
          for (const u of ids ?? []) {
            const p = viewIn(f, u);
            if (!p?.fits(rc, n)) continue;
            into.add(p.root);
            if (p.sharing && (!g.memberOf.length || aggsSatisfy(p, g.memberOf))) anchorsOfSharing(f, p, into);
          }
        });
      }
    }
  }
  if (!best || best.size * 4 >= roots.length) return new RootViews(roots);
  const set = new Set<string>();
  best.expand(set);
  const picked =
    set.size * 4 >= roots.length
      ? roots.filter((r) => set.has(r.uuid))
      : [...set]
          .map((u) => f.get(u))
          .filter((p): p is ProviderRecord => !!p && !p.parent)
          .sort(bySeq);
  return { length: picked.length, at: (i) => viewOf(picked[i]!) };
}
