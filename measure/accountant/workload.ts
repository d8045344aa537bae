/**
 * A Nova-like workload for the accountant, sending what Nova's report client
 * (nova/scheduler/client/report.py, python3-nova 26) sends, labelled by role:
 *
 *  - every compute host, once per `resource_provider_association_refresh` (300 s in Nova;
 *    time-compressed here), _ensure_resource_provider -> _refresh_associations:
 *      GET /resource_providers?in_tree=<root>            (1.14)  nova:in_tree
 *      and for each provider of the tree:
 *      GET /resource_providers/<u>/inventories           (1.0)   nova:inventories
 *      GET /resource_providers/<u>/aggregates            (1.19)  nova:aggregates
 *      GET /resource_providers/<u>/traits                (1.6)   nova:traits
 *      GET /resource_providers?member_of=in:<aggs>&required=MISC_SHARES_VIA_AGGREGATE
 *                                                        (1.18)  nova:sharing  (only when it has aggregates)
 *  - the scheduler: GET /allocation_candidates?resources=...&limit=1000 (1.36)
 *    scheduler:candidates; a share of them (claims/s over candidates/s) claim the first
 *    candidate as claim_resources does: GET /allocations/<c> (1.28) claim:get, then
 *    PUT /allocations/<c> (1.36) with the allocation request, project_id, user_id and
 *    consumer_generation null: claim:put;
 *  - before each claim, Nova's quota counting (get_usages_counts_for_quota): GET /usages
 *    for the project, then for project and user (1.9): quota:usages-project, quota:usages-user;
 *  - each instance is deleted `lifetimeS` after its claim, as delete_allocation_for_instance
 *    does: GET /allocations/<c> (1.28) delete:get, PUT of empty allocations with the consumer
 *    generation (1.28) delete:put — so deletes run at the claim rate;
 *  - a few bare-metal allocations: POST /v1/allocations baremetal:allocate, polled
 *    (GET /v1/allocations/<u> baremetal:poll) until active, deleted later
 *    (DELETE baremetal:release).
 *
 * Each request carries x-berth-request-id and x-berth-label, so the containers account
 * every DynamoDB call to it, and answers with its container, CPU time and log bytes.
 */
import { randomUUID } from 'node:crypto';
import { mulberry32 } from '../../local/prng.js';
import { CONTAINER_HEADER, CPU_HEADER, LABEL_HEADER, LOG_HEADER, REQUEST_ID_HEADER } from '../../local/attribution.js';

export interface Host {
  uuid: string;
  name: string;
  aggregates: string[];
}

export interface WorkloadRates {
  /** compute hosts (one provider each) */
  hosts: number;
  /** providers in each host's tree (1: flat compute nodes) */
  providersPerHost: number;
  /** share of hosts in at least one aggregate (they also ask for sharing providers) */
  aggregatedShare: number;
  /** Nova's resource_provider_association_refresh (s) */
  refreshPeriodS: number;
  claimsPerS: number;
  candidatesPerS: number;
  /** deletes per second (steady state: the claim rate) */
  deletesPerS: number;
  /** GET /usages per claim (Nova's quota counting: project, then project and user) */
  usagesPerClaim: number;
  baremetalPerS: number;
}

/** Requests per second of each label at these rates (the accountant projects with the same table). */
export function labelRates(r: WorkloadRates): Record<string, number> {
  const refresh = r.hosts / r.refreshPeriodS;
  const perProvider = refresh * r.providersPerHost;
  return {
    'nova:in_tree': refresh,
    'nova:inventories': perProvider,
    'nova:aggregates': perProvider,
    'nova:traits': perProvider,
    'nova:sharing': refresh * r.aggregatedShare,
    'scheduler:candidates': r.candidatesPerS,
    'claim:get': r.claimsPerS,
    'claim:put': r.claimsPerS,
    'quota:usages-project': r.claimsPerS * Math.min(1, r.usagesPerClaim),
    'quota:usages-user': r.claimsPerS * Math.max(0, r.usagesPerClaim - 1),
    'delete:get': r.deletesPerS,
    'delete:put': r.deletesPerS,
    'baremetal:allocate': r.baremetalPerS,
    'baremetal:release': r.baremetalPerS,
  };
}

