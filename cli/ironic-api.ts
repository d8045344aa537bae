/**
 * Reading an Ironic-compatible API (a running Ironic, or Berth's own bare-metal API) for
 * `berth import-ironic` and `verify-ironic`: the microversion both sides agree on, paged
 * lists (marker/limit, in the API's default order: creation), the VIFs of each node.
 */
import { MAX_MINOR, MIN_MINOR, type IronicObject } from '../functions/core/baremetal/ironic-import.js';

/** where Ironic's API is and how to authenticate to it (cli/openstack-session.ts gives both) */
export interface ServiceSession {
  /** the service's root URL (with or without /v1) */
  endpoint: string;
  /** headers every request carries (X-Auth-Token, if any) */
  headers: Record<string, string>;
  /** how the session authenticates, for messages */
  describe: string;
}

export interface IronicApi {
  /** the API's root URL (no /v1) */
  endpoint: string;
  /** the microversion every request is made at (1.<minor>) */
  minor: number;
  /** the newest the API serves */
  maxMinor: number;
  get(path: string): Promise<IronicObject>;
  /** every object of a list (`/v1/nodes/detail`, `/v1/allocations`), page by page */
  list(path: string, key: string, onPage?: (n: number) => void): Promise<IronicObject[]>;
  /** the VIFs attached to a node (GET /v1/nodes/{node}/vifs) */
  vifs(node: string): Promise<string[]>;
}

/** objects per page (Ironic's own cap, [api] max_limit, is 1000 by default) */
export const PAGE_SIZE = 500;

const minorOf = (v: unknown) => (typeof v === 'string' && /^1\.\d+$/.test(v) ? Number(v.slice(2)) : Number.NaN);

/**
 * Connect: find the newest microversion the API serves (its root document, else the
 * headers of /v1) and read at min(that, `maxMinor`); refuse one older than MIN_MINOR.
 */
export async function connectIronic(session: ServiceSession, opts: { maxMinor?: number; doFetch?: typeof fetch } = {}): Promise<IronicApi> {
  const doFetch = opts.doFetch ?? fetch;
  const endpoint = session.endpoint.replace(/\/+$/, '').replace(/\/v1$/, '');
  const call = async (path: string, minor?: number) => {
    const r = await doFetch(`${endpoint}${path}`, {
      headers: { accept: 'application/json', ...session.headers, ...(minor ? { 'x-openstack-ironic-api-version': `1.${minor}` } : {}) },
    });
    const text = await r.text();
    return { status: r.status, headers: r.headers, text };
  };
  let max = Number.NaN;
  const root = await call('/').catch((e: Error) => {
    throw new Error(`cannot reach ${endpoint}: ${e.message}`);
  });
  if (root.status === 200) {
    try {
      const doc = JSON.parse(root.text) as { default_version?: { version?: string }; versions?: Array<{ version?: string }> };
      max = minorOf(doc.default_version?.version ?? doc.versions?.[0]?.version);
    } catch {
      /* not the version document: ask /v1 */
    }
  }
  if (!Number.isFinite(max)) {
    const v1 = await call('/v1');
    max = minorOf(v1.headers.get('x-openstack-ironic-api-maximum-version'));
    if (!Number.isFinite(max))
      throw new Error(`${endpoint} does not look like Ironic's API (GET / and GET /v1 name no microversion): ${v1.status} ${v1.text.slice(0, 200)}`);
  }
  const minor = Math.min(max, opts.maxMinor ?? MAX_MINOR);
  if (minor < MIN_MINOR) {
    throw new Error(
      `${endpoint} serves microversions up to 1.${max}; reading every field Berth keeps needs 1.${MIN_MINOR} (Ironic 18.1, Xena) or newer: upgrade Ironic first`,
    );
  }
  const get = async (path: string): Promise<IronicObject> => {
    const r = await call(path, minor);
    if (r.status !== 200) {
      let fault = r.text.slice(0, 300);
      try {
        fault = JSON.parse(JSON.parse(r.text).error_message).faultstring ?? fault;
      } catch {
        /* not Ironic's error body */
      }
      throw new Error(`GET ${endpoint}${path}: ${r.status} ${fault}`);
    }
    return JSON.parse(r.text) as IronicObject;
  };
  return {
    endpoint,
    minor,
    maxMinor: max,
    get,
    async list(path, key, onPage) {
      const out: IronicObject[] = [];
      let marker: string | undefined;
      for (;;) {
        const page = await get(`${path}${path.includes('?') ? '&' : '?'}limit=${PAGE_SIZE}${marker ? `&marker=${marker}` : ''}`);
        const items = page[key];
        if (!Array.isArray(items)) throw new Error(`GET ${endpoint}${path}: no "${key}" list in the answer`);
        out.push(...(items as IronicObject[]));
        onPage?.(out.length);
        if (items.length < PAGE_SIZE || !page.next) return out;
        marker = String((items[items.length - 1] as IronicObject).uuid);
      }
    },
    async vifs(node) {
      const r = await get(`/v1/nodes/${node}/vifs`);
      return ((r.vifs as Array<{ id: string }> | undefined) ?? []).map((v) => String(v.id));
    },
  };
}

/** Run `fn` over `items` with at most `n` in flight, results in order. */
export async function pool<T, R>(items: readonly T[], n: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(n, items.length)) }, worker));
  return out;
}

/** What a bare-metal API holds: nodes (detail), allocations, and each node's VIFs. */
export interface BaremetalContents {
  nodes: IronicObject[];
  allocations: IronicObject[];
  vifs: Map<string, string[]>;
}

/**
 * Read everything, in the API's order. VIFs are asked of every node for which `askVifs`
 * says so (Ironic's `noop` network interface lists none, whatever was attached: its
 * nodes are not asked).
 */
export async function readContents(
  api: IronicApi,
  opts: { askVifs: (node: IronicObject) => boolean; onProgress?: (what: string, n: number) => void; concurrency?: number },
): Promise<BaremetalContents> {
  const nodes = await api.list('/v1/nodes/detail', 'nodes', (n) => opts.onProgress?.('nodes', n));
  const allocations = await api.list('/v1/allocations', 'allocations', (n) => opts.onProgress?.('allocations', n));
  const asked = nodes.filter(opts.askVifs);
  let done = 0;
  const lists = await pool(asked, opts.concurrency ?? 4, async (n) => {
    const v = await api.vifs(String(n.uuid));
    opts.onProgress?.('VIF lists', ++done);
    return v;
  });
  const vifs = new Map<string, string[]>();
  for (const [i, n] of asked.entries()) vifs.set(String(n.uuid), lists[i]!);
  return { nodes, allocations, vifs };
}
