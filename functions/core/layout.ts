/**
 * The table's item layout: which one this release writes, which older one it migrates
 * online, and whether it may serve a table in a given state (docs/items.md, "Layout
 * versions and upgrades"). Pure: the state comes from the table's `META`/`layout` item
 * (store/layout/state.ts).
 *
 * Layouts so far:
 *   1  releases up to aea5993: a provider is one item (`RP`, state inline), usage items
 *      `USAGE#<project>` / `P#<shard>` and `U#<user>#<shard>`, custom classes and traits
 *      in one partition each (`RCS`, `TRAITS`), no tree or sharing-list items, change
 *      log `LOG#<minute>#<shard>`. Those releases did not record a layout.
 *   2  this release: a provider is two items (`RP`, `RPU`), `TREE` and `S#` items, usage
 *      `USAGE#<project>#<shard>` / `U#<user>`, catalogs over 8 partitions, change log
 *      `LOG#<shard>`.
 */

/** the sort key of the table's layout record under pk `META` (store/layout/state.ts) */
export const LAYOUT_META = 'layout';

/** the layout this release writes */
export const LAYOUT = 2;
/** the oldest layout this release migrates online (older ones it refuses) */
export const MIGRATES_FROM = 1;

/**
 * Where a table is in its life:
 *   waiting    holds an older layout; the release that writes it may still serve it
 *              (a deploy in progress), so this release does not touch it yet
 *   preparing  the migration began: the few items every request may need are converted
 *              (custom classes and traits); still not served
 *   migrating  served by this release while the rest converts in the background
 *   complete   holds `version` entirely
 */
export type LayoutPhase = 'waiting' | 'preparing' | 'migrating' | 'complete';
export const LAYOUT_PHASES: readonly LayoutPhase[] = ['waiting', 'preparing', 'migrating', 'complete'];

export interface LayoutState {
  /** the layout the table's items are in (while migrating: the older one) */
  version: number;
  phase: LayoutPhase;
  /** while not complete: the layout it is going to */
  target?: number;
}

export type Verdict =
  | { serve: true; migrating: boolean }
  | {
      serve: false;
      /** what an API answers instead (503: retry later; the message says when) */
      message: string;
      /** seconds a client should wait before asking again (absent: not until someone acts) */
      retryAfterS?: number;
      /** true when no waiting helps: another release must be deployed */
      permanent: boolean;
    };

/** Whether this release serves a table in state `s`, and if not, what to say. */
export function verdict(
  s: LayoutState,
  release: { layout: number; migratesFrom: number } = { layout: LAYOUT, migratesFrom: MIGRATES_FROM },
): Verdict {
  const target = s.phase === 'complete' ? s.version : (s.target ?? release.layout);
  if (s.version > release.layout) {
    return {
      serve: false,
      permanent: true,
      message: `This Berth table holds item layout ${s.version}, written by a newer Berth release; this release reads layouts ${release.migratesFrom} to ${release.layout}. Deploy that newer release again (nothing was changed).`,
    };
  }
  if (s.version < release.migratesFrom) {
    return {
      serve: false,
      permanent: true,
      message: `This Berth table holds item layout ${s.version}, older than this release can migrate (layout ${release.migratesFrom} or later). Upgrade through an earlier release first (nothing was changed).`,
    };
  }
  if (s.phase === 'complete' && s.version === release.layout) return { serve: true, migrating: false };
  if (s.phase === 'complete') {
    // an older layout, whole: the migration has not been asked for yet
    return waiting(s.version, release.layout);
  }
  if (target !== release.layout) {
    return {
      serve: false,
      permanent: true,
      message: `This Berth table is being migrated from item layout ${s.version} to ${target}, which this release does not write (it writes layout ${release.layout}). Deploy the release that started the migration.`,
    };
  }
  if (s.phase === 'waiting') return waiting(s.version, release.layout);
  if (s.phase === 'preparing') {
    return {
      serve: false,
      permanent: false,
      retryAfterS: 5,
      message: `This Berth table is being upgraded from item layout ${s.version} to ${release.layout}; requests are served again in a few seconds.`,
    };
  }
  return { serve: true, migrating: true };
}

function waiting(from: number, to: number): Verdict {
  return {
    serve: false,
    permanent: false,
    retryAfterS: 10,
    message: `This Berth table holds item layout ${from}; this release serves it once the upgrade to layout ${to} has begun, which happens when the deploy has finished (or at once with \`npx berth migrate\`). Until then the previous release serves it.`,
  };
}

/** the state a table with no layout record is in: empty (or written by this layout) vs. written by layout 1 */
export function unrecordedState(holdsLayout1Items: boolean): LayoutState {
  return holdsLayout1Items ? { version: 1, phase: 'waiting', target: LAYOUT } : { version: LAYOUT, phase: 'complete' };
}
