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

/** the TMPDIR the run started with, kept by whichever setup created the directory */
const OUTER = 'BERTH_TEST_TMP_OUTER';

export default function setup() {
  const refs = Number(process.env[REFS] ?? 0);
  if (refs === 0) {
    if (process.env.TMPDIR !== undefined) process.env[OUTER] = process.env.TMPDIR;
    process.env.BERTH_TEST_TMPDIR = mkdtempSync(join(tmpdir(), 'berth-test-'));
    process.env.TMPDIR = process.env.BERTH_TEST_TMPDIR;
  }
  process.env[REFS] = String(refs + 1);
  return () => {
    const left = Number(process.env[REFS]) - 1;
    process.env[REFS] = String(left);
    if (left > 0) return;
    rmSync(process.env.BERTH_TEST_TMPDIR!, { recursive: true, force: true });
    if (process.env[OUTER] === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = process.env[OUTER];
    for (const v of [OUTER, REFS, 'BERTH_TEST_TMPDIR']) delete process.env[v];
  };
}
