import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';

describe("the run's scratch directory (test/setup/tmpdir.ts)", () => {
  it('gives every test the run’s own temporary directory, so what tests leave is removed with it', () => {
    expect(process.env.BERTH_TEST_TMPDIR).toBeDefined();
    expect(tmpdir()).toBe(process.env.BERTH_TEST_TMPDIR);
    expect(basename(tmpdir())).toMatch(/^berth-test-/);
  });

  it('puts a synthesized CDK app inside it (those were 20+ MB each, left in /tmp)', () => {
    const app = new App();
    new Stack(app, 'Scratch');
    const out = app.synth().directory;
    expect(existsSync(out)).toBe(true);
    expect(dirname(out)).toBe(tmpdir());
  });
});
