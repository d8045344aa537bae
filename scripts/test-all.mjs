#!/usr/bin/env node
// `npm test`: every test the repository has.
//  0. the fast checks, before anything starts DynamoDB Local: type checking (tsc: the
//     TypeScript of tsconfig.json, then the dashboard's JavaScript, dashboard/tsconfig.json),
//     the linter and formatter (Biome, biome.json) and the import rule
//     (scripts/check-layers.mjs) and a lock that `npm ci` accepts
//     (scripts/check-lockfile.mjs); any failure stops the run here;
//  1. vitest: unit (pure core, schemas, CDK template, state machine) and integration
//     (real handlers behind the local API Gateway adapter, against DynamoDB Local);
//     Then the Ironic-compatible suites once more with BAREMETAL_SCHEDULER=placement
//     (bare metal through Placement: the bare-metal API must not change);
//  2. Placement's own gabbi conformance files listed in conformance/passing.txt,
//     each against a fresh `npm start -- --fresh --containers 2` server (two processes
//     answering round robin, as two Lambda containers would; needs ../shared and
//     Debian's python3-gabbi).
// Tests that need an optional system package (scripts/optional-packages.mjs: Keystone,
// the OpenStack CLIs, Nova, Placement, Chromium, gabbi) are skipped when it is missing
// and the run says which package to install; with CI set (CI=true) a missing one is a
// failure instead. The children get this process's environment as it is.
// Ends with one line: `N passed, N failed` (totals of both).
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { installHint, missingName, missingPackages, optionalPackage, sharedDir, strictCi } from './optional-packages.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// `npm test -- [--skip-checks] [--vitest-only | --conformance-only] [-- VITEST ARGS]`
function commandLine() {
  try {
    return parseArgs({
      options: { 'skip-checks': { type: 'boolean' }, 'vitest-only': { type: 'boolean' }, 'conformance-only': { type: 'boolean' } },
      // after `--`: vitest's own arguments (e.g. one file)
      allowPositionals: true,
      tokens: true,
    });
  } catch (e) {
    process.stderr.write(`npm test: ${e.message}\n`);
    process.exit(2);
  }
}
const { values: flags, positionals: vitestArgs, tokens } = commandLine();
/** `--` given: vitest runs only what follows it (and the placement-scheduler rerun is skipped) */
const toVitest = tokens.some((t) => t.kind === 'option-terminator');
const stray = tokens.find((t) => t.kind === 'positional' && !tokens.some((u) => u.kind === 'option-terminator' && u.index < t.index));
if (stray) {
  process.stderr.write(`npm test: unexpected argument ${stray.value} (vitest's arguments go after --)\n`);
  process.exit(2);
}
const only = flags['conformance-only'] ? 'conformance' : flags['vitest-only'] ? 'vitest' : 'all';

function run(cmd, argv, opts = {}) {
  return new Promise((res) => {
    let out = '';
    const child = spawn(cmd, argv, { cwd: root, env: { ...process.env, FORCE_COLOR: '0' }, ...opts });
    child.stdout.on('data', (d) => {
      out += d;
      process.stdout.write(d);
    });
    child.stderr.on('data', (d) => process.stderr.write(d));
    child.on('close', (code) => res({ code, out }));
  });
}

function counts(text) {
  const m = [...text.matchAll(/^(\d+) passed, (\d+) failed/gm)].pop();
  return m ? { passed: Number(m[1]), failed: Number(m[2]) } : undefined;
}

let passed = 0;
let failed = 0;
const problems = [];

