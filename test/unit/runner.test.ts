/**
 * `npm test` on a machine without an optional package (scripts/optional-packages.mjs):
 * locally its tests are skipped and the run ends `N passed, 0 failed` naming the
 * package to install; with CI=true the same run fails. The package is hidden with
 * BERTH_PRETEND_MISSING (what a machine without python3-keystone looks like to the
 * run), and the real test file that needs it is run through scripts/test-all.mjs.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { missingPackages, optionalPackage, OPTIONAL_PACKAGES } from '../../scripts/optional-packages.mjs';

const ROOT = join(__dirname, '..', '..');

function npmTest(env: Record<string, string>, ...vitestArgs: string[]) {
  // a clean environment for the inner vitest: none of this worker's VITEST* settings
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'CI' && k !== 'BERTH_PRETEND_MISSING'),
  );
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/test-all.mjs'), '--skip-checks', '--vitest-only', '--', ...vitestArgs], {
    cwd: ROOT,
    env: { ...base, ...env } as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: 170_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

const lastLine = (out: string) =>
  out
    .trim()
    .split('\n')
    .filter((l) => /^\d+ passed, \d+ failed$/.test(l))
    .pop();

describe('the test command on a machine without an optional package', () => {
  it('knows what each optional package is for and how to hide one', () => {
    expect(OPTIONAL_PACKAGES.map((p: { id: string }) => p.id)).toEqual(
      expect.arrayContaining(['keystone', 'openstack-cli', 'baremetal-cli', 'nova', 'placement', 'chromium', 'gabbi']),
    );
    const before = process.env.BERTH_PRETEND_MISSING;
    process.env.BERTH_PRETEND_MISSING = 'python3-keystone,chromium';
    try {
      expect(optionalPackage('keystone').installed).toBe(false);
      expect(missingPackages().map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining(['keystone', 'chromium']));
    } finally {
      if (before === undefined) delete process.env.BERTH_PRETEND_MISSING;
      else process.env.BERTH_PRETEND_MISSING = before;
    }
  });

  it('skips its tests and names the package locally; fails with CI=true', () => {
    const file = 'test/integration/auth/keystone.test.ts';
    const local = npmTest({ BERTH_PRETEND_MISSING: 'python3-keystone' }, file);
    expect(local.code, local.out).toBe(0);
    expect(lastLine(local.out)).toMatch(/^\d+ passed, 0 failed$/);
    expect(local.out).toContain('[skipped: needs python3-keystone]');
    expect(local.out).toMatch(/skipped, with what to install[\s\S]*Keystone[^\n]*apt-get install python3-keystone/);

    const ci = npmTest({ BERTH_PRETEND_MISSING: 'python3-keystone', CI: 'true' }, file);
    expect(ci.code, ci.out).toBe(1);
    expect(lastLine(ci.out)).toMatch(/^\d+ passed, [1-9]\d* failed$/);
    expect(ci.out).toContain('needs python3-keystone');
  }, 340_000);
});
