/**
 * The GET /allocation_candidates response body, built as a string (it can be tens of
 * MB): allocation_requests in the shape of the request's microversion (list before
 * 1.12, dict from 1.12, + mappings from 1.34) and provider_summaries (requested
 * classes only before 1.27, traits from 1.17, parent/root from 1.29).
 *
 * Two caches keep this cheap:
 *  - a provider's summary entry depends only on its record and the shape: it is kept
 *    on the record's view (functions/core/placement/candidates/view.ts), so it is built once per
 *    provider change, not per request;
 *  - an allocation request's text depends only on which slots share a provider (its
 *    "pattern"): per pattern, the text is precompiled into constant pieces with the
 *    providers' quoted uuids spliced in between, so a candidate costs a few array
 *    pushes.
 */
import type { CandidatesRequest, VersionLike } from './request.js';
import type { Slot } from './plan.js';
import type { CandidatesResult } from './solver.js';
import type { ProviderView } from './view.js';
import { NO_CUSTOM_ORDER, sortResourceClasses, sortTraits, type CustomOrder } from '../standard.js';

export interface Shape {
  /** >= 1.12: allocations keyed by provider */
  dict: boolean;
  /** >= 1.34 */
  mappings: boolean;
  /** >= 1.17 */
  traits: boolean;
  /** >= 1.27: every inventory, not just the requested classes */
  allResources: boolean;
  /** >= 1.29 */
  tree: boolean;
}

export function shapeFor(v: VersionLike): Shape {
  return {
    dict: v.atLeast(1, 12),
    mappings: v.atLeast(1, 34),
    traits: v.atLeast(1, 17),
    allResources: v.atLeast(1, 27),
    tree: v.atLeast(1, 29),
  };
}

const q = JSON.stringify;

/**
 * Make V8 store a built-up (rope) string flat, so that joining a cached fragment on
 * every request copies it instead of walking its rope again (the flatstr trick).
 */
function flatten(s: string): void {
  void ((s as unknown as number) | 0);
}

function shapeKey(shape: Shape, requested: ReadonlySet<string>): string {
  return `${shape.traits ? 't' : ''}${shape.tree ? 'n' : ''}${shape.allResources ? '*' : [...requested].sort().join(',')}`;
}

/**
 * `"<uuid>":{...}` for provider_summaries; cached on the view per shape. Classes and
 * traits in Placement's id order (standard.ts; `order` gives the custom names'
 * creation order: a name a provider uses keeps its place, so the cache stays right).
 */
export function summaryFragment(
  p: ProviderView,
  shape: Shape,
  requested: ReadonlySet<string>,
  order: CustomOrder = NO_CUSTOM_ORDER,
  key = shapeKey(shape, requested),
): string {
  let s = p.fragments?.get(key);
  if (s !== undefined) return s;
  const res: string[] = [];
  for (const rc of sortResourceClasses(p.inv.keys(), order)) {
    if (!shape.allResources && !requested.has(rc)) continue;
    const inv = p.inv.get(rc)!;
    res.push(`${q(rc)}:{"capacity":${Math.trunc(inv.cap)},"used":${Math.trunc(p.used(rc))}}`);
  }
  s = `${p.json}:{"resources":{${res.join(',')}}`;
  if (shape.traits)
    s += `,"traits":[${sortTraits(p.traits, order)
      .map((t) => q(t))
      .join(',')}]`;
  if (shape.tree) s += `,"parent_provider_uuid":${p.parent ? q(p.parent) : 'null'},"root_provider_uuid":${q(p.root)}`;
  s += '}';
  flatten(s);
  (p.fragments ??= new Map()).set(key, s);
  return s;
}

/** constant text pieces with slot indices whose provider uuid goes between them */
interface Template {
  pieces: string[];
  refs: number[];
}

/**
 * Compile the text of an allocation request whose slot i is on the provider of slot
 * first[i] (the first slot with the same provider). Groups in request order, classes
 * in request order within a group; amounts of one class on one provider added up.
 */
