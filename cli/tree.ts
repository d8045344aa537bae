/**
 * `berth tree [PROVIDER]`: the provider forest as text — every tree, or the subtree of
 * one provider (uuid or name) — with generation, inventories as used/capacity, traits
 * and aggregates. Read from the same provider snapshot the API uses.
 */
import type { ProviderRecord } from '../functions/core/placement/model.js';
import type { Forest } from '../functions/core/placement/forest.js';
import { inventoryCapacity } from '../functions/core/placement/inventory.js';
import { commandErrors } from './flags.js';
import { commandLine } from '../scripts/args.js';

export function describeProvider(p: ProviderRecord): string[] {
  const lines = [`${p.name}  ${p.uuid}  gen ${p.generation}`];
  const inv = Object.entries(p.inventories)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([rc, i]) => `${rc} ${p.usages[rc] ?? 0}/${inventoryCapacity(i)}`);
  if (inv.length) lines.push(`inventory: ${inv.join(', ')}`);
  if (p.traits.length) lines.push(`traits: ${[...p.traits].sort().join(', ')}`);
  if (p.aggregates.length) lines.push(`aggregates: ${[...p.aggregates].sort().join(', ')}`);
  return lines;
}

export function renderTree(forest: Forest, from?: ProviderRecord[]): string {
  const out: string[] = [];
  const byName = (a: ProviderRecord, b: ProviderRecord) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const walk = (p: ProviderRecord, prefix: string, last: boolean, top: boolean) => {
    const [head, ...rest] = describeProvider(p);
    out.push(top ? head! : `${prefix}${last ? '└── ' : '├── '}${head}`);
    const inner = top ? '' : `${prefix}${last ? '    ' : '│   '}`;
    const kids = forest.children(p.uuid).sort(byName);
    for (const r of rest) out.push(`${inner}${kids.length ? '│ ' : '  '} ${r}`);
    for (const [i, c] of kids.entries()) walk(c, inner, i === kids.length - 1, false);
  };
  const roots = (from ?? forest.roots()).sort(byName);
  roots.forEach((r, i) => {
    if (i) out.push('');
    walk(r, '', true, true);
  });
  return out.join('\n');
}

export async function treeCommand(args: string[]): Promise<number> {
  const [which] = commandLine(args, {}, commandErrors('tree'), 1).positionals;
  const { snapshot } = await import('../functions/store/placement/snapshot.js');
  const forest = await snapshot().fresh();
  let from: ProviderRecord[] | undefined;
  if (which) {
    const p = forest.get(which.toLowerCase()) ?? forest.all().find((x) => x.name === which);
    if (!p) {
      process.stderr.write(`berth tree: no provider ${which}\n`);
      return 1;
    }
    from = [p];
  }
  if (!forest.size) process.stdout.write('(no resource providers)\n');
  else process.stdout.write(`${renderTree(forest, from)}\n`);
  return 0;
}
