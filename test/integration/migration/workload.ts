/**
 * A cloud's Placement history, written through the API of any Placement (the real
 * 8.0.0 in the migration tests): what `berth import-placement` must carry over, with
 * generations that are not what a fresh write would give. Nested trees (compute →
 * NUMA → NIC PF), sharing storage through aggregates, custom classes and traits (used
 * and unused), consumers of several types, projects and users (instances, a migration,
 * consumers written below 1.38 without a type), a deleted consumer (DELETE keeps the
 * providers' generations), a host reshaped with its allocation in place, a provider
 * renamed and re-parented (1.37), an aggregate set below 1.19 (no generation bump),
 * and an inventory lowered below its usage (what export-placement must write wide first).
 *
 * `churn` changes it the way a running cloud does while an import's first passes run.
 */
import { uuid5 } from '../../../functions/core/compat/uuid.js';

export type Call = (method: string, path: string, body?: unknown, version?: string) => Promise<{ status: number; json: any; text: string }>;

const NS = '7c1e4a52-0d0b-4f4e-9a51-3d6c8b2f0a10';
export const U = (name: string) => uuid5(NS, name);
export const AGG = { a: U('agg-a'), b: U('agg-b'), c: U('agg-c') };
export const PROJECTS = ['proj-1', 'proj-2', 'proj-3'];
export const USERS = ['user-1', 'user-2'];

const inv = (total: number, more: Record<string, number> = {}) => ({ total, ...more });

async function ok(call: Call, method: string, path: string, body?: unknown, version = '1.39', want = [200, 201, 204]) {
  const r = await call(method, path, body, version);
  if (!want.includes(r.status)) throw new Error(`${method} ${path} at ${version}: ${r.status} ${r.text.slice(0, 400)}`);
  return r;
}

async function generation(call: Call, rp: string): Promise<number> {
  return (await ok(call, 'GET', `/resource_providers/${rp}`)).json.generation;
}

async function setInventories(call: Call, rp: string, inventories: Record<string, unknown>) {
  await ok(call, 'PUT', `/resource_providers/${rp}/inventories`, { resource_provider_generation: await generation(call, rp), inventories });
}

async function setTraits(call: Call, rp: string, traits: string[]) {
  await ok(call, 'PUT', `/resource_providers/${rp}/traits`, { resource_provider_generation: await generation(call, rp), traits });
}

async function setAggregates(call: Call, rp: string, aggregates: string[]) {
  await ok(call, 'PUT', `/resource_providers/${rp}/aggregates`, { resource_provider_generation: await generation(call, rp), aggregates });
}

/** a consumer's allocations replaced (consumer_generation as the API has it) */
export async function allocate(
  call: Call,
  consumer: string,
  allocations: Record<string, Record<string, number>>,
  owner: { project: string; user: string; type?: string },
  version = '1.39',
) {
  const cur = (await ok(call, 'GET', `/allocations/${consumer}`, undefined, version)).json;
  const body: Record<string, unknown> = {
    allocations: Object.fromEntries(Object.entries(allocations).map(([rp, resources]) => [rp, { resources }])),
    project_id: owner.project,
    user_id: owner.user,
    consumer_generation: cur.consumer_generation ?? null,
  };
  if (owner.type) body.consumer_type = owner.type;
  await ok(call, 'PUT', `/allocations/${consumer}`, body, version);
}

export interface Workload {
  providers: string[];
  consumers: string[];
}