function compile(first: number[], slots: readonly Slot[], renderOrder: readonly number[], suffixes: string[], shape: Shape): Template {
  const providers: number[] = [];
  const amounts = new Map<number, Map<string, number>>();
  const mappings = new Map<string, number[]>();
  for (const i of renderOrder) {
    const who = first[i]!;
    const sfx = suffixes[slots[i]!.group]!;
    let m = mappings.get(sfx);
    if (!m) mappings.set(sfx, (m = []));
    if (!m.includes(who)) m.push(who);
    if (!slots[i]!.amounts.length) continue;
    let a = amounts.get(who);
    if (!a) {
      amounts.set(who, (a = new Map()));
      providers.push(who);
    }
    for (const [rc, n] of slots[i]!.amounts) a.set(rc, (a.get(rc) ?? 0) + n);
  }
  const pieces: string[] = [];
  const refs: number[] = [];
  let buf = '';
  const ref = (slot: number) => {
    pieces.push(buf);
    refs.push(slot);
    buf = '';
  };
  const res = (who: number) => `{${[...amounts.get(who)!].map(([rc, n]) => `${q(rc)}:${n}`).join(',')}}`;
  if (!shape.dict) {
    buf += '{"allocations":[';
    providers.forEach((who, k) => {
      buf += `${k ? ',' : ''}{"resource_provider":{"uuid":`;
      ref(who);
      buf += `},"resources":${res(who)}}`;
    });
    buf += ']}';
  } else {
    buf += '{"allocations":{';
    providers.forEach((who, k) => {
      if (k) buf += ',';
      ref(who);
      buf += `:{"resources":${res(who)}}`;
    });
    buf += '}';
    if (shape.mappings) {
      buf += ',"mappings":{';
      [...mappings].forEach(([sfx, whos], k) => {
        buf += `${k ? ',' : ''}${q(sfx)}:[`;
        whos.forEach((who, j) => {
          if (j) buf += ',';
          ref(who);
        });
        buf += ']';
      });
      buf += '}';
    }
    buf += '}';
  }
  pieces.push(buf);
  for (const x of pieces) flatten(x);
  return { pieces, refs };
}

/**
 * Templates of the all-on-one-provider pattern, by request signature, shared across
 * requests (a scheduler asks the same shapes again and again); each view keeps the
 * text of its last one, so a flat deployment's warm answer is mostly cached text.
 */
const singleTemplates = new Map<string, Template & { id: number }>();
let templateIds = 0;
const MAX_SINGLE_TEMPLATES = 1000;

function singleTemplate(res: CandidatesResult, suffixes: string[], shape: Shape): Template & { id: number } {
  const { slots, renderOrder } = res;
  const sig = JSON.stringify([shape, suffixes, slots.map((s) => [s.group, s.amounts]), renderOrder]);
  let t = singleTemplates.get(sig);
  if (!t) {
    if (singleTemplates.size >= MAX_SINGLE_TEMPLATES) singleTemplates.delete(singleTemplates.keys().next().value!);
    t = { ...compile(new Array<number>(slots.length).fill(0), slots, renderOrder, suffixes, shape), id: ++templateIds };
    singleTemplates.set(sig, t);
  }
  return t;
}

/** Render the solver's answer as the response body. */
export function renderCandidates(res: CandidatesResult, req: CandidatesRequest, shape: Shape, order: CustomOrder = NO_CUSTOM_ORDER): string {
  const { slots, renderOrder } = res;
  const suffixes = req.groups.map((g) => g.suffix);
  const n = slots.length;
  const templates = new Map<number | string, Template>();
  const first = new Array<number>(n);
  const numeric = n <= 12; // n^n stays a safe integer
  // one array of every piece and a single join: one copy into the body (joining
  // parts and concatenating the joins would copy everything twice)
  const out = new Array<string>(2 * (res.candidates.length + res.summaries.length) + 2);
  let idx = 0;
  out[idx++] = '{"allocation_requests":[';
  const single = res.candidates.length ? singleTemplate(res, suffixes, shape) : undefined;
  let first0 = true;
  for (const c of res.candidates) {
    if (first0) first0 = false;
    else out[idx++] = ',';
    let key: number | string = numeric ? 0 : '';
    for (let i = 0; i < n; i++) {
      let f = i;
      for (let j = 0; j < i; j++) {
        if (c[j] === c[i]) {
          f = first[j]!;
          break;
        }
      }
      first[i] = f;
      if (numeric) key = (key as number) * n + f;
      else key += `${f},`;
    }
    if (key === 0 || key === '0,'.repeat(n)) {
      // every slot on one provider: its cached text, if it was made for this template
      const p = c[0]!;
      if (p.areqTemplate !== single!.id) {
        p.areqText = fill(single!, c);
        flatten(p.areqText);
        p.areqTemplate = single!.id;
      }
      out[idx++] = p.areqText!;
      continue;
    }
    let t = templates.get(key);
    if (!t) templates.set(key, (t = compile(first, slots, renderOrder, suffixes, shape)));
    out[idx++] = fill(t, c);
  }
  out[idx++] = '],"provider_summaries":{';
  const key = shapeKey(shape, res.requestedResources);
  for (let i = 0; i < res.summaries.length; i++) {
    if (i) out[idx++] = ',';
    out[idx++] = summaryFragment(res.summaries[i]!, shape, res.requestedResources, order, key);
  }
  out[idx++] = '}}';
  out.length = idx;
  return out.join('');
}

function fill(t: Template, c: ProviderView[]): string {
  const { pieces, refs } = t;
  let s = pieces[0]!;
  for (let k = 0; k < refs.length; k++) s += c[refs[k]!]!.json + pieces[k + 1]!;
  return s;
}
