/**
 * GET /allocation_candidates (placement/handlers/allocation_candidate.py).
 * Version, accept, policy, query schema -> request parsing and the solver
 * (functions/core/placement/candidates/, pure) over the warm provider snapshot -> body.
 * Nothing here scans providers: the solver walks the snapshot's indexes. Candidates
 * are advisory: a claim re-checks capacity atomically (docs/placement.md).
 */
import { httpLambda } from '../http/apigw.js';
import { jsonSchemaOf } from '../../schemas/json-schema.js';
import { GET_SCHEMAS } from '../../schemas/placement/allocation-candidates.js';
import { namesOf, parseCandidatesQuery } from '../core/placement/candidates/request.js';
import { solveCandidates } from '../core/placement/candidates/solver.js';
import { renderCandidates, shapeFor } from '../core/placement/candidates/render.js';
import { AnswerCache } from '../core/placement/candidates/answer-cache.js';
import type { Forest } from '../core/placement/forest.js';
import { isStandardResourceClass, isStandardTrait } from '../core/placement/standard.js';
import { customOrder, missingResourceClasses, missingTraits } from '../store/placement/catalog.js';
import { prewarm, snapshot } from '../store/placement/snapshot.js';
import { log } from '../observability/log.js';
import { count, millis, metrics, MetricUnit } from '../observability/powertools.js';

import { checkAccept, forVersion, requireVersion, validateQuery, cacheHeaders } from './framework/guards.js';
import { placementApp } from './framework/app.js';
import type { FamilyRoutes, PlacementRequest } from './framework/request.js';
import { refuseHopeless } from './framework/too-large.js';

/** rendered answers of this process (64 MB): see core/placement/candidates/answer-cache.ts */
const answers = new AnswerCache(64 * 1024 * 1024);

/**
 * Names neither standard nor known to exist. A custom class or trait some provider in
 * the snapshot uses exists (it cannot be deleted while in use), so only names the
 * snapshot has never seen cost a catalog read.
 */
async function unknownNames(forest: Forest, rcs: string[], traits: string[]) {
  const rcLookups = rcs.filter((n) => !isStandardResourceClass(n) && !forest.byResourceClass.has(n));
  const traitLookups = traits.filter((n) => !isStandardTrait(n) && !forest.byTrait.has(n));
  const [mrc, mt] = await Promise.all([
    rcLookups.length ? missingResourceClasses(rcLookups) : [],
    traitLookups.length ? missingTraits(traitLookups) : [],
  ]);
  return { missingResourceClasses: new Set(mrc), missingTraits: new Set(mt) };
}

/** no candidate renders smaller than this (an allocation request and one provider summary) */
const MIN_CANDIDATE_BYTES = 200;

async function list(r: PlacementRequest) {
  requireVersion(r, '1.10');
  checkAccept(r);
  r.authorize('placement:allocation_candidates:list');
  const v = r.version;
  const schema = forVersion(r, GET_SCHEMAS);
  validateQuery(r, jsonSchemaOf(schema));
  const req = parseCandidatesQuery(r.query.pairs, v);
  const forest = await snapshot().fresh();
  const names = namesOf(req);
  const missing = await unknownNames(forest, names.resourceClasses, names.traits);
  const headers = cacheHeaders(r, { status: 200, headers: { 'content-type': 'application/json' } }, undefined).headers;
  const started = performance.now();
  count('CandidateRequests');
  const cacheable = !r.config.randomizeAllocationCandidates && !missing.missingResourceClasses.size && !missing.missingTraits.size;
  const key = AnswerCache.key(forest, String(v), r.config.maxAllocationCandidates, r.http.rawQuery);
  const hit = cacheable ? answers.get(key) : undefined;
  if (hit !== undefined) {
    count('CandidateCacheHits');
    millis('CandidateLatency', performance.now() - started);
    return { status: 200, headers, body: hit };
  }
  // custom classes and traits in creation order (cached: a Query only for names new
  // here); read before the solve, which must see one state of the forest (no await)
  const order = await customOrder({ classes: forest.byResourceClass.keys(), traits: forest.byTrait.keys() });
  const t0 = performance.now();
  const res = solveCandidates(forest, req, {
    ...missing,
    maxCandidates: r.config.maxAllocationCandidates,
    randomize: r.config.randomizeAllocationCandidates,
    order,
  });
  const t1 = performance.now();
  refuseHopeless(r, res.candidates.length, MIN_CANDIDATE_BYTES);
  const body = renderCandidates(res, req, shapeFor(v), order);
  log.debug('allocation candidates', {
    request_id: r.http.requestId,
    candidates: res.candidates.length,
    summaries: res.summaries.length,
    anchors: res.stats.anchorsVisited,
    nodes: res.stats.nodes,
    capped: res.stats.capped,
    solve_ms: Math.round((t1 - t0) * 10) / 10,
    render_ms: Math.round((performance.now() - t1) * 10) / 10,
    bytes: body.length,
  });
  if (cacheable) answers.put(key, body);
  millis('CandidateLatency', performance.now() - started);
  metrics.addMetric('CandidatesReturned', MetricUnit.Count, res.candidates.length);
  return { status: 200, headers, body };
}

export const routes: FamilyRoutes = {
  '/allocation_candidates': { GET: list },
};
export const handler = httpLambda(placementApp(routes), 'placement-allocation-candidates');

// the forest loads while the Lambda initialises (cdk/ sets SNAPSHOT_PREWARM on this function)
await prewarm();
