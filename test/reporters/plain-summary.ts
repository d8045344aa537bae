/**
 * Prints the line CI reads after vitest's own summary: `N passed, N failed, N skipped`,
 * after the suites skipped for a missing optional package (test/optional.ts names
 * them `… [skipped: needs <package>]`), one line each.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class PlainSummary implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const needs = new Set<string>();
    for (const m of modules) {
      for (const suite of m.children.allSuites())
        if (suite.name.includes('[skipped: needs ')) needs.add(`${m.moduleId.split('/test/').pop()}: ${suite.name}`);
      for (const t of m.children.allTests()) {
        const s = t.result().state;
        if (s === 'passed') passed++;
        else if (s === 'failed') failed++;
        else skipped++;
      }
      // a file that failed to load counts as a failure
      if (m.state() === 'failed' && ![...m.children.allTests()].some((t) => t.result().state === 'failed')) failed++;
    }
    failed += errors.length;
    for (const n of needs) process.stdout.write(`\nskipped test/${n}`);
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
