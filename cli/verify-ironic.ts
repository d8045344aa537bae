/**
 * `berth verify-ironic --from URL`: reads both APIs — Ironic's, and Berth's own bare-metal
 * API served in this process on the table (or --berth URL) — at the same microversion and
 * prints every difference, field by field; exit status 1 if there is any (docs/moving.md,
 * "From a running Ironic"). The reading and connecting are import-ironic's.
 */
import type { AddressInfo } from 'node:net';
import { viewDifferences, type IronicObject, type ViewDifference } from '../functions/core/baremetal/ironic-import.js';
import { connectIronic, readContents, type BaremetalContents } from './ironic-api.js';

import { connect, label, out, parseFlags, readSource } from './import-ironic.js';

const VERIFY_USAGE =
  "usage: berth verify-ironic [--from URL] [--token T] [--berth URL [--berth-token T]]\n  (without --berth, Berth's bare-metal API is served in this process on the table)";

/** Ironic's own answers, sanitized as Berth's API sanitizes them for the same caller (secrets masked), so only stored values are compared */
async function maskedLikeBerth(n: IronicObject): Promise<IronicObject> {
  const { maskDictPassword } = await import('../functions/baremetal/views.js');
  const o = { ...n };
  if (o.driver_info && typeof o.driver_info === 'object') o.driver_info = maskDictPassword(o.driver_info as Record<string, unknown>);
  if (o.instance_info && typeof o.instance_info === 'object') {
    const ii = maskDictPassword(o.instance_info as Record<string, unknown>);
    if (ii.configdrive) ii.configdrive = '******';
    if (ii.image_url) ii.image_url = '******';
    o.instance_info = ii;
  }
  return o;
}

export interface Verification {
  compared: { nodes: number; allocations: number };
  differences: string[];
}

/** Compare what two bare-metal APIs hold, object by object and field by field. */
export async function compareContents(ironic: BaremetalContents, berth: BaremetalContents): Promise<Verification> {
  const differences: string[] = [];
  const show = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? 'undefined'));
  const fieldLines = (what: string, diffs: ViewDifference[]) => {
    for (const d of diffs) differences.push(`${what}: ${d.field}: Ironic ${show(d.ironic)}, Berth ${show(d.berth)}`);
  };
  const compare = async (kind: 'node' | 'allocation', a: IronicObject[], b: IronicObject[]) => {
    const inB = new Map(b.map((o) => [String(o.uuid), o]));
    const inA = new Set(a.map((o) => String(o.uuid)));
    for (const o of a) {
      const other = inB.get(String(o.uuid));
      if (!other) {
        differences.push(`${kind} ${label(o)}: in Ironic, not in Berth`);
        continue;
      }
      const mine = kind === 'node' ? await maskedLikeBerth(o) : o;
      fieldLines(
        `${kind} ${label(o)}`,
        viewDifferences(mine, other, { ignore: new Set(['conductor']), unordered: new Set(kind === 'node' ? ['traits'] : []) }),
      );
      if (kind === 'node') {
        const va = [...(ironic.vifs.get(String(o.uuid)) ?? [])].sort();
        const vb = [...(berth.vifs.get(String(o.uuid)) ?? [])].sort();
        if (va.join() !== vb.join()) differences.push(`node ${label(o)}: VIFs: Ironic ${show(va)}, Berth ${show(vb)}`);
      }
    }
    for (const o of b) if (!inA.has(String(o.uuid))) differences.push(`${kind} ${label(o)}: in Berth, not in Ironic`);
    // both list in creation order
    const order = (xs: IronicObject[], keep: Set<string>) => xs.map((o) => String(o.uuid)).filter((u) => keep.has(u));
    const common = new Set([...inA].filter((u) => inB.has(u)));
    const oa = order(a, common);
    const ob = order(b, common);
    const at = oa.findIndex((u, i) => ob[i] !== u);
    if (at >= 0) differences.push(`${kind} list order: position ${at} is ${oa[at]} in Ironic, ${ob[at]} in Berth`);
  };
  await compare('node', ironic.nodes, berth.nodes);
  await compare('allocation', ironic.allocations, berth.allocations);
  return { compared: { nodes: ironic.nodes.length, allocations: ironic.allocations.length }, differences };
}

export async function verifyIronicCommand(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, ['--from', '--token', '--berth', '--berth-token'], [], VERIFY_USAGE);
  const ironic = await connect(flags, '--from', '--token');
  const src = await readSource(ironic, 'verify-ironic: Ironic');
  let server: import('node:http').Server | undefined;
  try {
    let berthUrl = flags.values['--berth'];
    if (!berthUrl) {
      // Berth's bare-metal API (the real handlers) on this table, here
      const { serveBaremetal } = await import('../local/apis.js');
      server = await serveBaremetal(0, '127.0.0.1');
      berthUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }
    const token = flags.values['--berth-token'];
    const berthSession = { endpoint: berthUrl, headers: token ? { 'x-auth-token': token } : ({} as Record<string, string>), describe: 'Berth' };
    const berthApi = await connectIronic(berthSession, { maxMinor: ironic.minor });
    if (berthApi.minor !== ironic.minor) throw new Error(`Berth serves up to 1.${berthApi.maxMinor}, Ironic is read at 1.${ironic.minor}`);
    // Berth keeps VIFs on every node, whatever its network interface: ask them all
    const mine = await readContents(berthApi, { askVifs: () => true, concurrency: 8 });
    const v = await compareContents(src, mine);
    for (const d of v.differences) out(d);
    out(
      `[verify-ironic] ${v.compared.nodes} nodes and ${v.compared.allocations} allocations of ${ironic.endpoint} compared with Berth's (${mine.nodes.length} nodes, ${mine.allocations.length} allocations) at 1.${ironic.minor}: ${v.differences.length} difference(s)`,
    );
    return v.differences.length ? 1 : 0;
  } finally {
    if (server) {
      const { closeServers } = await import('../local/servers.js');
      await closeServers([server]);
    }
  }
}
