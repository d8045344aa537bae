/**
 * What a node's driver interfaces can do, as the bare-metal API reports it (pure):
 * GET /v1/nodes/{node}/validate (the conductor's validate_driver_interfaces), the RAID
 * rules of PUT /v1/nodes/{node}/states/raid beyond its schema, the VIFs a node holds.
 */
import { unsupportedExtensionText } from './errors.js';
import type { NodeRecord } from './records.js';

/** the interfaces validate reports, in the order Ironic reports them (vendor is validated per method) */
export const VALIDATED_INTERFACES = [
  'boot',
  'deploy',
  'management',
  'network',
  'power',
  'bios',
  'console',
  'inspect',
  'raid',
  'rescue',
  'storage',
] as const;

/** an interface implementation that stands for "not supported" (no-bios, no-raid, …) */
export function isUnsupported(implementation: string | null | undefined): boolean {
  return typeof implementation === 'string' && implementation.startsWith('no-');
}

/** utils.validate_instance_info_traits: undefined when fine, else why not */
export function instanceTraitsProblem(node: Pick<NodeRecord, 'uuid' | 'instance_info' | 'traits'>): string | undefined {
  const wanted = node.instance_info?.traits;
  if (pyFalsy(wanted)) return undefined;
  if (!Array.isArray(wanted) || !wanted.every((t) => typeof t === 'string')) {
    return `Error parsing traits from Node ${node.uuid} instance_info field. A list of strings is expected.`;
  }
  const missing = [...new Set(wanted as string[])].filter((t) => !node.traits.includes(t));
  if (!missing.length) return undefined;
  return `Cannot specify instance traits that are not also set on the node. Node ${node.uuid} is missing traits ${missing.join(', ')}`;
}

/** Python's `not value` for JSON values */
function pyFalsy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v as object).length === 0;
}

export type InterfaceResult = { result: boolean; reason?: string };

/**
 * validate_driver_interfaces for Berth's drivers: an interface passes unless it is a
 * no-* implementation, the deploy interface checks instance_info's traits, and the
 * RAID interface the stored target configuration (`raidProblem`: the schema's verdict).
 */
export function validateInterfaces(
  node: NodeRecord,
  raidProblem: (config: Record<string, unknown>) => string | undefined,
): Record<string, InterfaceResult> {
  const out: Record<string, InterfaceResult> = {};
  for (const iface of VALIDATED_INTERFACES) {
    const impl = (node as unknown as Record<string, unknown>)[`${iface}_interface`] as string | null;
    let reason: string | undefined;
    if (isUnsupported(impl)) reason = unsupportedExtensionText(node.driver, iface);
    else if (iface === 'deploy') reason = instanceTraitsProblem(node);
    else if (iface === 'raid' && Object.keys(node.target_raid_config ?? {}).length) reason = raidProblem(node.target_raid_config);
    out[iface] = reason === undefined ? { result: true } : { result: false, reason };
  }
  return out;
}

/** raid._check_and_return_root_volumes: at most one logical disk is the root volume */
export function rootVolumeProblem(config: { logical_disks?: unknown }): string | undefined {
  const disks = Array.isArray(config.logical_disks) ? config.logical_disks : [];
  const roots = disks.filter((d) => d && typeof d === 'object' && (d as { is_root_volume?: unknown }).is_root_volume === true).length;
  return roots > 1 ? `Raid config cannot have more than one root volume. ${roots} root volumes were specified` : undefined;
}

/**
 * How many VIFs one node may hold. Ironic attaches a VIF to a free port or port group
 * (NoFreePhysicalPorts when none is left); Berth has no ports and keeps the
 * attachments on the node, so it bounds them like a node with this many ports.
 */
export const MAX_VIFS_PER_NODE = 32;
