/**
 * A Placement API as the import, the export and the verification read and write it
 * (any implementation: the real Placement, a deployed Berth, this table's handlers
 * served in-process): the microversion it is spoken at (the newest both sides know),
 * its answers parsed into the records functions/core/placement/transfer.ts works with,
 * and a bounded number of requests in flight.
 *
 * What a source older than 1.28 cannot show, and what the import then writes instead
 * (LOSSES): the calls below degrade by microversion rather than refuse.
 */
import type { Inventory } from '../functions/core/placement/model.js';
import { withDefaults } from '../functions/core/placement/inventory.js';
import type { ListedAllocation, ListedProvider, SourceConsumer } from '../functions/core/placement/transfer.js';
import type { HttpAnswer, OpenStackSession } from './openstack-session.js';

/** the newest microversion Berth speaks (and so the newest an import reads at) */
export const NEWEST = '1.39';

export type Version = [number, number];
export const parseVersion = (v: string): Version => {
  const m = /^(\d+)\.(\d+)$/.exec(v.trim());
  if (!m) throw new Error(`not a microversion: ${v}`);
  return [Number(m[1]), Number(m[2])];
};
export const versionText = (v: Version) => `${v[0]}.${v[1]}`;
export const atLeast = (v: Version, major: number, minor: number) => v[0] > major || (v[0] === major && v[1] >= minor);
/** the older of two microversions */
export const minVersion = (a: Version, b: Version): Version => (atLeast(a, b[0], b[1]) ? b : a);

/** What a source below each microversion cannot show, and what the import writes instead. */
export const LOSSES: Array<{ below: Version; what: string }> = [
  { below: [1, 38], what: 'consumer types (1.38): every consumer is imported without a type ("unknown")' },
  {
    below: [1, 28],
    what: 'consumer generations (1.28): every consumer is imported at generation 0, as Placement leaves consumers written before it',
  },
  { below: [1, 19], what: "aggregate lists' generation check (1.19): an aggregate change that kept the generation is only seen by a final pass" },
  { below: [1, 14], what: 'nested providers (1.14): every provider is imported as a root' },
  { below: [1, 12], what: "consumers' project and user (1.12): every consumer is owned by INCOMPLETE_CONSUMER_PROJECT_ID / _USER_ID" },
  { below: [1, 6], what: 'traits (1.6): no provider has any' },
  { below: [1, 2], what: 'custom resource classes (1.2)' },
  { below: [1, 1], what: 'aggregates (1.1)' },
];

/** What is lost reading at `v`. */
export function lossesAt(v: Version): string[] {
  return LOSSES.filter((l) => !atLeast(v, l.below[0], l.below[1])).map((l) => l.what);
}

/** The API answered something the caller did not expect. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface ApiOptions {
  /** requests in flight (default 8) */
  concurrency?: number;
  /** the newest microversion to speak (default NEWEST) */
  newest?: string;
  /** counts every request (the import reports its request rate) */
  onRequest?: () => void;
}

/** A Placement API at one microversion, with at most `concurrency` requests in flight. */
export class PlacementApi {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  readonly concurrency: number;
  requests = 0;

  private constructor(
    readonly session: OpenStackSession,
    readonly version: Version,
    readonly max: Version,
    private readonly opts: ApiOptions,
  ) {
    this.concurrency = Math.max(1, opts.concurrency ?? 8);
  }

  /** Open the API at the newest microversion both it and `opts.newest` know (GET /). */
  static async open(session: OpenStackSession, opts: ApiOptions = {}): Promise<PlacementApi> {
    const r = await session.request('GET', '/');
    if (r.status !== 200) throw new ApiError(`${session.endpoint}/ answered ${r.status} (is it a Placement API?)`, r.status);
    const doc = r.json?.versions?.[0] ?? r.json?.version;
    if (!doc?.max_version) throw new ApiError(`${session.endpoint}/ is not a Placement version document`, r.status);
    const max = parseVersion(String(doc.max_version));
    return new PlacementApi(session, minVersion(max, parseVersion(opts.newest ?? NEWEST)), max, opts);
  }

  /** The same API spoken at `version` (or its newest, if older). */
  speaking(version: Version): PlacementApi {
    return new PlacementApi(this.session, minVersion(this.max, version), this.max, this.opts);
  }

  get endpoint(): string {
    return this.session.endpoint;
  }

  at(major: number, minor: number): boolean {
    return atLeast(this.version, major, minor);
  }

