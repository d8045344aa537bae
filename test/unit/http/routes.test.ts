/**
 * Each API's URL map (functions/{placement,baremetal}/routes.ts: what cdk/ deploys as API
 * Gateway routes and the dispatcher answers 404/405 from) against the handler table of
 * every resource-family module (its `routes`): every path and method the map gives a
 * family has a handler in that family's table, and every handler is reachable through
 * the map. The framework finds out only at run time, as a 500 ("is not served by this
 * function") or a handler nobody can call. And the families whose routes answer from the
 * provider forest (what cdk/ gives memory and SNAPSHOT_PREWARM) are the family modules
 * that load it while they initialise (a top-level `await prewarm()`), as are the forest
 * steps: one without the other is a cold start that waits, or a flag that does nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RouteSpec } from '../../../functions/http/router.js';
import type { LambdaFamily } from '../../../functions/http/family.js';
import { PLACEMENT_FOREST_FAMILIES, PLACEMENT_ROUTES } from '../../../functions/placement/routes.js';
import { PLACEMENT_FAMILY_MODULES } from '../../../functions/placement/index.js';
import { BAREMETAL_ROUTES } from '../../../functions/baremetal/routes.js';
import { BAREMETAL_FAMILY_MODULES } from '../../../functions/baremetal/index.js';
import { STEPS, stepEntry } from '../../../functions/conductor/machines.js';
import { FOREST_FAMILIES } from '../../../cdk/lib/placement-api.js';
import { FOREST_STEPS } from '../../../cdk/lib/baremetal.js';

/** Every disagreement between a route map and the families' handler tables, as sentences (none: they pair). */
function unpaired(map: readonly RouteSpec[], families: Record<string, Pick<LambdaFamily, 'routes'>>): string[] {
  const out: string[] = [];
  const byPath = new Map<string, RouteSpec>();
  for (const r of map) {
    if (byPath.has(r.path)) out.push(`${r.path} is in routes.ts twice`);
    byPath.set(r.path, r);
  }
  for (const r of map) {
    const family = families[r.family];
    if (!family) {
      out.push(`${r.path}: routes.ts names family ${r.family}, which has no module`);
      continue;
    }
    const table = family.routes[r.path] as Record<string, unknown> | undefined;
    if (!table) {
      out.push(`${r.path}: in routes.ts (family ${r.family}) but not in the family's table`);
      continue;
    }
    for (const m of r.methods)
      if (typeof table[m] !== 'function') out.push(`${m} ${r.path}: in routes.ts but family ${r.family} has no handler for it`);
  }
  for (const [name, family] of Object.entries(families)) {
    for (const [path, table] of Object.entries(family.routes)) {
      const r = byPath.get(path);
      if (!r) {
        out.push(`${path}: in the table of family ${name} but not in routes.ts`);
        continue;
      }
      if (r.family !== name) {
        out.push(`${path}: in the table of family ${name} but routes.ts sends it to ${r.family}`);
        continue;
      }
      for (const m of Object.keys(table as object))
        if (!r.methods.includes(m)) out.push(`${m} ${path}: family ${name} has a handler routes.ts does not list`);
    }
  }
  for (const name of Object.keys(families)) if (!map.some((r) => r.family === name)) out.push(`family ${name} serves no path of routes.ts`);
  return out;
}

describe('routes.ts and the families’ handler tables', () => {
  it('pair for Placement', () => {
    expect(unpaired(PLACEMENT_ROUTES, PLACEMENT_FAMILY_MODULES)).toEqual([]);
  });

  it('pair for bare metal', () => {
    expect(unpaired(BAREMETAL_ROUTES, BAREMETAL_FAMILY_MODULES)).toEqual([]);
  });

  it('fail on a path or method present on one side only', () => {
    const h = async () => ({ status: 204, headers: {} });
    const map: RouteSpec[] = [
      { path: '/a', methods: ['GET', 'PUT'], family: 'x' },
      { path: '/b', methods: ['GET'], family: 'x' },
      { path: '/c', methods: ['GET'], family: 'nobody' },
    ];
    const families = {
      x: { routes: { '/a': { GET: h, DELETE: h }, '/d': { GET: h } } },
      y: { routes: { '/b': { GET: h } } },
    };
    expect(unpaired(map, families)).toEqual([
      'PUT /a: in routes.ts but family x has no handler for it',
      "/b: in routes.ts (family x) but not in the family's table",
      '/c: routes.ts names family nobody, which has no module',
      'DELETE /a: family x has a handler routes.ts does not list',
      '/d: in the table of family x but not in routes.ts',
      '/b: in the table of family y but routes.ts sends it to x',
      'family y serves no path of routes.ts',
    ]);
  });
});

describe('the forest families', () => {
  // a step loads it through the scheduler strategy (prewarmScheduler: the forest only with the placement scheduler)
  const prewarms = (file: string) => /^await prewarm(Scheduler)?\(\);?$/m.test(readFileSync(join(process.cwd(), file), 'utf8'));

  it('are the Placement family modules that load the forest while they initialise, and what cdk/ deploys as such', () => {
    const loading = Object.keys(PLACEMENT_FAMILY_MODULES).filter((f) => prewarms(`functions/placement/${f}.ts`));
    expect([...PLACEMENT_FOREST_FAMILIES].sort()).toEqual(loading.sort());
    expect(PLACEMENT_FOREST_FAMILIES).toEqual(expect.arrayContaining(['resource-providers', 'traits', 'allocation-candidates']));
    expect(FOREST_FAMILIES).toEqual(PLACEMENT_FOREST_FAMILIES);
  });

  it('include the steps that load it, with the placement scheduler', () => {
    expect([...FOREST_STEPS].sort()).toEqual(STEPS.filter((s) => prewarms(stepEntry(s))).sort());
  });
});
