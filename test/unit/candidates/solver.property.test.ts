import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { solveCandidates } from '../../../functions/core/placement/candidates/solver.js';
import { bruteForce, canonical, checkCandidate, flatten } from './oracle.js';
import { buildForest, forestArb, requestArb } from './forests.js';

const RUNS = Number(process.env.CANDIDATES_PROPERTY_RUNS ?? 300);

const TIMEOUT = 120_000;

const scenario = forestArb.chain((specs) => requestArb(specs).map((req) => ({ specs, req })));

describe('solver vs. brute force (Placement-structured enumeration)', () => {
  it(
    'without a limit returns exactly the brute-force set, each once, each valid',
    () => {
      fc.assert(
        fc.property(scenario, ({ specs, req }) => {
          const forest = buildForest(specs);
          const got = flatten(solveCandidates(forest, req), req);
          const keys = got.map(canonical);
          expect(new Set(keys).size).toBe(keys.length);
          for (const f of got) expect(checkCandidate(forest, req, f)).toEqual([]);
          const want = bruteForce(forest, req).map(canonical).sort();
          expect(keys.slice().sort()).toEqual(want);
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT,
  );

  it(
    'with a limit returns min(limit, all) distinct members of the full set',
    () => {
      fc.assert(
        fc.property(scenario, fc.integer({ min: 1, max: 4 }), ({ specs, req }, limit) => {
          const forest = buildForest(specs);
          const all = new Set(bruteForce(forest, req).map(canonical));
          const got = flatten(solveCandidates(forest, { ...req, limit }), req).map(canonical);
          expect(got.length).toBe(Math.min(limit, all.size));
          expect(new Set(got).size).toBe(got.length);
          for (const k of got) expect(all.has(k)).toBe(true);
        }),
        { numRuns: Math.ceil(RUNS / 2) },
      );
    },
    TIMEOUT,
  );

  it(
    'the global cap bounds the answer like a limit',
    () => {
      fc.assert(
        fc.property(scenario, fc.integer({ min: 1, max: 3 }), ({ specs, req }, cap) => {
          const forest = buildForest(specs);
          const all = bruteForce(forest, req).length;
          const res = solveCandidates(forest, req, { maxCandidates: cap });
          expect(res.candidates.length).toBe(Math.min(cap, all));
        }),
        { numRuns: Math.ceil(RUNS / 4) },
      );
    },
    TIMEOUT,
  );

  it(
    'summaries cover exactly the trees of the providers that give resources',
    () => {
      fc.assert(
        fc.property(scenario, ({ specs, req }) => {
          const forest = buildForest(specs);
          const res = solveCandidates(forest, req);
          const flat = flatten(res, req);
          const used = new Set(flat.flatMap((f) => Object.keys(f.allocations)));
          const summarised = new Set(res.summaries.map((p) => p.uuid));
          expect(summarised.size).toBe(res.summaries.length);
          if (!req.nestedAware && forest.hasTrees()) {
            expect([...summarised].sort()).toEqual([...used].sort());
          } else {
            const roots = new Set([...used].map((u) => forest.get(u)!.root));
            const want = [...forest.providers.values()].filter((p) => roots.has(p.root)).map((p) => p.uuid);
            expect([...summarised].sort()).toEqual(want.sort());
          }
        }),
        { numRuns: Math.ceil(RUNS / 2) },
      );
    },
    TIMEOUT,
  );
});