if (!flags['skip-checks']) {
  const checks = [
    ['typecheck', join(root, 'node_modules/.bin/tsc'), ['--noEmit', '--pretty', 'false', '-p', 'tsconfig.json']],
    ['typecheck dashboard', join(root, 'node_modules/.bin/tsc'), ['--noEmit', '--pretty', 'false', '-p', 'dashboard/tsconfig.json']],
    ['lint', join(root, 'node_modules/.bin/biome'), ['ci', '--colors=off', '.']],
    ['layers', process.execPath, [join(root, 'scripts/check-layers.mjs')]],
    ['lockfile', process.execPath, [join(root, 'scripts/check-lockfile.mjs')]],
  ];
  for (const [name, cmd, argv] of checks) {
    const t0 = Date.now();
    const r = await run(cmd, argv);
    process.stdout.write(`[check] ${name}: ${r.code === 0 ? 'ok' : 'FAILED'} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
    if (r.code === 0) passed++;
    else failed++;
  }
  if (failed) {
    process.stdout.write(`\n[test] the fast checks failed: fix them first (npm run check)\n\n${passed} passed, ${failed} failed\n`);
    process.exit(1);
  }
}

const strict = strictCi();
const missing = missingPackages();
if (missing.length) {
  process.stdout.write(
    `\n[optional] not installed: ${missing.map(missingName).join(', ')} — ${strict ? 'CI is set: their tests fail' : 'their tests are skipped (listed at the end)'}\n\n`,
  );
}

if (only !== 'conformance') {
  const r = await run(join(root, 'node_modules/.bin/vitest'), ['run', ...vitestArgs]);
  const c = counts(r.out);
  if (!c) problems.push(`vitest exited ${r.code} without a summary`);
  else {
    passed += c.passed;
    failed += c.failed;
  }
  if (r.code !== 0 && (!c || c.failed === 0)) problems.push(`vitest exited with ${r.code}`);
  if (!toVitest) {
    // the same Ironic-compatible suites with the placement scheduler (every node a resource
    // provider, every allocation a consumer): the bare-metal API answers as before
    process.stdout.write('\n[test] the Ironic-compatible suites again, with BAREMETAL_SCHEDULER=placement\n');
    const files = readdirSync(join(root, 'test/integration/baremetal'))
      .filter((f) => f.endsWith('.test.ts') && !['placement.test.ts', 'migration.test.ts'].includes(f))
      .map((f) => `test/integration/baremetal/${f}`);
    files.push('test/integration/clients/baremetal.test.ts', 'test/integration/clients/openstacksdk.test.ts');
    const p = await run(join(root, 'node_modules/.bin/vitest'), ['run', '--project', 'integration', ...files], {
      env: { ...process.env, FORCE_COLOR: '0', BAREMETAL_SCHEDULER: 'placement' },
    });
    const pc = counts(p.out);
    if (!pc) problems.push(`vitest (placement scheduler) exited ${p.code} without a summary`);
    else {
      passed += pc.passed;
      failed += pc.failed;
    }
    if (p.code !== 0 && (!pc || pc.failed === 0)) problems.push(`vitest (placement scheduler) exited with ${p.code}`);
  }
}

if (only !== 'vitest') {
  const runner = join(sharedDir(), 'conformance', 'run');
  const files = readFileSync(join(root, 'conformance', 'passing.txt'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const absent = ['gabbi', 'conformance-suite'].map((id) => optionalPackage(id)).filter((p) => !p.installed);
  if (absent.length) {
    const what = absent.map(missingName).join(', ');
    process.stdout.write(`\n[conformance] ${strict ? 'FAILED' : 'skipped'}: needs ${what}\n`);
    if (strict) problems.push(`conformance needs ${what} (${absent.map(installHint).join('; ')}) and CI is set`);
  } else if (files.length) {
    process.stdout.write(`\n[conformance] ${files.length} files from conformance/passing.txt\n`);
    const serverCmd = `cd ${root} && exec node_modules/.bin/tsx local/start.ts --fresh --containers 2 --placement-port {port} --baremetal-port 0 --no-dashboard --maintenance-interval 0`;
    const argv = ['--server-cmd', serverCmd, '--gabbits', join(sharedDir(), 'conformance', 'gabbits'), '--jobs', process.env.CONFORMANCE_JOBS ?? '2'];
    for (const f of files) argv.push('--only', f);
    const r = await run('/usr/bin/python3', [runner, ...argv]);
    const c = counts(r.out);
    if (!c) problems.push(`conformance runner exited ${r.code} without a summary`);
    else {
      passed += c.passed;
      failed += c.failed;
    }
  }
}

if (missing.length && !strict) {
  process.stdout.write('\n[optional] skipped, with what to install to run them:\n');
  for (const m of missing) process.stdout.write(`  - ${m.tests}: ${installHint(m)}\n`);
}
for (const p of problems) process.stdout.write(`[test] ${p}\n`);
if (problems.length) failed += problems.length;
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(failed ? 1 : 0);