/** Write the workload (see the module comment) into an empty Placement. */
export async function buildWorkload(call: Call): Promise<Workload> {
  for (const rc of ['CUSTOM_FPGA', 'CUSTOM_VF', 'CUSTOM_UNUSED_CLASS']) await ok(call, 'PUT', `/resource_classes/${rc}`);
  for (const t of ['CUSTOM_RACK_A', 'CUSTOM_RACK_B', 'CUSTOM_GOLD', 'CUSTOM_UNUSED_TRAIT']) await ok(call, 'PUT', `/traits/${t}`);
  const providers: string[] = [];
  const create = async (name: string, parent?: string) => {
    const uuid = U(name);
    await ok(call, 'POST', '/resource_providers', { uuid, name, ...(parent ? { parent_provider_uuid: parent } : {}) });
    providers.push(uuid);
    return uuid;
  };
  // shared storage first (as a deployment's storage usually is)
  const ss1 = await create('shared-storage-1');
  await setInventories(call, ss1, { DISK_GB: inv(10000, { reserved: 100, allocation_ratio: 1.0 }) });
  await setTraits(call, ss1, ['MISC_SHARES_VIA_AGGREGATE', 'STORAGE_DISK_SSD']);
  await setAggregates(call, ss1, [AGG.a, AGG.b]);
  const ss2 = await create('shared-storage-2');
  await setInventories(call, ss2, { DISK_GB: inv(4000) });
  await setTraits(call, ss2, ['MISC_SHARES_VIA_AGGREGATE']);
  await setAggregates(call, ss2, [AGG.c]);
  // four compute hosts, each a root with two NUMA nodes and a NIC PF under each
  for (let h = 1; h <= 4; h++) {
    const cn = await create(`compute-${h}`);
    await setInventories(call, cn, {
      VCPU: inv(32, { allocation_ratio: 4.0, max_unit: 32 }),
      MEMORY_MB: inv(131072, { reserved: 512, allocation_ratio: 1.5 }),
      DISK_GB: inv(500),
    });
    await setTraits(call, cn, ['HW_CPU_X86_AVX2', 'COMPUTE_NET_ATTACH_INTERFACE', h % 2 ? 'CUSTOM_RACK_A' : 'CUSTOM_RACK_B']);
    await setAggregates(call, cn, h <= 2 ? [AGG.a] : [AGG.c, AGG.a]);
    for (const n of [0, 1]) {
      const numa = await create(`compute-${h}-numa${n}`, cn);
      await setInventories(call, numa, { PCPU: inv(8) });
      await setTraits(call, numa, ['HW_NUMA_ROOT']);
      const pf = await create(`compute-${h}-numa${n}-pf`, numa);
      await setInventories(call, pf, { NET_BW_EGR_KILOBIT_PER_SEC: inv(10_000_000), CUSTOM_VF: inv(16, { max_unit: 4 }) });
      await setTraits(call, pf, [`CUSTOM_RACK_${n ? 'B' : 'A'}`, 'CUSTOM_GOLD']);
    }
  }
  const fpga = await create('compute-2-fpga', U('compute-2'));
  await setInventories(call, fpga, { CUSTOM_FPGA: inv(2) });

  const consumers: string[] = [];
  const owner = (i: number, type?: string) => ({
    project: PROJECTS[i % PROJECTS.length]!,
    user: USERS[i % USERS.length]!,
    ...(type ? { type } : {}),
  });
  // instances on every host, their disks on the shared storage of their aggregate
  for (let i = 0; i < 16; i++) {
    const h = (i % 4) + 1;
    const c = U(`instance-${i}`);
    consumers.push(c);
    await allocate(call, c, { [U(`compute-${h}`)]: { VCPU: 2, MEMORY_MB: 2048 }, [h <= 2 ? ss1 : ss2]: { DISK_GB: 20 } }, owner(i, 'INSTANCE'));
  }
  // resized twice: consumer generation 3
  await allocate(call, U('instance-0'), { [U('compute-1')]: { VCPU: 4, MEMORY_MB: 4096 }, [ss1]: { DISK_GB: 40 } }, owner(0, 'INSTANCE'));
  await allocate(call, U('instance-0'), { [U('compute-1')]: { VCPU: 8, MEMORY_MB: 8192 }, [ss1]: { DISK_GB: 40 } }, owner(0, 'INSTANCE'));
  // a pinned instance with SR-IOV ports on a nested tree
  const pinned = U('instance-pinned');
  consumers.push(pinned);
  await allocate(
    call,
    pinned,
    {
      [U('compute-3')]: { MEMORY_MB: 4096 },
      [U('compute-3-numa0')]: { PCPU: 4 },
      [U('compute-3-numa0-pf')]: { NET_BW_EGR_KILOBIT_PER_SEC: 1000, CUSTOM_VF: 2 },
    },
    owner(1, 'INSTANCE'),
  );
  // a migration holding the source host's resources
  const migration = U('migration-1');
  consumers.push(migration);
  await allocate(call, migration, { [U('compute-4')]: { VCPU: 2, MEMORY_MB: 2048 } }, owner(2, 'MIGRATION'));
  // consumers written without a type (before 1.38), one on the FPGA
  for (let i = 0; i < 3; i++) {
    const c = U(`untyped-${i}`);
    consumers.push(c);
    await allocate(call, c, { [U(`compute-${i + 1}`)]: { VCPU: 1 }, ...(i === 1 ? { [fpga]: { CUSTOM_FPGA: 1 } } : {}) }, owner(i + 1), '1.37');
  }
  // deleted: the providers keep their generations (DELETE does not bump them)
  await ok(call, 'DELETE', `/allocations/${U('instance-15')}`);
  consumers.splice(consumers.indexOf(U('instance-15')), 1);

  // compute-3 is reshaped: VGPU moves from the root to a new pGPU child, with the
  // allocation holding one (POST /reshaper, 1.30)
  const cn3 = U('compute-3');
  await setInventories(call, cn3, {
    VCPU: inv(32, { allocation_ratio: 4.0, max_unit: 32 }),
    MEMORY_MB: inv(131072, { reserved: 512, allocation_ratio: 1.5 }),
    DISK_GB: inv(500),
    VGPU: inv(4),
  });
  const vgpu = U('instance-vgpu');
  consumers.push(vgpu);
  await allocate(call, vgpu, { [cn3]: { VCPU: 2, MEMORY_MB: 1024, VGPU: 1 } }, owner(0, 'INSTANCE'));
  const pgpu = await create('compute-3-pgpu0', cn3);
  const vgpuGen = (await ok(call, 'GET', `/allocations/${vgpu}`)).json.consumer_generation;
  await ok(call, 'POST', '/reshaper', {
    inventories: {
      [cn3]: {
        resource_provider_generation: await generation(call, cn3),
        inventories: {
          VCPU: inv(32, { allocation_ratio: 4.0, max_unit: 32 }),
          MEMORY_MB: inv(131072, { reserved: 512, allocation_ratio: 1.5 }),
          DISK_GB: inv(500),
        },
      },
      [pgpu]: { resource_provider_generation: await generation(call, pgpu), inventories: { VGPU: inv(4) } },
    },
    allocations: {
      [vgpu]: {
        allocations: { [cn3]: { resources: { VCPU: 2, MEMORY_MB: 1024 } }, [pgpu]: { resources: { VGPU: 1 } } },
        project_id: PROJECTS[0],
        user_id: USERS[0],
        consumer_generation: vgpuGen,
        consumer_type: 'INSTANCE',
      },
    },
  });

  // the FPGA provider renamed and moved under compute-2's NUMA node 1 (1.37)
  await ok(call, 'PUT', `/resource_providers/${fpga}`, { name: 'compute-2-numa1-fpga', parent_provider_uuid: U('compute-2-numa1') }, '1.37');
  // an aggregate set below 1.19: the generation stays
  await ok(call, 'PUT', `/resource_providers/${U('compute-2-numa1-pf')}/aggregates`, [AGG.b], '1.18');
  // compute-4's VCPU lowered below what is allocated on it
  await setInventories(call, U('compute-4'), {
    VCPU: inv(1, { max_unit: 1 }),
    MEMORY_MB: inv(131072, { reserved: 512, allocation_ratio: 1.5 }),
    DISK_GB: inv(500),
  });
  return { providers, consumers };
}

