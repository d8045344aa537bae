/**
 * The system packages some tests need beyond what the README asks for (Node, Java),
 * in one list that `npm test` (scripts/test-all.mjs) and the tests themselves
 * (test/optional.ts) read. Locally a missing one skips its tests and the run names
 * the package to install; in CI (`CI` set, not "false"/"0") a missing one is a
 * failure, so nothing is silently skipped there (.ci/run installs them all).
 *
 * BERTH_PRETEND_MISSING=python3-keystone,chromium (package names or ids) makes a run
 * behave as on a machine without them: how the skip and the CI failure are tested
 * (test/unit/runner.test.ts) without uninstalling anything.
 */
import { existsSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = '/usr/lib/python3/dist-packages';
const python = (module) => existsSync(join(DIST, module));

/** is `name` an executable on PATH? */
function onPath(name) {
  return (process.env.PATH ?? '').split(delimiter).some((d) => d && existsSync(join(d, name)));
}

/** the shared reference/conformance directory (../shared next to the checkout) */
export function sharedDir() {
  return process.env.BERTH_SHARED ?? resolve(ROOT, '..', 'shared');
}

/**
 * id: what tests name; packages: what to install (Debian); tests: what skips without it.
 * `present` checks what the tests actually run (the executable, the Python module).
 */
export const OPTIONAL_PACKAGES = [
  {
    id: 'keystone',
    packages: ['python3-keystone'],
    tests: 'the Keystone authorizer against a real Keystone (test/integration/auth/keystone.test.ts)',
    present: () => onPath('keystone-manage') && python('keystone'),
  },
  {
    id: 'openstack-cli',
    packages: ['python3-openstackclient', 'python3-osc-placement'],
    tests: 'the openstack CLI with osc-placement (test/integration/clients/osc-placement.test.ts)',
    present: () => existsSync('/usr/bin/openstack') && python('openstackclient') && python('osc_placement'),
  },
  {
    id: 'baremetal-cli',
    packages: ['python3-ironicclient'],
    tests: 'the baremetal CLI (test/integration/clients/baremetal.test.ts)',
    present: () => existsSync('/usr/bin/baremetal') && python('ironicclient'),
  },
  {
    id: 'openstacksdk',
    packages: ['python3-openstacksdk'],
    tests: "openstacksdk's bare-metal calls (test/integration/clients/openstacksdk.test.ts)",
    present: () => existsSync('/usr/bin/python3') && python('openstack/baremetal/v1/_proxy.py'),
  },
  {
    id: 'nova',
    packages: ['python3-nova'],
    tests: "Nova's report client (test/integration/clients/nova-report.test.ts)",
    present: () => python('nova/scheduler/client/report.py'),
  },
  {
    id: 'placement',
    packages: ['python3-placement'],
    tests:
      'the reference Placement the Nova report-client test checks first (test/integration/clients/nova-report.test.ts), and the source and target of the Placement import and export tests (test/integration/migration/)',
    present: () => python('placement/deploy.py'),
  },
  {
    id: 'ironic',
    packages: ['python3-ironic'],
    tests: 'moving in from the real Ironic 21.4: berth import-ironic / verify-ironic (test/integration/cli/import-ironic.test.ts)',
    present: () => existsSync('/usr/bin/python3') && python('ironic/cmd/singleprocess.py'),
  },
  {
    id: 'reference-servers',
    packages: [],
    hint: 'put the shared materials next to the checkout (../shared, with reference/serve-placement.sh and serve-ironic.sh) or point BERTH_SHARED at them',
    tests:
      'moving in from, verifying against and moving out to the real Placement 8.0.0 and Ironic 21.4 (test/integration/migration/, test/integration/cli/import-ironic.test.ts)',
    present: () => ['serve-placement.sh', 'serve-ironic.sh'].every((s) => existsSync(join(sharedDir(), 'reference', s))),
  },
  {
    id: 'chromium',
    packages: ['chromium'],
    tests: 'the dashboard in a headless browser (test/integration/dashboard/dashboard.test.ts)',
    present: () => existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'),
  },
  {
    id: 'gabbi',
    packages: ['python3-gabbi'],
    tests: "Placement's gabbi conformance files (conformance/passing.txt)",
    present: () => python('gabbi'),
  },
  {
    id: 'conformance-suite',
    packages: [],
    hint: 'put the shared materials next to the checkout (../shared, with conformance/run and conformance/gabbits) or point BERTH_SHARED at them',
    tests: "Placement's gabbi conformance files (conformance/passing.txt)",
    present: () => existsSync(join(sharedDir(), 'conformance', 'run')) && existsSync(join(sharedDir(), 'conformance', 'gabbits')),
  },
];

/** CI=true (any value but "", "false", "0"): a missing optional package fails the run */
export function strictCi() {
  const v = (process.env.CI ?? '').toLowerCase();
  return v !== '' && v !== 'false' && v !== '0';
}

function pretended(entry) {
  const hide = (process.env.BERTH_PRETEND_MISSING ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return hide.includes(entry.id) || entry.packages.some((p) => hide.includes(p));
}

/** the entry for `id`, and whether it is there */
export function optionalPackage(id) {
  const entry = OPTIONAL_PACKAGES.find((e) => e.id === id);
  if (!entry) throw new Error(`unknown optional package ${id}`);
  return { ...entry, installed: !pretended(entry) && entry.present() };
}

/** every optional package that is missing on this machine */
export function missingPackages() {
  return OPTIONAL_PACKAGES.map((e) => optionalPackage(e.id)).filter((e) => !e.installed);
}

/** what to tell a person about one missing entry */
export function installHint(entry) {
  return entry.packages.length ? `apt-get install ${entry.packages.join(' ')}` : entry.hint;
}

/** `python3-keystone` or the hint: how a run names what is missing */
export function missingName(entry) {
  return entry.packages.length ? entry.packages.join(' ') : entry.id;
}
