import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: ['default', './test/reporters/plain-summary.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // projects do not inherit the root's timeouts
          testTimeout: 60_000,
          hookTimeout: 120_000,
          setupFiles: ['test/setup/env.ts'],
          // scratch space of the run (CDK outdirs, CLI homes), removed at its end
          globalSetup: ['test/setup/tmpdir.ts'],
          // unit first, then integration (projects with different maxWorkers need distinct groups)
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          // test/fuzz: property-based HTTP fuzzing of both APIs, on the same DynamoDB Local;
          // `npm test` runs a bounded fixed-seed pass, `npm run fuzz` a longer random one
          include: ['test/integration/**/*.test.ts', 'test/fuzz/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // after every test of a bare-metal file: node, provider and allocations agree
          setupFiles: ['test/setup/env.ts', 'test/setup/baremetal-agreement.ts'],
          globalSetup: ['test/setup/tmpdir.ts', 'test/integration/global-ddb.ts'],
          // files share one DynamoDB Local (one table each); keep the 2-core machine responsive
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