/**
 * Changes a running cloud makes (`steps` of them, from a seeded generator): new and
 * deleted consumers, resizes, inventory and trait updates, a new provider, a provider
 * deleted, aggregates set below 1.19 — including the changes that keep every
 * generation (DELETE /allocations).
 */
export async function churn(call: Call, next: () => number, steps: number, tag: string): Promise<void> {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  /** the consumers this churn created (the only ones it deletes: the tests' own stay) */
  const created: string[] = [];
  for (let s = 0; s < steps; s++) {
    const host = (Math.floor(next() * 4) + 1) as 1 | 2 | 3 | 4;
    const kind = pick(['new', 'new', 'resize', 'delete', 'inventory', 'traits', 'provider', 'aggregates-old'] as const);
    const c = U(`churn-${tag}-${s}`);
    switch (kind) {
      case 'new':
        await allocate(
          call,
          c,
          { [U(`compute-${host}`)]: { MEMORY_MB: 256 } },
          { project: pick(PROJECTS), user: pick(USERS), type: pick(['INSTANCE', 'MIGRATION']) },
        );
        break;
      case 'resize':
        await allocate(
          call,
          U(`instance-${host}`),
          { [U(`compute-${host}`)]: { VCPU: 1 + Math.floor(next() * 3), MEMORY_MB: 1024 } },
          {
            project: PROJECTS[host % PROJECTS.length]!,
            user: USERS[host % USERS.length]!,
            type: 'INSTANCE',
          },
        );
        break;
      case 'delete':
        if (created.length) await ok(call, 'DELETE', `/allocations/${created.splice(Math.floor(next() * created.length), 1)[0]}`);
        break;
      case 'inventory': {
        const rp = U(`compute-${host}-numa${s % 2}`);
        await setInventories(call, rp, { PCPU: inv(8 + Math.floor(next() * 8)) });
        break;
      }
      case 'traits':
        await setTraits(call, U(`compute-${host}-numa${s % 2}-pf`), pick([['CUSTOM_GOLD'], ['CUSTOM_RACK_A', 'CUSTOM_GOLD'], ['CUSTOM_RACK_B']]));
        break;
      case 'provider': {
        const name = `edge-${tag}-${s}`;
        await ok(call, 'POST', '/resource_providers', { uuid: U(name), name });
        await setInventories(call, U(name), { VCPU: inv(4) });
        if (next() < 0.5) await ok(call, 'DELETE', `/resource_providers/${U(name)}`);
        break;
      }
      case 'aggregates-old':
        await ok(call, 'PUT', `/resource_providers/${U(`compute-${host}-numa1`)}/aggregates`, pick([[AGG.b], [AGG.a, AGG.c], []]), '1.18');
        break;
    }
  }
}
