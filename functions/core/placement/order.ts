/**
 * Orders of Placement's answers that are not about names alone (names:
 * standard.ts). Upstream's lists come from SQL without ORDER BY, so its order is the
 * access path's: stable for a given history, and a client shows it as it comes.
 *
 * Allocations against one provider (GET /resource_providers/{uuid}/allocations): the
 * rows come through the index (provider, class id, used), i.e. by class id, then by
 * amount, then by insertion (a consumer's rows are re-inserted by every write of its
 * allocations, in the order of that write's body). The answer is keyed by consumer in
 * the order its first row comes, each consumer's classes in class order.
 */
import { compareResourceClasses, type CustomOrder, NO_CUSTOM_ORDER } from './standard.js';

export interface OrderedRow {
  consumer: string;
  resources: Record<string, number>;
  /** when the consumer's allocations were last written (a number that grows with time; rows written by one request: body order) */
  writeSeq: number;
}

/** The rows in upstream's order, each row's resources in class order (new objects). */
export function providerAllocationOrder<T extends OrderedRow>(rows: readonly T[], order: CustomOrder = NO_CUSTOM_ORDER): T[] {
  const cmp = compareResourceClasses(order);
  const cells: Array<{ row: number; rc: string; used: number }> = [];
  rows.forEach((r, row) => {
    for (const [rc, used] of Object.entries(r.resources)) cells.push({ row, rc, used });
  });
  cells.sort((a, b) => cmp(a.rc, b.rc) || a.used - b.used || rows[a.row]!.writeSeq - rows[b.row]!.writeSeq || a.row - b.row);
  const seen = new Set<number>();
  const out: T[] = [];
  for (const c of cells) {
    if (seen.has(c.row)) continue;
    seen.add(c.row);
    const r = rows[c.row]!;
    const resources: Record<string, number> = {};
    for (const rc of Object.keys(r.resources).sort(cmp)) resources[rc] = r.resources[rc]!;
    out.push({ ...r, resources });
  }
  return out;
}

/**
 * A row's write sequence: the write's time (ms) and the consumer's position in the
 * request body, so that rows of one request keep the body's order.
 */
export function writeSeq(nowIso: string, positionInRequest: number): number {
  const t = Date.parse(nowIso);
  return (Number.isNaN(t) ? 0 : t) * 1000 + positionInRequest;
}

/**
 * provider_summaries (GET /allocation_candidates): upstream builds them group by
 * group, in request order, each group adding the trees it found — in root id order,
 * each tree's providers in id order — and keeps those of the trees the answer uses.
 * So: trees by the first group (request order) that takes something from them, then
 * by their root's creation; a tree's providers as created.
 */
export interface SummaryOrderKey {
  firstGroup: number;
  rootSeq: number;
  seq: number;
}

export function compareSummaryProviders(a: SummaryOrderKey, b: SummaryOrderKey): number {
  return a.firstGroup - b.firstGroup || a.rootSeq - b.rootSeq || a.seq - b.seq;
}
