/**
 * The layout-1 fixture (test/fixtures/layout-v1/: a table written by release aea5993 and
 * what that release answered to every read) and the helpers the upgrade tests share:
 * load it into a table, ask this release the same reads, compare.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Answer } from '../../fixtures/layout-v1/probes.js';

const DIR = join(__dirname, '../../fixtures/layout-v1');

export function fixtureAnswers(): Answer[] {
  return JSON.parse(readFileSync(join(DIR, 'answers.json'), 'utf8')).answers as Answer[];
}

/** Write the fixture's items into the (empty) table the store talks to now, as `berth import` does. */
export async function importFixture(): Promise<number> {
  const doc = JSON.parse(readFileSync(join(DIR, 'dump.json'), 'utf8'));
  const { fromDumpItem, importItems } = await import('../../../functions/store/placement/dump.js');
  const r = await importItems(doc.items.map(fromDumpItem));
  return r.items;
}

export interface Urls {
  placement: string;
  baremetal: string;
}

/** what this release answers to a recorded read (its base URL replaced as the recording's is) */
export async function ask(urls: Urls, a: Pick<Answer, 'api' | 'path' | 'version'>): Promise<{ status: number; body: string; headers: Headers }> {
  const base = a.api === 'placement' ? urls.placement : urls.baremetal;
  const headers: Record<string, string> =
    a.api === 'placement'
      ? { 'x-auth-token': 'admin', 'openstack-api-version': `placement ${a.version}`, accept: 'application/json' }
      : { 'x-openstack-ironic-api-version': a.version, 'x-roles': 'admin', 'openstack-system-scope': 'all', accept: 'application/json' };
  const r = await fetch(base + a.path, { headers });
  return { status: r.status, body: (await r.text()).split(base).join('http://BERTH'), headers: r.headers };
}

/** A Placement request as the admin, at `version` (the body as JSON). */
export function placementCall(base: string, method: string, path: string, body?: unknown, version = '1.39'): Promise<Response> {
  return fetch(base + path, {
    method,
    headers: {
      'x-auth-token': 'admin',
      'openstack-api-version': `placement ${version}`,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/**
 * An answer with the generations of `touched` providers taken out (writes during a test
 * move them; everything else must stay as recorded), and error bodies' request ids.
 */
export function masked(body: string, path: string, touched: ReadonlySet<string>): unknown {
  if (!body) return body;
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return body;
  }
  const aboutTouched = [...touched].some((u) => path.includes(u));
  const walk = (v: unknown, top: boolean): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, false));
    if (!v || typeof v !== 'object') return v;
    const o = { ...(v as Record<string, unknown>) };
    if (typeof o.uuid === 'string' && touched.has(o.uuid)) delete o.generation;
    // a consumer's allocations, keyed by provider: {"<provider>": {resources, generation}}
    for (const [k, x] of Object.entries(o)) if (touched.has(k) && x && typeof x === 'object') o[k] = { ...(x as object), generation: undefined };
    if (top && aboutTouched) delete o.resource_provider_generation;
    // every answer has its own request id
    delete o.request_id;
    for (const [k, x] of Object.entries(o)) o[k] = walk(x, false);
    return o;
  };
  return walk(doc, true);
}

/** every recorded read whose answer differs now: [path, recorded, now] */
export async function differences(urls: Urls, answers: Answer[], touched: ReadonlySet<string> = new Set()): Promise<string[]> {
  const out: string[] = [];
  for (const a of answers) {
    // (through the fault injector a read may fail: asked again, as a client would)
    let now = await ask(urls, a);
    for (let i = 0; i < 5 && now.status >= 500 && a.status < 500; i++) now = await ask(urls, a);
    const same = now.status === a.status && JSON.stringify(masked(now.body, a.path, touched)) === JSON.stringify(masked(a.body, a.path, touched));
    if (!same)
      out.push(`${a.api} ${a.path} (${a.version}): recorded ${a.status} ${a.body.slice(0, 300)}\n   now ${now.status} ${now.body.slice(0, 300)}`);
  }
  return out;
}
