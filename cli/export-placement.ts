/**
 * `berth export-placement --to URL`: this table's Placement state replayed into an
 * EMPTY Placement (no provider; 1.28 or newer) through its API, in the order it
 * accepts it: custom resource classes and traits (as created here), providers
 * (parents first; in their creation order with `--concurrency 1`, else level by
 * level), each provider's inventories, traits and aggregates, then every consumer's
 * allocations (POST /allocations, up to 100 consumers a call, with project, user,
 * consumer type and consumer_generation null: they are new there).
 *
 * A provider whose inventory no longer takes its allocations (Placement accepts
 * lowering an inventory below its usage, or out of a min_unit / max_unit / step_size
 * its allocations fit, but not an allocation that does not fit) is given a wider
 * inventory while its allocations are written, then its own
 * (core/placement/transfer-out.ts inventoryForAllocations).
 *
 * Generations start again in the target: every provider's and consumer's generation
 * there is what this replay left (provider: one per write, consumer: 1). Clients that
 * cached Berth's must refresh them: restart them, or let their first 409 do it.
 */
import type { ConsumerRecord } from '../functions/core/placement/consumers.js';
import type { ProviderRecord } from '../functions/core/placement/model.js';
import { parseFlags, positiveInt } from './flags.js';
import { openstackSession } from './openstack-session.js';
import { ApiError, atLeast, PlacementApi, versionText } from './placement-api.js';
import { progressBar } from './progress.js';

const USAGE = 'usage: berth export-placement --to URL [--token T] [--concurrency N] [--scan-segments N]';
/** consumers per POST /allocations */
const CONSUMERS_PER_CALL = 100;

const say = (s: string) => process.stdout.write(`[berth export-placement] ${s}\n`);

function expect(r: { status: number; text: string }, ok: number[], what: string): void {
  if (!ok.includes(r.status)) throw new ApiError(`${what}: ${r.status} ${r.text.slice(0, 400)}`, r.status);
}

