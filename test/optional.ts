/**
 * Tests that need an optional system package (scripts/optional-packages.mjs lists
 * them): `const kc = needs('keystone'); kc.describe('…', () => { … })`. Installed: an
 * ordinary describe. Missing: skipped, its name saying which package to install
 * (`npm test` lists them at the end) — or, when CI is set, one failing test saying
 * so, because in CI nothing may be skipped silently. Hooks outside the describe
 * check `available` first (they would otherwise start what is not there).
 */
import { describe, it } from 'vitest';
import { installHint, missingName, optionalPackage, strictCi } from '../scripts/optional-packages.mjs';

export interface Needs {
  available: boolean;
  /** what is missing, for messages ('' when available) */
  missing: string;
  describe(name: string, fn: () => void): void;
}

export function needs(...ids: string[]): Needs {
  const missing = ids.map((id) => optionalPackage(id)).filter((p) => !p.installed);
  const what = missing.map(missingName).join(', ');
  return {
    available: missing.length === 0,
    missing: what,
    describe(name, fn) {
      if (!missing.length) return void describe(name, fn);
      if (strictCi()) {
        describe(name, () => {
          it(`needs ${what}`, () => {
            throw new Error(`${what} not installed (${missing.map(installHint).join('; ')}); with CI set a missing optional package is a failure`);
          });
        });
        return;
      }
      describe.skip(`${name} [skipped: needs ${what}]`, fn);
    },
  };
}
