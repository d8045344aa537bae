#!/usr/bin/env node
/**
 * `npm ci` refuses a package-lock.json that does not name every package package.json and the
 * locked packages ask for, optional platform packages included (a lock written on one machine
 * from a registry mirror that lacks, say, Biome's macOS binaries fails `npm ci` everywhere).
 * This check finds that before CI does, offline: every dependency, dev, optional and
 * non-optional peer dependency of the root and of every locked package must resolve, the way
 * Node resolves it (the nearest node_modules up the path), to an entry of the lock.
 *
 * `node scripts/check-lockfile.mjs` prints each missing entry and exits 1 if there is one;
 * `npm test` runs it with the other fast checks (test/unit/lockfile.test.ts checks the checker).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The lock entry `name` resolves to when required from the package at `from` ('' = root). */
function resolveIn(packages, from, name) {
  let dir = from;
  for (;;) {
    const key = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[key]) return key;
    if (!dir) return undefined;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut < 0 ? '' : dir.slice(0, cut);
  }
}

/** Every `{ from, name, kind }` that package.json or a locked package asks for and the lock lacks. */
export function missingEntries(pkg, lock) {
  const packages = lock.packages ?? {};
  const missing = [];
  const want = (from, deps, kind, optionalPeers = {}) => {
    for (const name of Object.keys(deps ?? {})) {
      if (kind === 'peer' && optionalPeers[name]?.optional) continue;
      if (!resolveIn(packages, from, name)) missing.push({ from: from || '(root)', name, kind });
    }
  };
  want('', pkg.dependencies, 'dependency');
  want('', pkg.devDependencies, 'dev');
  want('', pkg.optionalDependencies, 'optional');
  for (const [key, entry] of Object.entries(packages)) {
    if (!key || entry.link) continue;
    want(key, entry.dependencies, 'dependency');
    want(key, entry.optionalDependencies, 'optional');
    want(key, entry.peerDependencies, 'peer', entry.peerDependenciesMeta);
  }
  return missing;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const missing = missingEntries(pkg, lock);
  for (const m of missing) console.log(`package-lock.json lacks ${m.name} (${m.kind} of ${m.from}): npm ci would refuse the lock`);
  process.exit(missing.length ? 1 : 0);
}
