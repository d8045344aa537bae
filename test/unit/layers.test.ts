import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript module without declarations
import { ACYCLIC, checkFile, checkRepository, circles, FENCES } from '../../scripts/check-layers.mjs';

describe('the import rule (scripts/check-layers.mjs)', () => {
  it('holds for the repository', () => {
    expect(checkRepository()).toEqual([]);
  });

  it('refuses imports that point the wrong way', () => {
    const whys = (file: string, text: string) => checkFile(file, text).map((p: { why: string }) => p.why);
    expect(whys('functions/store/placement/x.ts', "import { a } from '../../placement/framework/app.js';")).toEqual([
      'store must not import placement',
    ]);
    expect(whys('functions/core/placement/x.ts', "import { a } from '../../store/ddb/tx.js';")).toEqual(['core must not import store']);
    expect(whys('functions/conductor/x.ts', "const v = await import('../baremetal/views.js');")).toEqual(['conductor must not import baremetal']);
    expect(whys('functions/http/x.ts', "export { b } from '../conductor/nodes.js';")).toEqual(['http must not import conductor']);
    expect(whys('functions/placement/x.ts', "import { serve } from '../../local/apis.js';")).toEqual(['functions/ must not import local/']);
    expect(whys('functions/baremetal/x.ts', "import { h } from '../../test/integration/harness.js';")).toEqual(['functions/ must not import test/']);
  });

  it('joins the two APIs in the bridge alone: Placement imports nothing of bare metal, bare metal only the bridge', () => {
    const whys = (file: string, text: string) => checkFile(file, text).map((p: { why: string }) => p.why);
    const only = 'only functions/bridge/ joins the two APIs';
    expect(whys('functions/store/placement/x.ts', "import { S } from '../../core/baremetal/states.js';")).toEqual([
      `placement must not import baremetal: ${only}`,
    ]);
    expect(whys('functions/core/placement/x.ts', "import { s } from '../baremetal/records.js';")).toEqual([
      `placement must not import baremetal: ${only}`,
    ]);
    expect(whys('functions/usecases/placement/x.ts', "import type { N } from '../../store/baremetal/nodes.js';")).toEqual([
      `placement must not import baremetal: ${only}`,
    ]);
    expect(whys('functions/placement/x.ts', "import { scheduler } from '../bridge/scheduler.js';")).toEqual([
      `placement must not import bridge: ${only}`,
    ]);
    expect(whys('functions/conductor/x.ts', "import { snapshot } from '../store/placement/snapshot.js';")).toEqual([
      `baremetal must not import placement: ${only} (bare metal reaches Placement through the bridge)`,
    ]);
    expect(whys('schemas/baremetal/x.ts', "import { T } from '../../functions/core/placement/standard.js';")).toEqual([
      `baremetal must not import placement: ${only} (bare metal reaches Placement through the bridge)`,
    ]);
    // the bridge: both APIs' stores and cores; the conductor reaches it; its pure part stays pure
    expect(
      whys('functions/bridge/x.ts', "import { K } from '../store/placement/keys.js';\nimport { BK } from '../store/baremetal/keys.js';"),
    ).toEqual([]);
    expect(whys('functions/conductor/x.ts', "import { scheduler } from '../bridge/scheduler.js';")).toEqual([]);
    expect(whys('functions/bridge/shape.ts', "import { K } from '../store/placement/keys.js';")).toEqual(['bridge-core must not import store']);
    expect(whys('functions/store/baremetal/x.ts', "const { s } = await import('../../bridge/scheduler.js');")).toEqual([
      'store must not import bridge',
    ]);
    // shared modules (no wing) are anyone's
    expect(
      whys(
        'functions/store/baremetal/x.ts',
        "import { metaKey } from '../ddb/keys.js';\nimport type { ChangeSpec } from '../../core/feed/change.js';",
      ),
    ).toEqual([]);
  });

  it("keeps Placement's use cases between its handlers and its store", () => {
    const whys = (file: string, text: string) => checkFile(file, text).map((p: { why: string }) => p.why);
    expect(whys('functions/placement/allocations.ts', "import { claim } from '../usecases/placement/claim.js';")).toEqual([]);
    expect(
      whys(
        'functions/usecases/placement/claim.ts',
        "import { readClaimState } from '../../store/placement/claims.js';\nimport { planAllocations } from '../../core/placement/claim.js';",
      ),
    ).toEqual([]);
    expect(whys('functions/usecases/placement/claim.ts', "import { conflict } from '../../placement/framework/errors.js';")).toEqual([
      'usecases must not import placement',
    ]);
    expect(whys('functions/store/placement/x.ts', "import { claim } from '../../usecases/placement/claim.js';")).toEqual([
      'store must not import usecases',
    ]);
    expect(whys('functions/core/placement/x.ts', "import { claim } from '../../usecases/placement/claim.js';")).toEqual([
      'core must not import usecases',
    ]);
  });

  it('keeps the AWS SDK in the store, the executor and the authorizer', () => {
    const sdk = "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';";
    expect(checkFile('functions/store/ddb/client.ts', sdk)).toEqual([]);
    expect(checkFile('functions/conductor/executor.ts', "import { SFNClient } from '@aws-sdk/client-sfn';")).toEqual([]);
    expect(checkFile('functions/conductor/nodes.ts', "import { SFNClient } from '@aws-sdk/client-sfn';")).toHaveLength(1);
    expect(checkFile('functions/placement/traits.ts', sdk)).toHaveLength(1);
    // the stream processor's EventBridge publisher; the rest of the processor goes through the store
    expect(checkFile('functions/feed/eventbridge.ts', "import { EventBridgeClient } from '@aws-sdk/client-eventbridge';")).toEqual([]);
    expect(checkFile('functions/feed/processor.ts', "import { unmarshall } from '@aws-sdk/util-dynamodb';")).toHaveLength(1);
  });

  it('keeps the stream processor (functions/feed/) on the store and core, off the APIs', () => {
    const whys = (text: string) => checkFile('functions/feed/processor.ts', text).map((p: { why: string }) => p.why);
    expect(whys("import { applyToHistory } from '../store/history/history.js';\nimport { eventOf } from '../core/feed/events.js';")).toEqual([]);
    expect(whys("import { nodes } from '../conductor/nodes.js';")).toEqual(['feed must not import conductor']);
    expect(whys("import { h } from '../placement/traits.js';")).toEqual(['feed must not import placement']);
  });

  it('allows what the layers may use', () => {
    expect(
      checkFile(
        'functions/baremetal/nodes.ts',
        "import { createNode } from '../conductor/nodes.js';\nimport { S } from '../../schemas/baremetal/nodes.js';",
      ),
    ).toEqual([]);
    expect(
      checkFile('functions/store/placement/x.ts', "import { config } from '../../config.js';\nimport { log } from '../../observability/log.js';"),
    ).toEqual([]);
    // the config module's parts (functions/config/) are config too: anyone's, and they import nothing else
    expect(checkFile('functions/store/placement/x.ts', "import type { Config } from '../../config/settings.js';")).toEqual([]);
    expect(checkFile('functions/config/parse.ts', "import { log } from '../observability/log.js';").map((p: { why: string }) => p.why)).toEqual([
      'config must not import observability',
    ]);
  });

  it("keeps the operators' CLI off the local runtime, the bench and the measuring wing (issue 36)", () => {
    const whys = (text: string) => checkFile('cli/load.ts', text).map((p: { why: string }) => p.why);
    const why = "the operators' CLI runs against AWS (only the in-process APIs of local/apis.ts are its)";
    expect(whys("import { meterBatchWrites } from './batch-write-units.js';")).toEqual([]);
    expect(whys("import { itemSize } from '../functions/store/ddb/units.js';\nimport { commandLine } from '../scripts/args.js';")).toEqual([]);
    expect(whys("import { totals } from '../measure/ledger.js';")).toEqual([`cli/ must not import measure/: ${why}`]);
    expect(whys("import { pool } from '../bench/kit.js';")).toEqual([`cli/ must not import bench/: ${why}`]);
    expect(whys("const { startStack } = await import('../local/start.js');")).toEqual([`cli/ must not import local/: ${why}`]);
    // the verify commands serve this table's real handlers in-process
    expect(
      whys("const { servePlacement } = await import('../local/apis.js');\nconst { closeServers } = await import('../local/servers.js');"),
    ).toEqual([]);
    expect(FENCES.map((f: { from: string }) => f.from)).toEqual(['cli/', 'local/']);
  });

  it('lets the local runtime take of the measuring wing only what --ddb-meter runs (issue 36)', () => {
    const whys = (text: string) => checkFile('local/start.ts', text).map((p: { why: string }) => p.why);
    const why =
      'the local runtime takes of measure/ only what --ddb-meter runs (measure/meter/proxy.ts, measure/report.ts), nothing of bench/ or cli/';
    expect(whys("import { startMeterProxy } from '../measure/meter/proxy.js';\nimport { meterSummary } from '../measure/report.js';")).toEqual([]);
    expect(whys("import { keyLoads } from '../measure/ledger.js';")).toEqual([`local/ must not import measure/: ${why}`]);
    expect(whys("const { runAccountant } = await import('../measure/accountant/accountant.js');")).toEqual([
      `local/ must not import measure/: ${why}`,
    ]);
    expect(whys("import { meterBatchWrites } from '../cli/batch-write-units.js';")).toEqual([`local/ must not import cli/: ${why}`]);
    expect(whys("import { pool } from '../bench/kit.js';")).toEqual([`local/ must not import bench/: ${why}`]);
    // the wing may use the runtime: it measures it
    expect(checkFile('measure/meter/proxy.ts', "import { closeServers } from '../../local/servers.js';")).toEqual([]);
    expect(ACYCLIC).toEqual(expect.arrayContaining(['measure/', 'cli/']));
  });

  it('keeps the dashboard to its own modules (served as they are: no build step)', () => {
    const whys = (text: string) => checkFile('dashboard/public/providers.js', text).map((p: { why: string }) => p.why);
    expect(whys("import { el } from './dom.js';")).toEqual([]);
    expect(whys("import { config } from '../../functions/config.js';")).toEqual([
      'the dashboard has no build step: a browser resolves only its own modules (./x.js)',
    ]);
    expect(whys("import { html } from 'lit';")).toEqual(['the dashboard has no build step: a browser resolves only its own modules (./x.js)']);
    expect(whys("import { K } from './../../functions/store/placement/keys.js';")).toEqual(['dashboard must not import store']);
  });

  it('finds import circles, type-only imports included, and nothing in a tree', () => {
    const bench = {
      'bench/run.ts': "import { SCENARIOS } from './scenarios/index.js';",
      'bench/scenarios/index.ts': "import { claims } from './claims.js';",
      'bench/scenarios/claims.ts': "import type { Scenario } from '../run.js';\nimport { pool } from '../kit.js';",
      'bench/kit.ts': "import type { RunningStack } from '../local/start.js';",
    };
    expect(circles(bench)).toEqual([{ file: 'bench/run.ts', why: 'in an import circle with bench/scenarios/claims.ts, bench/scenarios/index.ts' }]);
    expect(circles({ ...bench, 'bench/scenarios/claims.ts': "import type { Scenario } from '../kit.js';" })).toEqual([]);
    expect(circles({ 'dashboard/a.js': "import { b } from './a.js';" })).toEqual([
      { file: 'dashboard/a.js', why: 'in an import circle with itself' },
    ]);
  });

  it("keeps the store's DynamoDB client a leaf, and counts a lazy import in a circle (issue 36: the lock-aware reads)", () => {
    // the circle there was: the client's read middleware loading the intent protocol lazily,
    // the protocol reading through the client
    const before = {
      'functions/store/ddb/client.ts': "const { lockedViews } = await import('./intents.js');",
      'functions/store/ddb/intents.ts': "import { ddbPlain } from './client.js';\nimport { batchGet } from './batch.js';",
      'functions/store/ddb/batch.ts': "import { ddb } from './client.js';",
    };
    expect(ACYCLIC).toContain('functions/');
    expect(circles(before)).toEqual([
      { file: 'functions/store/ddb/batch.ts', why: 'in an import circle with functions/store/ddb/client.ts, functions/store/ddb/intents.ts' },
    ]);
    expect(checkFile('functions/store/ddb/client.ts', before['functions/store/ddb/client.ts']).map((p: { why: string }) => p.why)).toEqual([
      'a leaf: it imports nothing else under functions/store/',
    ]);
    expect(checkFile('functions/store/ddb/client.ts', "import { config } from '../../config.js';")).toEqual([]);
    // the reads above the protocol: no circle
    const after = {
      'functions/store/ddb/client.ts': "import { config } from '../../config.js';",
      'functions/store/ddb/intents/views.ts': "import { ddbPlain } from '../client.js';\nimport { batchGetFrom } from '../batch.js';",
      'functions/store/ddb/batch.ts': "import { ddbDoc } from './client.js';",
      'functions/store/ddb/reads.ts': "import { filterDocumentReads } from './client.js';\nimport { lockedViews } from './intents/views.js';",
    };
    expect(circles(after)).toEqual([]);
  });
});
