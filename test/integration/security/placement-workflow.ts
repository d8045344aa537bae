/**
 * A workflow that calls every Placement route the way clients do (successes and the
 * common refusals), for tests that observe what the handlers do underneath.
 */
import { randomUUID } from 'node:crypto';
import type { Api } from '../harness.js';

export async function placementWorkflow(api: Api): Promise<number> {
  let n = 0;
  const r = async (method: string, path: string, body?: unknown, version?: string) => {
    n++;
    const res = await api.req(method, path, { body, version });
    if (res.status >= 500) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res;
  };
  const rc = `CUSTOM_WF_${randomUUID().slice(0, 8).toUpperCase()}`;
  const trait = `CUSTOM_WFT_${randomUUID().slice(0, 8).toUpperCase()}`;
  const [root, child, other] = [randomUUID(), randomUUID(), randomUUID()];
  const agg = randomUUID();
  await r('GET', '/');
  await r('GET', '/resource_classes');
  await r('POST', '/resource_classes', { name: rc });
  await r('GET', `/resource_classes/${rc}`);
  await r('PUT', `/resource_classes/${rc}_2`);
  await r('PUT', `/resource_classes/${rc}_3`, { name: `${rc}_4` }, '1.2');
  await r('DELETE', `/resource_classes/${rc}_2`);
  await r('PUT', `/traits/${trait}`);
  await r('GET', `/traits/${trait}`);
  await r('GET', '/traits?name=startswith:CUSTOM_WF');
  await r('GET', '/traits?associated=true');
  await r('POST', '/resource_providers', { name: `wf-${root}`, uuid: root });
  await r('POST', '/resource_providers', { name: `wf-${child}`, uuid: child, parent_provider_uuid: root });
  await r('POST', '/resource_providers', { name: `wf-${other}`, uuid: other });
  await r('POST', '/resource_providers', { name: `wf-${other}` }); // 409 name taken
  await r('GET', '/resource_providers');
  await r('GET', `/resource_providers?in_tree=${root}&resources=VCPU:1&required=HW_CPU_X86_AVX&member_of=${agg}`);
  await r('GET', `/resource_providers/${root}`);
  await r('PUT', `/resource_providers/${other}`, { name: `wf2-${other}`, parent_provider_uuid: root });
  await r('PUT', `/resource_providers/${other}`, { name: `wf2-${other}`, parent_provider_uuid: null }, '1.37');
  await r('PUT', `/resource_providers/${root}/inventories`, {
    resource_provider_generation: 0,
    inventories: { VCPU: { total: 32 }, MEMORY_MB: { total: 4096 }, [rc]: { total: 4 } },
  });
  await r('POST', `/resource_providers/${child}/inventories`, { resource_class: 'DISK_GB', total: 500 });
  await r('PUT', `/resource_providers/${child}/inventories/DISK_GB`, { resource_provider_generation: 1, total: 600 });
  await r('GET', `/resource_providers/${root}/inventories`);
  await r('GET', `/resource_providers/${root}/inventories/VCPU`);
  await r('PUT', `/resource_providers/${root}/traits`, { resource_provider_generation: 1, traits: ['HW_CPU_X86_AVX', trait] });
  await r('GET', `/resource_providers/${root}/traits`);
  await r('PUT', `/resource_providers/${root}/aggregates`, { resource_provider_generation: 2, aggregates: [agg] });
  await r('PUT', `/resource_providers/${child}/aggregates`, [agg], '1.1');
  await r('GET', `/resource_providers/${root}/aggregates`);
  const c1 = randomUUID();
  const c2 = randomUUID();
  await r('PUT', `/allocations/${c1}`, {
    allocations: { [root]: { resources: { VCPU: 2, [rc]: 1 } }, [child]: { resources: { DISK_GB: 10 } } },
    project_id: 'p1',
    user_id: 'u1',
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  });
  await r('PUT', `/allocations/${c1}`, { allocations: [{ resource_provider: { uuid: root }, resources: { VCPU: 1 } }] }, '1.7'); // old format
  await r('POST', '/allocations', {
    [c2]: { allocations: { [root]: { resources: { MEMORY_MB: 512 } } }, project_id: 'p1', user_id: 'u2', consumer_generation: null },
  });
  await r('GET', `/allocations/${c1}`);
  await r('GET', `/allocations/${randomUUID()}`);
  await r('GET', `/resource_providers/${root}/allocations`);
  await r('GET', `/resource_providers/${root}/usages`);
  await r('GET', '/usages?project_id=p1');
  await r('GET', '/usages?project_id=p1&user_id=u1');
  await r('GET', '/usages?project_id=p1&consumer_type=INSTANCE');
  await r('GET', '/allocation_candidates?resources=VCPU:1,DISK_GB:5&required=HW_CPU_X86_AVX');
  await r('GET', `/allocation_candidates?resources1=VCPU:1&resources2=DISK_GB:1&group_policy=none&member_of=${agg}&limit=5`);
  // custom classes and traits in filters (looked up in the catalog), known and unknown
  await r('GET', `/resource_providers?resources=${rc}:1&required=${trait}`);
  await r('GET', '/resource_providers?resources=CUSTOM_WF_NOPE:1&required=CUSTOM_WF_NOPE');
  await r('GET', `/allocation_candidates?resources=${rc}:1&required=${trait}`);
  await r('GET', '/allocation_candidates?resources=CUSTOM_WF_NOPE:1&required=CUSTOM_WF_NOPE');
  await r('GET', `/traits?name=in:${trait},CUSTOM_WF_NOPE`);
  await r('DELETE', `/resource_providers/${root}/inventories/MEMORY_MB`); // 409 in use
  await r('DELETE', `/allocations/${c2}`);
  await r('DELETE', `/resource_providers/${root}/inventories/MEMORY_MB`);
  const gen = (await r('GET', `/resource_providers/${child}`)).json.generation;
  await r(
    'POST',
    '/reshaper',
    {
      inventories: { [child]: { resource_provider_generation: gen, inventories: { DISK_GB: { total: 600 }, VCPU: { total: 8 } } } },
      allocations: { [c1]: { allocations: { [child]: { resources: { VCPU: 1 } } }, project_id: 'p1', user_id: 'u1', consumer_generation: 2 } },
    },
    '1.34',
  );
  await r('DELETE', `/resource_providers/${root}/traits`);
  await r('DELETE', `/resource_providers/${child}/inventories`);
  await r('DELETE', `/allocations/${c1}`);
  await r('DELETE', `/traits/${trait}`);
  await r('DELETE', `/resource_providers/${child}/inventories`);
  await r('DELETE', `/resource_providers/${child}`);
  await r('DELETE', `/resource_providers/${other}`);
  await r('DELETE', `/resource_providers/${root}/inventories`);
  await r('DELETE', `/resource_providers/${root}`);
  await r('DELETE', `/resource_classes/${rc}`);
  await r('GET', '/nope');
  return n;
}
