/**
 * One temporary directory for the whole vitest run, removed at its end. Tests, the CDK
 * apps they synthesize (`cdk.out*`: 20+ MB each), the CLIs and reference servers they
 * start all take their scratch space from os.tmpdir(), which reads TMPDIR: set here in
 * the main process before any worker or child starts, so everything they leave goes
 * with the run instead of piling up in /tmp (a developer's repeated runs once filled a
 * 250 GB disk). Both projects list this setup; the first one in creates the directory,
 * the last one out removes it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REFS = 'BERTH_TEST_TMP_REFS';

export default function setup() {
  const refs = Number(process.env[REFS] ?? 0);
  const outer = process.env.TMPDIR;
  let dir = process.env.BERTH_TEST_TMPDIR;
  if (refs === 0 || !dir) {
    dir = mkdtempSync(join(tmpdir(), 'berth-test-'));
    process.env.BERTH_TEST_TMPDIR = dir;
    process.env.TMPDIR = dir;
  }
  process.env[REFS] = String(refs + 1);
  return () => {
    const left = Number(process.env[REFS]) - 1;
    process.env[REFS] = String(left);
    if (left > 0) return;
    rmSync(dir, { recursive: true, force: true });
    if (outer === undefined || outer === dir) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    delete process.env.BERTH_TEST_TMPDIR;
  };
}
