/**
 * Provider records keep one wide hidden class (forest.ts WIDEST_SHAPE): a record made
 * later, whatever its fields hold, shares the class of the records decoded from an image
 * and a delta, so it cannot deprecate theirs (V8 would migrate each of a million records
 * on its next access: 3 s on a fresh process's first answer after a delta image). V8's
 * own %HaveSameMap says so, in a process of its own with --allow-natives-syntax.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../fixtures/record-shape.ts', import.meta.url));

describe('provider records in V8', () => {
  it('share one hidden class that no later record widens: decoded from an image, put from a delta, and made anew', () => {
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', SCRIPT], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ first: true, last: true, records: 60 });
  });
});
