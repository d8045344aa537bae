// @ts-check
/**
 * Reading the two public APIs, Placement and bare metal, and nothing else. Where they
 * are and how the token travels come from config.json beside the page
 * (local/dashboard.ts serves one locally, the S3 deployment in cdk/lib/dashboard.ts
 * another).
 */

/**
 * @typedef {object} Config
 * @property {string} placement  Placement's base URL
 * @property {string} baremetal  the bare-metal API's base URL
 * @property {string} token  the token used when the page's box is empty
 * @property {'token' | 'bearer'} [auth]  X-Auth-Token, or Authorization: Bearer (a deployment with the JWT authorizer)
 * @property {string} [events]  the change feed's latest events (local runs: local/dashboard.ts reads the events file)
 */

/** the microversion of every Placement read that needs no other */
export const DETAIL_VERSION = '1.39';
/** requests in flight at once when reading many small things */
export const PARALLEL = 6;

/** @type {Config} */
let config = { placement: '/placement', baremetal: '/baremetal', token: 'admin' };
/** @type {() => string} */
let tokenOf = () => '';

/** Read config.json (defaults without one); the token to start with. */
export async function loadConfig() {
  try {
    config = { ...config, ...(await (await fetch('config.json')).json()) };
  } catch {
    /* defaults */
  }
  return config.token || '';
}

/**
 * Where the token comes from (the page's box); config.json's when it is empty.
 * @param {() => string} fn
 */
export function useToken(fn) {
  tokenOf = fn;
}

export class ApiError extends Error {
  /**
   * @param {string} path
   * @param {number} status
   * @param {string} detail  the API's own words
   */
  constructor(path, status, detail) {
    super(`${path}: HTTP ${status}${detail ? ` — ${detail}` : ''}`);
    this.status = status;
    this.detail = detail;
  }
  /** the API refused an answer too large to send (Placement's 400 says "does not fit"; a gateway may say 413/502/504) */
  get tooLarge() {
    return (this.status === 400 && /does not fit/.test(this.detail)) || [413, 502, 504].includes(this.status);
  }
}

/**
 * The human part of an error body: Placement's errors[0].detail, Ironic's faultstring, a gateway's message.
 * @param {any} body
 * @returns {string}
 */
function errorDetail(body) {
  if (Array.isArray(body?.errors) && body.errors[0]?.detail) return String(body.errors[0].detail);
  if (typeof body?.error_message === 'string') {
    try {
      return String(JSON.parse(body.error_message).faultstring ?? body.error_message);
    } catch {
      return body.error_message;
    }
  }
  return body?.message ? String(body.message) : '';
}

/** the table's layout as Placement's last answer named it (x-berth-layout: `2`, `1>2 migrating 45%`, …) */
let lastLayout = '';

/**
 * The table's layout upgrade as the last answer reported it, in words; '' when the table
 * holds its release's layout (nothing to say).
 * @returns {string}
 */
export function layoutUpgrade() {
  const m = /^(\d+)>(\S+) (\S+)(?: (\d+)%)?$/.exec(lastLayout);
  if (lastLayout === 'unrecorded') return 'The table’s item layout is not recorded yet (the maintenance function records it within a minute).';
  if (!m) return '';
  const [, from, to, phase, pct] = m;
  return `Table upgrade: item layout ${from} → ${to}, ${phase}${pct ? ` ${pct} %` : ''}${phase === 'migrating' ? ' (the APIs serve it meanwhile)' : ''}.`;
}

/**
 * GET base + path as JSON; an ApiError for anything but 2xx.
 * @param {string} base
 * @param {string} path
 * @param {Record<string, string>} headers
 * @returns {Promise<any>}
 */
async function get(base, path, headers) {
  const token = tokenOf() || config.token;
  /** @type {Record<string, string>} */
  const auth = config.auth === 'bearer' ? { authorization: `Bearer ${token}` } : { 'x-auth-token': token };
  const r = await fetch(`${base}${path}`, { headers: { accept: 'application/json', ...auth, ...headers } });
  const layout = r.headers.get('x-berth-layout');
  if (layout) lastLayout = layout;
  if (!r.ok) {
    let detail = '';
    try {
      detail = errorDetail(await r.json());
    } catch {
      /* no JSON body */
    }
    throw new ApiError(path, r.status, detail);
  }
  return r.json();
}

/**
 * A Placement read at a microversion.
 * @param {string} path
 * @param {string} [version]
 */
export const placement = (path, version = DETAIL_VERSION) => get(config.placement, path, { 'openstack-api-version': `placement ${version}` });

/**
 * The latest changes of the change feed after change id `after` (newest last), or null
 * where the page has no feed to read (in AWS the events go to EventBridge).
 * @param {string} after
 * @returns {Promise<{ events: Array<{ 'detail-type': string, source: string, detail: Record<string, any> }> } | null>}
 */
export async function latestChanges(after) {
  if (!config.events) return null;
  const r = await fetch(`${config.events}?limit=50${after ? `&after=${encodeURIComponent(after)}` : ''}`);
  if (!r.ok) throw new ApiError(config.events, r.status, '');
  return r.json();
}

/**
 * A bare-metal read at the newest microversion.
 * @param {string} path
 */
export const baremetal = (path) => get(config.baremetal, path, { 'x-openstack-ironic-api-version': 'latest' });

/**
 * fn over every item, at most n at a time; results in item order.
 * @template T, R
 * @param {readonly T[]} items
 * @param {number} n
 * @param {(item: T, index: number) => Promise<R>} fn
 * @returns {Promise<R[]>}
 */
export async function pool(items, n, fn) {
  /** @type {R[]} */
  const out = new Array(items.length);
  let i = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (i < items.length) {
        const k = i++;
        out[k] = await fn(/** @type {T} */ (items[k]), k);
      }
    }),
  );
  return out;
}
