#!/usr/bin/env node
/**
 * The import rule (docs/architecture.md, "Layers"): imports point one way,
 *
 *   handlers (functions/{placement,baremetal,maintenance,authorizer})
 *     -> use cases (Placement's, functions/usecases/) | conductor (bare metal's workflows)
 *     -> bridge (functions/bridge/: bare metal through Placement) -> store -> core
 *   every layer may use http/ (handlers only), observability/ and config.ts (with its parts
 *   in functions/config/, which import nothing else);
 *   core imports nothing but core (and zod / node built-ins), and neither does the
 *   bridge's pure part (functions/bridge/shape.ts);
 *   across the two APIs (WINGS): Placement's modules import nothing of bare metal's
 *   nor of the bridge, bare metal's only the bridge; the bridge is the one wing that
 *   imports both;
 *   the AWS SDK is imported only by the store, the executor and the authorizer;
 *   nothing under functions/ imports local/, scripts/, test/, bench/, measure/, cli/ or cdk/;
 *   the operators' CLI (cli/) imports nothing of local/, bench/ or measure/ — it runs
 *   against AWS — but the in-process APIs its verify commands serve (FENCES);
 *   the local runtime (local/) imports nothing of measure/, bench/ or cli/ but the
 *   metering proxy and its summary `npm start -- --ddb-meter` runs (FENCES);
 *   the dashboard (dashboard/, served as it is to a browser) imports only its own
 *   modules, by relative URL;
 *   the modules of functions/, of bench/, of measure/, of cli/ and of the dashboard import
 *   each other in no circle, dynamic imports counted (ACYCLIC);
 *   the store's DynamoDB client (store/ddb/client.ts) is a leaf: it imports nothing else
 *   of the store (LEAVES) — what readers see of locked items sits above it (reads.ts).
 *
 * `node scripts/check-layers.mjs` prints every violation and exits 1 if there is one.
 * `npm test` runs it before anything else. The rules are data (LAYERS, RULES) so a
 * unit test can check the checker (test/unit/layers.test.ts).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The layer a repository path belongs to (first matching prefix). */
export const LAYERS = [
  ['functions/core/', 'core'],
  ['functions/bridge/shape.ts', 'bridge-core'],
  ['functions/bridge/', 'bridge'],
  ['functions/usecases/', 'usecases'],
  ['functions/store/', 'store'],
  ['functions/conductor/', 'conductor'],
  ['functions/http/', 'http'],
  ['functions/observability/', 'observability'],
  ['functions/config.ts', 'config'],
  ['functions/config/', 'config'],
  ['functions/placement/', 'placement'],
  ['functions/baremetal/', 'baremetal'],
  ['functions/maintenance/', 'maintenance'],
  ['functions/feed/', 'feed'],
  ['functions/authorizer/', 'authorizer'],
  ['schemas/', 'schemas'],
  ['local/', 'local'],
  ['scripts/', 'scripts'],
  ['test/', 'test'],
  ['bench/', 'bench'],
  ['measure/', 'measure'],
  ['cli/', 'cli'],
  ['cdk/', 'cdk'],
  ['dashboard/', 'dashboard'],
];

/** layer -> the layers it may import from (itself always allowed) */
export const RULES = {
  core: [],
  config: [],
  observability: ['config'],
  store: ['core', 'observability', 'config'],
  'bridge-core': ['core'],
  bridge: ['store', 'core', 'bridge-core', 'observability', 'config'],
  usecases: ['store', 'core', 'observability', 'config'],
  conductor: ['bridge', 'store', 'core', 'observability', 'config'],
  http: ['core', 'observability', 'config'],
  schemas: ['core'],
  placement: ['usecases', 'store', 'core', 'http', 'observability', 'config', 'schemas'],
  baremetal: ['conductor', 'store', 'core', 'http', 'observability', 'config', 'schemas'],
  maintenance: ['conductor', 'bridge', 'usecases', 'store', 'core', 'observability', 'config'],
  feed: ['store', 'core', 'observability', 'config'],
  authorizer: ['core', 'http', 'observability', 'config'],
  dashboard: [],
};

