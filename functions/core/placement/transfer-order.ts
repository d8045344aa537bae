/**
 * The orders an import pass keeps (transfer.ts): creation sequences that follow the
 * source's order while keeping the ones already written, and one order of every
 * aggregate that agrees with each provider's list. Pure.
 */

/**
 * Sequences for `order` that keep it (strictly increasing), keeping every existing
 * sequence that already does: a name the source lists after another gets a larger
 * number. New names (and the few an out-of-order existing one forces to move) get the
 * previous one's + 1; the first of all `base`.
 */
export function monotoneSeqs(order: readonly string[], existing: ReadonlyMap<string, number>, base: number): Map<string, number> {
  const out = new Map<string, number>();
  let prev: number | undefined;
  for (const k of order) {
    if (out.has(k)) continue;
    const s = existing.get(k);
    const v = s !== undefined && (prev === undefined || s > prev) ? s : prev === undefined ? base : prev + 1;
    out.set(k, v);
    prev = v;
  }
  return out;
}

/**
 * One order of every aggregate that keeps each provider's list (upstream lists a
 * provider's aggregates by the aggregate's id: its first sighting, so the lists agree
 * with one global order): a topological order of "comes before in some list", ties
 * (and, should lists disagree, a cycle) broken by the existing sequence, then by first
 * appearance.
 */
export function aggregateOrder(lists: Iterable<readonly string[]>, existing: ReadonlyMap<string, number>): string[] {
  const first = new Map<string, number>();
  const after = new Map<string, Set<string>>();
  const indegree = new Map<string, number>();
  for (const l of lists) {
    for (let i = 0; i < l.length; i++) {
      const a = l[i]!;
      if (!first.has(a)) {
        first.set(a, first.size);
        indegree.set(a, 0);
        after.set(a, new Set());
      }
      if (i > 0) {
        const b = l[i - 1]!;
        if (b !== a && !after.get(b)!.has(a)) {
          after.get(b)!.add(a);
          indegree.set(a, indegree.get(a)! + 1);
        }
      }
    }
  }
  const rank = (a: string): [number, number] => [existing.get(a) ?? Number.POSITIVE_INFINITY, first.get(a)!];
  const less = (a: string, b: string) => {
    const [sa, fa] = rank(a);
    const [sb, fb] = rank(b);
    return sa < sb || (sa === sb && fa < fb);
  };
  const heap = new MinHeap<string>(less);
  for (const [a, d] of indegree) if (d === 0) heap.push(a);
  const out: string[] = [];
  const done = new Set<string>();
  while (out.length < first.size) {
    let a = heap.pop();
    if (a === undefined) {
      // a cycle (lists that disagree): take the best-ranked aggregate left
      a = [...first.keys()].filter((x) => !done.has(x)).reduce((x, y) => (less(y, x) ? y : x));
    }
    if (done.has(a)) continue;
    done.add(a);
    out.push(a);
    for (const b of after.get(a)!) {
      const d = indegree.get(b)! - 1;
      indegree.set(b, d);
      if (d === 0 && !done.has(b)) heap.push(b);
    }
  }
  return out;
}

class MinHeap<T> {
  private xs: T[] = [];
  constructor(private readonly less: (a: T, b: T) => boolean) {}
  push(x: T): void {
    const xs = this.xs;
    xs.push(x);
    for (let i = xs.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!this.less(xs[i]!, xs[p]!)) break;
      [xs[i], xs[p]] = [xs[p]!, xs[i]!];
      i = p;
    }
  }
  pop(): T | undefined {
    const xs = this.xs;
    if (!xs.length) return undefined;
    const top = xs[0];
    const last = xs.pop()!;
    if (xs.length) {
      xs[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < xs.length && this.less(xs[l]!, xs[m]!)) m = l;
        if (r < xs.length && this.less(xs[r]!, xs[m]!)) m = r;
        if (m === i) break;
        [xs[i], xs[m]] = [xs[m]!, xs[i]!];
        i = m;
      }
    }
    return top;
  }
}
