/**
 * The allocation history (docs/consistency.md, "The allocation history"): every consumer's
 * allocations over time as intervals — what it held (resources per provider, project,
 * user, consumer type, generation) from the change that gave it that, to the change that
 * replaced it. Pure: what a change means for the intervals, and the questions asked of
 * them (what did a consumer hold at an instant, how many resource-hours did a project use).
 *
 * Each change of a consumer closes the interval its before-state began (whose id the
 * change knows: `prev`, the consumer item's `last`) and opens one for its after-state.
 * Opening and closing are separate writes of the same interval: the closer knows the
 * whole interval (its before-state is the opener's after-state), so it writes it whole
 * with its end; the opener writes it only where it is absent. Both commute and repeat
 * harmlessly: the history comes out the same whatever order and however many times the
 * stream processor applies changes.
 */
import type { AllocationMap } from '../placement/consumers.js';
import { changeTime, type Change, type ConsumerView } from './change.js';

export interface Interval {
  consumer: string;
  /** the change that began it (its id) and when (ms) */
  id: string;
  from: number;
  /** the change that ended it and when; absent while it lasts */
  by?: string;
  to?: number;
  project: string;
  user: string;
  type: string | null;
  generation: number;
  allocations: AllocationMap;
}

/** one write of an interval: whole (a close, with its end) or only where absent (an open) */
export interface IntervalWrite {
  interval: Interval;
  /** true: write it only if it is not there yet (an open must not undo a close) */
  ifAbsent: boolean;
}

function interval(consumer: string, id: string, v: ConsumerView): Interval {
  return {
    consumer,
    id,
    from: changeTime(id),
    project: v.project,
    user: v.user,
    type: v.type,
    generation: v.generation,
    allocations: v.allocations,
  };
}

/**
 * What `c` writes to the history. A consumer whose before-state has no known change
 * (`prev` null: its item predates the history) has nothing to close here: `unknownPrev`
 * lists it, and the caller closes whatever interval of it is open.
 */
export function historyWrites(c: Change): { writes: IntervalWrite[]; unknownPrev: Array<{ consumer: string; before: ConsumerView }> } {
  const writes: IntervalWrite[] = [];
  const unknownPrev: Array<{ consumer: string; before: ConsumerView }> = [];
  for (const f of c.consumers ?? []) {
    if (f.before && hasAllocations(f.before)) {
      if (f.prev) writes.push({ interval: { ...interval(f.uuid, f.prev, f.before), by: c.id, to: c.at }, ifAbsent: false });
      else unknownPrev.push({ consumer: f.uuid, before: f.before });
    }
    if (f.after && hasAllocations(f.after)) writes.push({ interval: interval(f.uuid, c.id, f.after), ifAbsent: true });
  }
  return { writes, unknownPrev };
}

const hasAllocations = (v: ConsumerView) => Object.keys(v.allocations).length > 0;

/** Is `i` known as of the history's watermark (`through`: every change up to it applied)? Its end, if any, too. */
export function asOf(i: Interval, through: string | undefined): Interval | undefined {
  if (through === undefined || i.id > through) return undefined;
  if (i.by !== undefined && i.by > through) {
    const { by: _b, to: _t, ...open } = i;
    return open;
  }
  return i;
}

/** Did `i` cover instant `t` (ms)? [from, to) */
export function covers(i: Interval, t: number): boolean {
  return i.from <= t && (i.to === undefined || t < i.to);
}

/** Does `i` overlap [t0, t1)? */
export function overlaps(i: Interval, t0: number, t1: number): boolean {
  return i.from < t1 && (i.to === undefined || i.to > t0);
}

/** Every consumer's allocations at instant `t` (ms), from its intervals. */
export function allocationsAt(intervals: Iterable<Interval>, t: number): Map<string, Interval> {
  const out = new Map<string, Interval>();
  for (const i of intervals) {
    if (!covers(i, t)) continue;
    const cur = out.get(i.consumer);
    if (!cur || i.id > cur.id) out.set(i.consumer, i);
  }
  return out;
}

/** resource-hours of `intervals` over [t0, t1): project -> resource class -> hours */
export function resourceHours(intervals: Iterable<Interval>, t0: number, t1: number): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const i of intervals) {
    const start = Math.max(i.from, t0);
    const end = Math.min(i.to ?? t1, t1);
    if (end <= start) continue;
    const hours = (end - start) / 3_600_000;
    let byClass = out.get(i.project);
    if (!byClass) out.set(i.project, (byClass = new Map()));
    for (const res of Object.values(i.allocations)) {
      for (const [rc, n] of Object.entries(res)) byClass.set(rc, (byClass.get(rc) ?? 0) + n * hours);
    }
  }
  return out;
}