/**
 * The wing of the two APIs a path belongs to (first matching prefix; shared modules —
 * config, http, observability, the ddb plumbing, layouts, the change feed, the other
 * Lambdas — are in none).
 */
export const WINGS = [
  ['functions/bridge/', 'bridge'],
  ['functions/placement/', 'placement'],
  ['functions/usecases/placement/', 'placement'],
  ['functions/store/placement/', 'placement'],
  ['functions/core/placement/', 'placement'],
  ['schemas/placement/', 'placement'],
  ['functions/baremetal/', 'baremetal'],
  ['functions/conductor/', 'baremetal'],
  ['functions/store/baremetal/', 'baremetal'],
  ['functions/core/baremetal/', 'baremetal'],
  ['schemas/baremetal/', 'baremetal'],
];

/**
 * wing -> the other wings it may import: Placement knows nothing of bare metal (a
 * provider or consumer "managed elsewhere" is its own notion); bare metal reaches
 * Placement only through the bridge (the scheduler strategy); the bridge joins both.
 */
export const WING_RULES = {
  placement: [],
  baremetal: ['bridge'],
  bridge: ['placement', 'baremetal'],
};

/**
 * Directories whose modules may not import each other in a circle (relative imports,
 * `import type` included: a scenario taking its types from the entry point that lists
 * the scenarios is a circle to a reader even when the compiler erases it; and
 * `await import()`: a module that loads another lazily still needs it).
 */
export const ACYCLIC = ['functions/', 'bench/', 'measure/', 'cli/', 'dashboard/'];

/**
 * Folders outside functions/ kept apart: a module under `from` imports nothing under
 * `to`, but the modules `except` names (by their .ts path).
 *  - The operators' CLI runs against AWS, from an installed checkout: none of the local
 *    runtime, the bench or the measuring wing (its batch-write units are its own,
 *    cli/batch-write-units.ts, on AWS's rules in functions/store/ddb/units.ts). Its verify
 *    commands serve this table's real handlers in-process, as `npm start` does: that
 *    server (local/apis.ts) and its closing (local/servers.ts) are the exceptions.
 *  - The local runtime (`npm start`) needs of the measuring wing only what
 *    `--ddb-meter` runs: the metering proxy and its summary at exit.
 */
export const FENCES = [
  {
    from: 'cli/',
    to: ['local/', 'bench/', 'measure/'],
    except: ['local/apis.ts', 'local/servers.ts'],
    why: "the operators' CLI runs against AWS (only the in-process APIs of local/apis.ts are its)",
  },
  {
    from: 'local/',
    to: ['measure/', 'bench/', 'cli/'],
    except: ['measure/meter/proxy.ts', 'measure/report.ts'],
    why: 'the local runtime takes of measure/ only what --ddb-meter runs (measure/meter/proxy.ts, measure/report.ts), nothing of bench/ or cli/',
  },
];

/** modules that may import nothing under a folder they are in: module -> that folder */
export const LEAVES = { 'functions/store/ddb/client.ts': 'functions/store/' };

/** the only places that may import the AWS SDK (@aws-sdk/*) */
export const AWS_SDK_ALLOWED = ['functions/store/', 'functions/conductor/executor.ts', 'functions/authorizer/', 'functions/feed/eventbridge.ts'];

export function layerOf(path) {
  const hit = LAYERS.find(([prefix]) => path === prefix || path.startsWith(prefix));
  return hit?.[1];
}

export function wingOf(path) {
  const hit = WINGS.find(([prefix]) => path === prefix || path.startsWith(prefix));
  return hit?.[1];
}

const IMPORT_RE =
  /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|[\s;])import\s*['"]([^'"]+)['"]/g;