/** labels whose requests change providers (the workload knows which one) */
export const MUTATING = new Set(['claim:put', 'delete:put', 'baremetal:allocate', 'baremetal:release']);

export interface RequestRecord {
  id: string;
  label: string;
  method: string;
  path: string;
  status: number;
  /** start and end (ms since the epoch) */
  t0: number;
  t1: number;
  container: string;
  cpuUs: number;
  logBytes: number;
  /** the provider a mutating request changed */
  provider?: string;
}

export interface WorkloadOptions {
  placementUrl: string;
  baremetalUrl: string;
  hosts: Host[];
  rates: WorkloadRates;
  durationS: number;
  /** instances live this long before Nova deletes them */
  lifetimeS: number;
  projects: string[];
  /** bare-metal resource class with available nodes (none: no bare-metal traffic) */
  baremetalClass?: string;
  seed?: number;
  /** requests still in flight at the end are waited for this long */
  drainMs?: number;
}

interface Answer {
  status: number;
  json: any;
}

export class Driver {
  readonly records: RequestRecord[] = [];
  readonly failures: string[] = [];
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    private readonly placementUrl: string,
    private readonly baremetalUrl: string,
  ) {}

  async send(
    api: 'placement' | 'baremetal',
    label: string,
    method: string,
    path: string,
    opts: { version?: string; body?: unknown; provider?: string } = {},
  ): Promise<Answer> {
    const id = randomUUID();
    const headers: Record<string, string> = { [REQUEST_ID_HEADER]: id, [LABEL_HEADER]: label, accept: 'application/json' };
    if (api === 'placement') {
      headers['x-auth-token'] = 'admin';
      headers['openstack-api-version'] = `placement ${opts.version ?? '1.0'}`;
    } else headers['x-openstack-ironic-api-version'] = opts.version ?? '1.80';
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const t0 = Date.now();
    const p = fetch((api === 'placement' ? this.placementUrl : this.baremetalUrl) + path, {
      method,
      headers,
      body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
    }).then(async (r) => {
      const text = await r.text();
      this.records.push({
        id,
        label,
        method,
        path,
        status: r.status,
        t0,
        t1: Date.now(),
        container: r.headers.get(CONTAINER_HEADER) ?? '?',
        cpuUs: Number(r.headers.get(CPU_HEADER) ?? 0),
        logBytes: Number(r.headers.get(LOG_HEADER) ?? 0),
        provider: opts.provider,
      });
      if (r.status >= 500) this.failures.push(`${label} ${method} ${path}: ${r.status} ${text.slice(0, 200)}`);
      let json: any;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: r.status, json };
    });
    this.inflight.add(p);
    p.finally(() => this.inflight.delete(p)).catch(() => undefined);
    return p;
  }

  async drain(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.inflight.size && Date.now() < deadline)
      await Promise.race([...this.inflight, new Promise((r) => setTimeout(r, 100))]).catch(() => undefined);
  }
}

/** what Nova's scheduler asks for a small flavor (with the forbidden trait it adds for disabled hosts) */
export const CANDIDATES_QUERY = 'resources=DISK_GB:10,MEMORY_MB:512,VCPU:1&required=!COMPUTE_STATUS_DISABLED&limit=1000';

