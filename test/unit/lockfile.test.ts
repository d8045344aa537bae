import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript module without declarations
import { missingEntries } from '../../scripts/check-lockfile.mjs';

const read = (f: string) => JSON.parse(readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8'));

describe('the lock check (scripts/check-lockfile.mjs)', () => {
  it('holds for the repository: npm ci accepts package-lock.json', () => {
    expect(missingEntries(read('package.json'), read('package-lock.json'))).toEqual([]);
  });

  it("finds an optional platform package the lock lacks (the lock npm ci refused: Biome's other platforms)", () => {
    const lock = read('package-lock.json');
    delete lock.packages['node_modules/@biomejs/cli-darwin-arm64'];
    expect(missingEntries(read('package.json'), lock)).toEqual([
      { from: 'node_modules/@biomejs/biome', name: '@biomejs/cli-darwin-arm64', kind: 'optional' },
    ]);
  });

  it('resolves the way Node does: a nested copy first, then up the path; optional peers may be absent', () => {
    const pkg = { dependencies: { a: '1' }, devDependencies: { d: '1' } };
    const lock = {
      packages: {
        '': {},
        'node_modules/a': { dependencies: { b: '2', c: '1' }, peerDependencies: { p: '1', q: '1' }, peerDependenciesMeta: { q: { optional: true } } },
        'node_modules/a/node_modules/b': { dependencies: { c: '1' } },
        'node_modules/c': {},
      },
    };
    expect(missingEntries(pkg, lock)).toEqual([
      { from: '(root)', name: 'd', kind: 'dev' },
      { from: 'node_modules/a', name: 'p', kind: 'peer' },
    ]);
  });
});