/** every module specifier a source text imports (static, re-exports, dynamic with a literal) */
export function importsOf(text) {
  const out = [];
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
  for (const m of code.matchAll(IMPORT_RE)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/** Violations of one file: [{file, spec, why}] */
export function checkFile(file, text) {
  const from = layerOf(file);
  const problems = [];
  for (const spec of importsOf(text)) {
    if (spec.startsWith('@aws-sdk/') && file.startsWith('functions/') && !AWS_SDK_ALLOWED.some((p) => file === p || file.startsWith(p))) {
      problems.push({ file, spec, why: 'the AWS SDK may only be imported by the store, the executor and the authorizer' });
    }
    if (file.startsWith('dashboard/') && !spec.startsWith('./')) {
      problems.push({ file, spec, why: 'the dashboard has no build step: a browser resolves only its own modules (./x.js)' });
      continue;
    }
    if (!spec.startsWith('.')) continue;
    const target = relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\\/g, '/');
    if (LEAVES[file] && target.startsWith(LEAVES[file])) {
      problems.push({ file, spec, why: `a leaf: it imports nothing else under ${LEAVES[file]}` });
      continue;
    }
    const fence = FENCES.find((f) => file.startsWith(f.from));
    if (fence?.to.some((p) => target.startsWith(p)) && !fence.except.includes(target.replace(/\.js$/, '.ts'))) {
      problems.push({ file, spec, why: `${fence.from} must not import ${target.split('/')[0]}/: ${fence.why}` });
      continue;
    }
    const to = layerOf(target);
    if (file.startsWith('functions/') && !target.startsWith('functions/') && to !== 'schemas') {
      problems.push({ file, spec, why: `functions/ must not import ${target.split('/')[0]}/` });
      continue;
    }
    const [fromWing, toWing] = [wingOf(file), wingOf(target)];
    if (fromWing && toWing && fromWing !== toWing && !WING_RULES[fromWing].includes(toWing)) {
      problems.push({
        file,
        spec,
        why: `${fromWing} must not import ${toWing}: only functions/bridge/ joins the two APIs${fromWing === 'baremetal' ? ' (bare metal reaches Placement through the bridge)' : ''}`,
      });
      continue;
    }
    if (!from || !(from in RULES) || !to || to === from) continue;
    if (!RULES[from].includes(to)) problems.push({ file, spec, why: `${from} must not import ${to}` });
  }
  return problems;
}

/** the repository file a relative specifier names (`./x.js` is `x.ts` in TypeScript sources), if it is one of `files` */
function target(file, spec, files) {
  const t = relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\\/g, '/');
  return [t, t.replace(/\.js$/, '.ts'), t.replace(/\.mjs$/, '.mts')].find((c) => files.has(c));
}

/**
 * Import circles among `sources` (path -> text): each strongly connected group of
 * modules as one violation of its first module (sorted) naming the others.
 */
export function circles(sources) {
  const files = new Set(Object.keys(sources));
  const edges = new Map(
    [...files].map((f) => [f, importsOf(sources[f]).flatMap((spec) => (spec.startsWith('.') ? [target(f, spec, files)].filter(Boolean) : []))]),
  );
  // Tarjan's strongly connected components
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    index.set(v, index.size);
    low.set(v, index.get(v));
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || edges.get(v).includes(v)) found.push(group.sort());
  };
  for (const f of [...files].sort()) if (!index.has(f)) visit(f);
  return found.map(([first, ...rest]) => ({ file: first, why: `in an import circle with ${rest.length ? rest.join(', ') : 'itself'}` }));
}

function walk(dir, out = []) {
  for (const name of readdirSync(join(ROOT, dir))) {
    const p = `${dir}/${name}`;
    if (name === 'node_modules' || name.startsWith('.')) continue;
    if (statSync(join(ROOT, p)).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|mjs|js)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const read = (f) => readFileSync(join(ROOT, f), 'utf8');

export function checkRepository() {
  const problems = [];
  for (const dir of ['functions', 'schemas', 'dashboard', 'cli', 'local']) for (const f of walk(dir)) problems.push(...checkFile(f, read(f)));
  for (const dir of ACYCLIC) {
    const files = walk(dir.replace(/\/$/, ''));
    problems.push(...circles(Object.fromEntries(files.map((f) => [f, read(f)]))));
  }
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problems = checkRepository();
  for (const p of problems) process.stdout.write(p.spec ? `${p.file}: imports '${p.spec}': ${p.why}\n` : `${p.file}: ${p.why}\n`);
  process.stdout.write(problems.length ? `[layers] ${problems.length} violation(s)\n` : '[layers] imports point one way\n');
  process.exit(problems.length ? 1 : 0);
}