/** the traits a libvirt/KVM compute host reports (the size of its provider item follows) */
export const LIBVIRT_HOST_TRAITS = [
  'COMPUTE_NODE',
  'COMPUTE_DEVICE_TAGGING',
  'COMPUTE_NET_ATTACH_INTERFACE',
  'COMPUTE_NET_ATTACH_INTERFACE_WITH_TAG',
  'COMPUTE_VOLUME_ATTACH_WITH_TAG',
  'COMPUTE_VOLUME_EXTEND',
  'COMPUTE_VOLUME_MULTI_ATTACH',
  'COMPUTE_TRUSTED_CERTS',
  'COMPUTE_IMAGE_TYPE_AKI',
  'COMPUTE_IMAGE_TYPE_AMI',
  'COMPUTE_IMAGE_TYPE_ARI',
  'COMPUTE_IMAGE_TYPE_ISO',
  'COMPUTE_IMAGE_TYPE_QCOW2',
  'COMPUTE_IMAGE_TYPE_RAW',
  'COMPUTE_GRAPHICS_MODEL_BOCHS',
  'COMPUTE_GRAPHICS_MODEL_CIRRUS',
  'COMPUTE_GRAPHICS_MODEL_NONE',
  'COMPUTE_GRAPHICS_MODEL_QXL',
  'COMPUTE_GRAPHICS_MODEL_VGA',
  'COMPUTE_GRAPHICS_MODEL_VIRTIO',
  'COMPUTE_NET_VIF_MODEL_E1000',
  'COMPUTE_NET_VIF_MODEL_E1000E',
  'COMPUTE_NET_VIF_MODEL_NE2K_PCI',
  'COMPUTE_NET_VIF_MODEL_PCNET',
  'COMPUTE_NET_VIF_MODEL_RTL8139',
  'COMPUTE_NET_VIF_MODEL_VIRTIO',
  'COMPUTE_NET_VIF_MODEL_VMXNET3',
  'COMPUTE_STORAGE_BUS_FDC',
  'COMPUTE_STORAGE_BUS_IDE',
  'COMPUTE_STORAGE_BUS_SATA',
  'COMPUTE_STORAGE_BUS_SCSI',
  'COMPUTE_STORAGE_BUS_USB',
  'COMPUTE_STORAGE_BUS_VIRTIO',
  'COMPUTE_RESCUE_BFV',
  'COMPUTE_SOCKET_PCI_NUMA_AFFINITY',
  'COMPUTE_ACCELERATORS',
  'COMPUTE_SECURITY_UEFI_SECURE_BOOT',
  'HW_CPU_X86_AVX',
  'HW_CPU_X86_AVX2',
  'HW_CPU_X86_SSE',
  'HW_CPU_X86_SSE2',
  'HW_CPU_X86_SSE41',
  'HW_CPU_X86_SSE42',
  'HW_CPU_X86_SSSE3',
  'HW_CPU_X86_AESNI',
  'HW_CPU_X86_FMA3',
  'HW_CPU_X86_BMI',
  'HW_CPU_X86_BMI2',
  'HW_CPU_X86_MMX',
  'HW_CPU_X86_F16C',
  'HW_CPU_X86_CLMUL',
];

/** one host's association refresh, as _ensure_resource_provider / _refresh_associations make it */
async function refreshHost(d: Driver, h: Host, providersPerHost: number): Promise<void> {
  const tree = await d.send('placement', 'nova:in_tree', 'GET', `/resource_providers?in_tree=${h.uuid}`, { version: '1.14' });
  const members: string[] = (tree.json?.resource_providers ?? []).map((p: { uuid: string }) => p.uuid).slice(0, Math.max(1, providersPerHost));
  for (const u of members.length ? members : [h.uuid]) {
    await d.send('placement', 'nova:inventories', 'GET', `/resource_providers/${u}/inventories`);
    const aggs = await d.send('placement', 'nova:aggregates', 'GET', `/resource_providers/${u}/aggregates`, { version: '1.19' });
    await d.send('placement', 'nova:traits', 'GET', `/resource_providers/${u}/traits`, { version: '1.6' });
    const list: string[] = aggs.json?.aggregates ?? [];
    if (u === h.uuid && list.length) {
      await d.send('placement', 'nova:sharing', 'GET', `/resource_providers?member_of=in:${list.join(',')}&required=MISC_SHARES_VIA_AGGREGATE`, {
        version: '1.18',
      });
    }
  }
}