export async function exportPlacementCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, ['--to', '--token', '--concurrency', '--scan-segments'], [], USAGE);
  if (!flags.values.get('--to')) throw new Error(`--to URL is required\n${USAGE}`);
  const concurrency = positiveInt(flags, '--concurrency');
  const session = await openstackSession({ serviceType: 'placement', endpoint: flags.values.get('--to'), token: flags.values.get('--token') });
  const api = await PlacementApi.open(session, { concurrency });
  if (!atLeast(api.version, 1, 28))
    throw new Error(`${api.endpoint} speaks Placement up to ${versionText(api.max)}: export-placement needs 1.28 or newer`);
  const existing = await api.providers();
  if (existing.length) throw new Error(`${api.endpoint} is not empty (${existing.length} resource providers): export into an empty Placement`);
  say(`target ${api.endpoint} (Placement up to ${versionText(api.max)}, written at ${versionText(api.version)}; ${session.auth})`);

  const { readPlacementState } = await import('../functions/store/placement/transfer-read.js');
  const { parentsFirst, inventoryForAllocations } = await import('../functions/core/placement/transfer-out.js');
  const { tableName } = await import('../functions/store/ddb/client.js');
  const t0 = performance.now();
  const state = await readPlacementState({ segments: positiveInt(flags, '--scan-segments') });
  say(`table ${tableName()}: ${state.providers.size} providers, ${state.consumers.size} consumers`);

  // custom names the target does not have, in their order here
  const [classes, traits] = await Promise.all([api.resourceClasses(), api.traits()]);
  const lost: string[] = [];
  for (const [kind, ours, theirs, path] of [
    ['class', state.classes, new Set(classes), '/resource_classes'],
    ['trait', state.traits, new Set(traits), '/traits'],
  ] as const) {
    for (const c of [...ours.values()].sort((a, b) => a.seq - b.seq)) {
      if (theirs.has(c.name)) continue;
      if (!c.name.startsWith('CUSTOM_')) {
        lost.push(`${kind} ${c.name} (standard here, unknown there)`);
        continue;
      }
      expect(await api.call('PUT', `${path}/${c.name}`, undefined, kind === 'class' ? '1.7' : undefined), [201, 204], `PUT ${path}/${c.name}`);
    }
  }
  if (lost.length) throw new Error(`${api.endpoint} does not know: ${lost.join(', ')} (a Placement older than this Berth's standard names)`);

  // providers, parents first: level by level (in creation order with --concurrency 1)
  const ordered = parentsFirst([...state.providers.values()].sort((a, b) => a.seq - b.seq));
  const depth = new Map<string, number>();
  for (const p of ordered) depth.set(p.uuid, p.parent === undefined ? 0 : depth.get(p.parent)! + 1);
  const levels: ProviderRecord[][] = [];
  for (const p of ordered) (levels[depth.get(p.uuid)!] ??= []).push(p);
  const bar = progressBar('[berth export-placement] providers');
  let done = 0;
  const generation = new Map<string, number>();
  for (const level of api.concurrency === 1 ? [ordered] : levels) {
    await Promise.all(
      level.map(async (p) => {
        const r = await api.call('POST', '/resource_providers', {
          uuid: p.uuid,
          name: p.name,
          ...(p.parent ? { parent_provider_uuid: p.parent } : {}),
        });
        expect(r, [200, 201], `POST /resource_providers ${p.uuid}`);
        generation.set(p.uuid, Number(r.json?.generation ?? 0));
        bar.update(++done, ordered.length * 2);
      }),
    );
  }

  // inventories (wide enough for the allocations), traits, aggregates
  const onProvider = new Map<string, ConsumerRecord[]>();
  for (const c of state.consumers.values())
    for (const rp of Object.keys(c.allocations)) (onProvider.get(rp) ?? onProvider.set(rp, []).get(rp)!).push(c);
  const widened = new Set<string>();
  const setGen = (u: string, r: { json: any }) => generation.set(u, Number(r.json?.resource_provider_generation));
  await Promise.all(
    ordered.map(async (p) => {
      const wide = inventoryForAllocations(
        p.inventories,
        (onProvider.get(p.uuid) ?? []).map((c) => c.allocations[p.uuid]!),
      );
      if (wide) widened.add(p.uuid);
      // each a generation-guarded PUT of the field named as its path
      const put = async (what: 'inventories' | 'traits' | 'aggregates', value: unknown) => {
        const r = await api.call('PUT', `/resource_providers/${p.uuid}/${what}`, {
          resource_provider_generation: generation.get(p.uuid),
          [what]: value,
        });
        expect(r, [200], `PUT ${what} of ${p.uuid}`);
        setGen(p.uuid, r);
      };
      if (Object.keys(p.inventories).length) await put('inventories', wide ?? p.inventories);
      if (p.traits.length) await put('traits', p.traits);
      if (p.aggregates.length) await put('aggregates', p.aggregates);
      bar.update(++done, ordered.length * 2);
    }),
  );
  bar.finish();

  // allocations: typed consumers at 1.38 (with their type), the others below it (none)
  const typed = api.at(1, 38);
  const batches: Array<{ version: string; consumers: ConsumerRecord[] }> = [];
  for (const withType of [true, false]) {
    const cs = [...state.consumers.values()].filter((c) => (c.type !== null) === withType);
    if (withType && cs.length && !typed) throw new Error(`${api.endpoint} speaks Placement up to ${versionText(api.max)}: consumer types need 1.38`);
    for (let i = 0; i < cs.length; i += CONSUMERS_PER_CALL)
      batches.push({ version: withType ? '1.38' : '1.37', consumers: cs.slice(i, i + CONSUMERS_PER_CALL) });
  }
  const abar = progressBar('[berth export-placement] consumers');
  let adone = 0;
  await Promise.all(
    batches.map(async (b) => {
      const body: Record<string, unknown> = {};
      for (const c of b.consumers) {
        body[c.uuid] = {
          allocations: Object.fromEntries(Object.entries(c.allocations).map(([rp, resources]) => [rp, { resources }])),
          project_id: c.project,
          user_id: c.user,
          consumer_generation: null,
          ...(c.type !== null ? { consumer_type: c.type } : {}),
        };
      }
      const version = typed ? b.version : versionText(api.version);
      expect(await api.call('POST', '/allocations', body, version), [204], `POST /allocations (${b.consumers.length} consumers)`);
      adone += b.consumers.length;
      abar.update(adone, state.consumers.size);
    }),
  );
  abar.finish();

  // the widened inventories back to what they are here
  await Promise.all(
    [...widened].map(async (u) => {
      const cur = await api.inventories(u);
      const r = await api.call('PUT', `/resource_providers/${u}/inventories`, {
        resource_provider_generation: cur?.generation,
        inventories: state.providers.get(u)!.inventories,
      });
      expect(r, [200], `PUT inventories of ${u}`);
    }),
  );
  const allocations = [...state.consumers.values()].reduce((n, c) => n + Object.keys(c.allocations).length, 0);
  say(
    `exported ${state.providers.size} providers, ${state.consumers.size} consumers (${allocations} allocations), ${state.classes.size} custom classes, ${state.traits.size} custom traits in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${api.requests} requests${widened.size ? `; ${widened.size} provider(s) whose inventory no longer takes its allocations written wide first, then as here` : ''}`,
  );
  say(
    'generations start again in the target: clients that cached these (nova-compute, neutron, cyborg) must refresh — restart them, or let their first 409 do it',
  );
  return 0;
}
