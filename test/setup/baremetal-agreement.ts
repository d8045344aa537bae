/**
 * After every test of a file that started the bare-metal harness: its executions
 * settle, then a node, its resource provider and its allocations must agree
 * (test/integration/baremetal/agreement.ts), under either scheduler.
 */
import { afterEach, expect, inject } from 'vitest';
import { activeBaremetal } from '../integration/baremetal/harness.js';
import { disagreements, scanTable } from '../integration/baremetal/agreement.js';

afterEach(async () => {
  const table = activeBaremetal.table;
  if (!table) return;
  // the test's own API, or the local state-machine runner every bare-metal server uses
  if (activeBaremetal.api) await activeBaremetal.api.settle();
  else await (await import('../../local/state-machines.js')).localRunner().idle();
  const { config } = await import('../../functions/config.js');
  expect(disagreements(await scanTable(inject('ddbEndpoint'), table), config().baremetal.scheduler), `table ${table}`).toEqual([]);
});