/** Run the workload for `durationS`; returns every request made (labelled, timed, with its container). */
export async function runWorkload(o: WorkloadOptions): Promise<Driver> {
  const d = new Driver(o.placementUrl, o.baremetalUrl);
  const random = mulberry32(o.seed ?? 1);
  const r = o.rates;
  const start = Date.now();
  const end = start + o.durationS * 1000;
  const timers: NodeJS.Timeout[] = [];
  const at = (ms: number, fn: () => Promise<unknown>) => {
    if (start + ms > end) return;
    timers.push(setTimeout(() => void fn().catch((e) => d.failures.push(String((e as Error)?.message ?? e))), ms));
  };
  const every = (perS: number, fn: (i: number) => Promise<unknown>) => {
    if (perS <= 0) return;
    const gap = 1000 / perS;
    const phase = random() * gap;
    for (let i = 0, t = phase; t < o.durationS * 1000; i++, t += gap) at(t, () => fn(i));
  };
  // each host's refresh, spread over the period
  const refreshes = Math.ceil(o.durationS / r.refreshPeriodS) + 1;
  for (const h of o.hosts) {
    const phase = random() * r.refreshPeriodS * 1000;
    for (let k = 0; k < refreshes; k++) at(phase + k * r.refreshPeriodS * 1000, () => refreshHost(d, h, r.providersPerHost));
  }
  // the scheduler: candidates; every (candidates / claims)-th one claims
  const claimEvery = r.claimsPerS > 0 ? r.candidatesPerS / r.claimsPerS : Number.POSITIVE_INFINITY;
  let nextClaim = 0;
  every(r.candidatesPerS, async (i) => {
    const claims = i >= nextClaim;
    if (claims) nextClaim += claimEvery;
    const project = o.projects[Math.floor(random() * o.projects.length)]!;
    const user = `${project.slice(0, 8)}-user`;
    if (claims) {
      await d.send('placement', 'quota:usages-project', 'GET', `/usages?project_id=${project}`, { version: '1.9' });
      if (r.usagesPerClaim > 1)
        await d.send('placement', 'quota:usages-user', 'GET', `/usages?project_id=${project}&user_id=${user}`, { version: '1.9' });
    }
    const cands = await d.send('placement', 'scheduler:candidates', 'GET', `/allocation_candidates?${CANDIDATES_QUERY}`, { version: '1.36' });
    if (!claims) return;
    const reqs: Array<{ allocations: Record<string, { resources: Record<string, number> }>; mappings?: unknown }> =
      cands.json?.allocation_requests ?? [];
    if (!reqs.length) return;
    const ar = reqs[Math.floor(random() * Math.min(reqs.length, 10))]!;
    const provider = Object.keys(ar.allocations)[0];
    const consumer = randomUUID();
    await d.send('placement', 'claim:get', 'GET', `/allocations/${consumer}`, { version: '1.28' });
    const put = await d.send('placement', 'claim:put', 'PUT', `/allocations/${consumer}`, {
      version: '1.36',
      body: { ...ar, project_id: project, user_id: user, consumer_generation: null },
      provider,
    });
    if (put.status !== 204) return;
    // Nova deletes the instance later: read the consumer generation, then put empty allocations
    const deleteAt = Date.now() - start + o.lifetimeS * 1000;
    at(deleteAt, async () => {
      const cur = await d.send('placement', 'delete:get', 'GET', `/allocations/${consumer}`, { version: '1.28' });
      if (!cur.json || !Object.keys(cur.json.allocations ?? {}).length) return;
      await d.send('placement', 'delete:put', 'PUT', `/allocations/${consumer}`, {
        version: '1.28',
        body: { allocations: {}, project_id: project, user_id: user, consumer_generation: cur.json.consumer_generation },
        provider,
      });
    });
  });
  // a few bare-metal allocations
  if (o.baremetalClass) {
    every(r.baremetalPerS, async (i) => {
      const a = await d.send('baremetal', 'baremetal:allocate', 'POST', '/v1/allocations', {
        body: { resource_class: o.baremetalClass, name: `acct-${i}-${start}` },
      });
      const uuid = a.json?.uuid as string | undefined;
      if (!uuid) return;
      for (let k = 0; k < 40; k++) {
        await new Promise((res) => setTimeout(res, 250));
        const g = await d.send('baremetal', 'baremetal:poll', 'GET', `/v1/allocations/${uuid}`);
        if (g.json?.state !== 'allocating') break;
      }
      at(Date.now() - start + o.lifetimeS * 1000, () => d.send('baremetal', 'baremetal:release', 'DELETE', `/v1/allocations/${uuid}`));
    });
  }
  await new Promise((res) => setTimeout(res, o.durationS * 1000));
  for (const t of timers) clearTimeout(t);
  await d.drain(o.drainMs ?? 30_000);
  return d;
}
