/**
 * Process counters for tests and benchmarks (docs/architecture.md, "Layers"): production
 * code reports what it did with `tally(name, n)`, and nothing is kept unless a test or a
 * benchmark listens (`listen()`), so a Lambda container carries no counter state and no
 * module exports a mutable record. What operators see is CloudWatch's (powertools.ts
 * `count`), not this.
 */

/** every counter, by its group: the store's transactions, changes larger than one, claims, bare-metal reservations */
export const COUNTERS = [
  'tx.transactions',
  'tx.attempts',
  'tx.unknown',
  'tx.resolvedCommitted',
  'tx.resolvedNotCommitted',
  'tx.fenceAttempts',
  'tx.announcedAgain',
  'intent.started',
  'intent.committed',
  'intent.aborted',
  'intent.rolledForward',
  'intent.released',
  'intent.helped',
  'claim.claims',
  'claim.attempts',
  'claim.conflicts',
  'claim.conditionFailures',
  'reserve.find',
  'reserve.fromForest',
  'reserve.lookMs',
  'reserve.reserveCalls',
  'reserve.reserveMs',
  'reserve.attempts',
  'reserve.won',
  'reserve.gone',
  'reserve.held',
  'reserve.busy',
  'reserve.taken',
  'reserve.refreshes',
  'reserve.retries',
  'reserve.failed',
] as const;
export type Counter = (typeof COUNTERS)[number];

type Listener = (name: Counter, n: number) => void;

const listeners = new Set<Listener>();

/** Report `n` more of `name` (nothing happens unless someone listens). */
export function tally(name: Counter, n = 1): void {
  if (listeners.size === 0) return;
  for (const l of listeners) l(name, n);
}

/** What one listener counted since it began. */
export interface Tally {
  get(name: Counter): number;
  /** every counter of `group` (e.g. 'reserve'), by its name within the group, 0 if none was counted */
  group(group: string): Record<string, number>;
  stop(): void;
}

/** Count every tally from now on, until stop(). */
export function listen(): Tally {
  const counts = new Map<Counter, number>();
  const l: Listener = (name, n) => counts.set(name, (counts.get(name) ?? 0) + n);
  listeners.add(l);
  return {
    get: (name) => counts.get(name) ?? 0,
    group: (g) => Object.fromEntries(COUNTERS.filter((k) => k.startsWith(`${g}.`)).map((k) => [k.slice(g.length + 1), counts.get(k) ?? 0])),
    stop: () => {
      listeners.delete(l);
    },
  };
}