  private async slot<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) await new Promise<void>((r) => this.waiting.push(r));
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** One request at this API's microversion (or `version`). */
  call(method: string, path: string, body?: unknown, version?: string): Promise<HttpAnswer> {
    return this.slot(() => {
      this.requests++;
      this.opts.onRequest?.();
      return this.session.request(method, path, {
        body,
        headers: { 'openstack-api-version': `placement ${version ?? versionText(this.version)}` },
      });
    });
  }

  /** A GET that must answer 200 (404: undefined). */
  async get(path: string): Promise<any> {
    const r = await this.call('GET', path);
    if (r.status === 404) return undefined;
    if (r.status !== 200) throw new ApiError(`GET ${this.endpoint}${path}: ${r.status} ${r.text.slice(0, 300)}`, r.status);
    return r.json;
  }

  /** Every provider, in the API's order (with its root, from 1.14). */
  async providers(): Promise<Array<ListedProvider & { root?: string }>> {
    const body = await this.get('/resource_providers');
    return (body?.resource_providers ?? []).map((p: any) => ({
      uuid: p.uuid,
      name: p.name,
      generation: Number(p.generation),
      ...(p.parent_provider_uuid ? { parent: p.parent_provider_uuid } : {}),
      ...(p.root_provider_uuid ? { root: p.root_provider_uuid } : {}),
    }));
  }

  /** Every resource class (1.2; standard ones only below). */
  async resourceClasses(): Promise<string[]> {
    if (!this.at(1, 2)) return [];
    return ((await this.get('/resource_classes'))?.resource_classes ?? []).map((c: any) => String(c.name));
  }

  /** Every trait (1.6). */
  async traits(): Promise<string[]> {
    if (!this.at(1, 6)) return [];
    return ((await this.get('/traits'))?.traits ?? []).map(String);
  }

  /** A provider's inventories and the generation they were read at (undefined: no such provider). */
  async inventories(uuid: string): Promise<{ inventories: Record<string, Inventory>; generation: number } | undefined> {
    const body = await this.get(`/resource_providers/${uuid}/inventories`);
    if (!body) return undefined;
    const inventories: Record<string, Inventory> = {};
    for (const [rc, inv] of Object.entries(body.inventories ?? {})) inventories[rc] = withDefaults(inv as Inventory);
    return { inventories, generation: Number(body.resource_provider_generation) };
  }

  async providerTraits(uuid: string): Promise<{ traits: string[]; generation: number } | undefined> {
    if (!this.at(1, 6)) return { traits: [], generation: Number.NaN };
    const body = await this.get(`/resource_providers/${uuid}/traits`);
    return body ? { traits: (body.traits ?? []).map(String), generation: Number(body.resource_provider_generation) } : undefined;
  }

  /** A provider's aggregates (their generation from 1.19: NaN below). */
  async aggregates(uuid: string): Promise<{ aggregates: string[]; generation: number } | undefined> {
    if (!this.at(1, 1)) return { aggregates: [], generation: Number.NaN };
    const body = await this.get(`/resource_providers/${uuid}/aggregates`);
    return body
      ? { aggregates: (body.aggregates ?? []).map(String), generation: Number(body.resource_provider_generation ?? Number.NaN) }
      : undefined;
  }

  /** A provider's allocations in the API's order (consumer generations from 1.28). */
  async providerAllocations(uuid: string): Promise<{ allocations: ListedAllocation[]; generation: number } | undefined> {
    const body = await this.get(`/resource_providers/${uuid}/allocations`);
    if (!body) return undefined;
    const allocations: ListedAllocation[] = Object.entries(body.allocations ?? {}).map(([consumer, a]: [string, any]) => ({
      consumer,
      resources: { ...(a.resources ?? {}) },
      ...(a.consumer_generation !== undefined && a.consumer_generation !== null ? { generation: Number(a.consumer_generation) } : {}),
    }));
    return { allocations, generation: Number(body.resource_provider_generation) };
  }

  /** A provider's usage by class (GET /resource_providers/{u}/usages). */
  async providerUsages(uuid: string): Promise<Record<string, number> | undefined> {
    return (await this.get(`/resource_providers/${uuid}/usages`))?.usages;
  }

  /** GET /usages of a project, or of one of its users (1.9; from 1.38 by consumer type). */
  async usages(project: string, user?: string): Promise<unknown> {
    const q = new URLSearchParams({ project_id: project, ...(user !== undefined ? { user_id: user } : {}) });
    return (await this.get(`/usages?${q}`))?.usages;
  }

  /**
   * A consumer (GET /allocations/{c}); null when it holds no allocations. Below 1.12 the
   * answer has no project or user: `incomplete` stands in (LOSSES).
   */
  async consumer(uuid: string, incomplete: { project: string; user: string }): Promise<SourceConsumer | null> {
    const body = await this.get(`/allocations/${uuid}`);
    const allocations: Record<string, Record<string, number>> = {};
    for (const [rp, a] of Object.entries(body?.allocations ?? {})) allocations[rp] = { ...((a as any).resources ?? {}) };
    if (!Object.keys(allocations).length) return null;
    const type = body.consumer_type;
    return {
      uuid,
      project: body.project_id ?? incomplete.project,
      user: body.user_id ?? incomplete.user,
      type: typeof type === 'string' && type !== 'unknown' ? type : null,
      generation: body.consumer_generation === undefined || body.consumer_generation === null ? 0 : Number(body.consumer_generation),
      allocations,
    };
  }
}
