/**
 * Least privilege per function, read from the synthesised template: every Placement
 * family's role holds exactly its rules from cdk/lib/permissions.ts (actions, key
 * prefixes as dynamodb:LeadingKeys conditions, index only where used), and the
 * properties that matter hold in the template itself: the candidates function cannot
 * write, the traits function cannot touch consumer items, nothing reaches an index it
 * does not query.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { BerthStack, SchedulerConfigError, validateScheduler } from '../../../cdk/lib/berth-stack.js';
import {
  BAREMETAL_PLACEMENT_ACCESS,
  type AccessRule,
  BAREMETAL_INDEX_KEYS,
  BAREMETAL_ITEM_KEYS,
  BAREMETAL_MARKER_KEYS,
  FEED_WRITE,
  MAINTENANCE_ACCESS,
  PLACEMENT_ACCESS,
  normalise,
} from '../../../cdk/lib/permissions.js';

interface Statement {
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, string[]>>;
  Effect: string;
}

let template: Template;
let stack: BerthStack;
const WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem', 'dynamodb:ConditionCheckItem'];
/** a statement of FEED_WRITE (every writer records its change: cdk/lib/permissions.ts), with exactly its actions */
function isFeed(s: Statement): boolean {
  const k = [...keys(s)].sort();
  const rule = FEED_WRITE.find((r) => JSON.stringify(r.keys) === JSON.stringify(k));
  if (!rule) return false;
  expect([...actions(s)].sort(), JSON.stringify(s)).toEqual(rule.actions);
  return true;
}

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  stack = new BerthStack(app, 'Perm', { identity: { mode: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] } });
  template = Template.fromStack(stack);
}, 120_000);

/** The DynamoDB statements of the role of the function with this description. */
function dynamoStatements(description: string): Statement[] {
  const fns = template.findResources('AWS::Lambda::Function', { Properties: { Description: description } });
  const [fn] = Object.values(fns) as any[];
  if (!fn) throw new Error(`no function ${description}`);
  const role = fn.Properties.Role['Fn::GetAtt'][0] as string;
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p: any) =>
    p.Properties.Roles.some((r: any) => r.Ref === role),
  ) as any[];
  return policies
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[])
    .filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')));
}
const actions = (s: Statement) => [s.Action].flat();
const keys = (s: Statement) => s.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] ?? [];
const indexOf = (s: Statement) => {
  const text = JSON.stringify(s.Resource);
  const m = /\/index\/([^"\\]+)/.exec(text);
  return m ? m[1] : undefined;
};
const matches = (pattern: string, pk: string) => (pattern.endsWith('*') ? pk.startsWith(pattern.slice(0, -1)) : pk === pattern);
/** the statement every request function has: GetItem of the table's layout record (META), nothing else */
const isLayoutRead = (s: Statement) => JSON.stringify(keys(s)) === '["META"]' && JSON.stringify(actions(s)) === '["dynamodb:GetItem"]' && !indexOf(s);

describe('Placement functions: least-privilege table access', () => {
  for (const [family, rules] of Object.entries(PLACEMENT_ACCESS)) {
    it(`${family}: exactly its rules, each bound to its key prefixes`, () => {
      const got = dynamoStatements(`Placement ${family}`);
      const want = normalise(rules);
      expect(got.length).toBe(want.length);
      for (const s of got) {
        expect(s.Effect).toBe('Allow');
        // every DynamoDB statement is conditioned on the partition key: no table-wide grant
        expect(keys(s).length, JSON.stringify(s)).toBeGreaterThan(0);
        expect(JSON.stringify(s.Resource)).not.toContain('*');
        const w = want.find((r) => (r.index ?? undefined) === indexOf(s) && JSON.stringify(r.keys) === JSON.stringify([...keys(s)].sort()));
        expect(w, `unexpected statement ${JSON.stringify(s)}`).toBeDefined();
        expect([...actions(s)].sort()).toEqual(w!.actions);
      }
    });
  }

  it('the allocation-candidates function cannot write anything', () => {
    const st = dynamoStatements('Placement allocation-candidates');
    expect(st.length).toBeGreaterThan(0);
    for (const s of st) for (const a of actions(s)) expect(WRITES).not.toContain(a);
  });

  it('the usages function only reads providers, usage aggregates, the custom classes (their order) and intents (a locked item)', () => {
    for (const s of dynamoStatements('Placement usages')) {
      for (const a of actions(s)) expect(WRITES).not.toContain(a);
      // (META: the table's layout record, read by every request; nothing writes it here)
      for (const k of keys(s)) expect(['RP#*', 'USAGE#*', 'RCS#*', 'INTENT#*', 'META']).toContain(k);
    }
  });

  it('the traits function cannot touch consumer, usage or name items', () => {
    for (const s of dynamoStatements('Placement traits')) {
      // the table's layout record (META), which every request reads: read only
      if (isLayoutRead(s)) continue;
      for (const pk of ['CONS#c', 'USAGE#p', 'RPNAME#n', 'META', 'CONSALLOC#c']) {
        expect(
          keys(s).some((k) => matches(k, pk)),
          `${pk} in ${JSON.stringify(s)}`,
        ).toBe(false);
      }
    }
  });

  it('only claims write consumers and usages; only resource providers write provider names', () => {
    for (const family of Object.keys(PLACEMENT_ACCESS)) {
      const writers = dynamoStatements(`Placement ${family}`).filter((s) => actions(s).some((a) => WRITES.includes(a)));
      const touches = (pk: string) => writers.some((s) => keys(s).some((k) => matches(k, pk)));
      expect(touches('CONS#c'), family).toBe(family === 'allocations' || family === 'reshaper');
      expect(touches('USAGE#p'), family).toBe(family === 'allocations' || family === 'reshaper');
      expect(touches('RPNAME#n'), family).toBe(family === 'resource-providers');
    }
  });

  it('indexes are granted only to the functions that query them, Query only', () => {
    const indexed = new Set<string>();
    for (const family of Object.keys(PLACEMENT_ACCESS)) {
      for (const s of dynamoStatements(`Placement ${family}`)) {
        const idx = indexOf(s);
        if (!idx) continue;
        indexed.add(family);
        expect(actions(s)).toEqual(['dynamodb:Query']);
        expect(idx).toBe('gsi1');
      }
    }
    expect([...indexed].sort()).toEqual(['allocation-candidates', 'allocations', 'reshaper', 'resource-providers', 'traits']);
  });

  it('the root function has no table access at all', () => {
    expect(dynamoStatements('Placement root')).toEqual([]);
  });
});

describe('bare-metal functions: bound to bare-metal items', () => {
  it('every bare-metal family and step touches only bare-metal items, and gsi2 only by Query', () => {
    const fns = Object.values(template.findResources('AWS::Lambda::Function')) as any[];
    const bm = fns.map((f) => String(f.Properties.Description ?? '')).filter((d) => d.startsWith('Bare metal '));
    expect(bm.length).toBeGreaterThanOrEqual(10);
    let withTable = 0;
    for (const d of bm) {
      const st = dynamoStatements(d);
      if (st.length) withTable++;
      // every family serving requests that touch the table reads its layout record (META), and only that
      const layout = st.filter(isLayoutRead);
      expect(layout.length, d).toBe(d.startsWith('Bare metal step') || d === 'Bare metal root' || d === 'Bare metal drivers' ? 0 : 1);
      for (const s of st.filter((x) => !isLayoutRead(x))) {
        expect(JSON.stringify(s.Resource)).not.toContain('*');
        if (indexOf(s)) {
          expect(indexOf(s)).toBe('gsi2');
          expect(actions(s)).toEqual(['dynamodb:Query']);
          expect([...keys(s)].sort()).toEqual([...BAREMETAL_INDEX_KEYS].sort());
        } else if (JSON.stringify(keys(s)) === JSON.stringify(BAREMETAL_MARKER_KEYS)) {
          // transaction markers and fences: PutItem, nothing else
          expect(actions(s)).toEqual(['dynamodb:PutItem']);
        } else if (isFeed(s)) {
          // the change's feed item (and a large description's parts): FEED_WRITE, nothing else
          continue;
        } else {
          expect([...keys(s)].sort()).toEqual([...BAREMETAL_ITEM_KEYS].sort());
        }
        for (const pk of ['RP#x', 'CONS#c', 'USAGE#p#0', 'TRAITS#0', 'RCS#0', 'LOG#1', 'META', 'TX#t'])
          expect(
            keys(s).some((k) => matches(k, pk)),
            `${d} ${pk}`,
          ).toBe(false);
      }
    }
    expect(withTable).toBeGreaterThan(5);
  });

  it('no Placement function can reach a bare-metal item', () => {
    for (const family of Object.keys(PLACEMENT_ACCESS)) {
      for (const s of dynamoStatements(`Placement ${family}`)) {
        for (const pk of ['BMN#n', 'BMA#a', 'BMNNAME#x', 'BMNS#0', 'BMTX#t'])
          expect(
            keys(s).some((k) => matches(k, pk)),
            `${family} ${pk}`,
          ).toBe(false);
      }
    }
  });
});

describe('the maintenance function: its migration rules plus bare-metal orphan recovery', () => {
  it('every statement is a MAINTENANCE_ACCESS rule or bound to bare-metal items', () => {
    const st = dynamoStatements('Scheduled maintenance: orphan recovery, incomplete-consumer migration');
    const want = normalise(MAINTENANCE_ACCESS);
    let placement = 0;
    for (const s of st) {
      // the layout migration's Scan: the base table, no key to condition on, nothing else
      if (!keys(s).length && JSON.stringify(actions(s)) === '["dynamodb:Scan"]' && !indexOf(s)) {
        placement++;
        continue;
      }
      expect(keys(s).length, JSON.stringify(s)).toBeGreaterThan(0);
      expect(JSON.stringify(s.Resource)).not.toContain('*');
      const k = [...keys(s)].sort();
      const bm =
        JSON.stringify(k) === JSON.stringify([...BAREMETAL_ITEM_KEYS].sort()) ||
        JSON.stringify(k) === JSON.stringify([...BAREMETAL_INDEX_KEYS].sort()) ||
        JSON.stringify(k) === JSON.stringify([...BAREMETAL_MARKER_KEYS].sort()) ||
        // the feed statements of orphan recovery's writes (its MAINTENANCE_ACCESS has the same rules, merged)
        false;
      if (bm) continue;
      const w = want.find((r) => (r.index ?? undefined) === indexOf(s) && JSON.stringify(r.keys) === JSON.stringify(k));
      expect(w, `unexpected statement ${JSON.stringify(s)}`).toBeDefined();
      expect([...actions(s)].sort()).toEqual(w!.actions);
      placement++;
    }
    expect(placement).toBe(want.length);
  });
});

describe('AWS hardening of the stack', () => {
  it('encrypts the table with a KMS key', () => {
    const [table] = Object.values(template.findResources('AWS::DynamoDB::GlobalTable')) as any[];
    expect(table.Properties.SSESpecification).toMatchObject({ SSEEnabled: true, SSEType: 'KMS' });
  });

  it('throttles every API stage (Placement and bare metal)', () => {
    const stages = Object.values(template.findResources('AWS::ApiGatewayV2::Stage')) as any[];
    expect(stages.length).toBe(2);
    for (const s of stages) {
      expect(s.Properties.DefaultRouteSettings.ThrottlingRateLimit).toBeGreaterThan(0);
      expect(s.Properties.DefaultRouteSettings.ThrottlingBurstLimit).toBeGreaterThan(0);
      expect(s.Properties.AccessLogSettings.Format).not.toMatch(/header|authorization|body/i);
    }
  });

  it('puts no secret in a function environment and never turns event logging on', () => {
    for (const f of Object.values(template.findResources('AWS::Lambda::Function')) as any[]) {
      const vars = f.Properties.Environment?.Variables ?? {};
      for (const k of Object.keys(vars)) {
        if (/PASSWORD|SECRET|TOKEN/i.test(k)) expect(k, f.Properties.Description).toMatch(/_ARN$/);
      }
      expect(vars.POWERTOOLS_LOGGER_LOG_EVENT ?? 'false').toBe('false');
    }
  });
});

describe('-c baremetalScheduler=placement: bare-metal functions get exactly the Placement items they then write', () => {
  let pt: Template;
  beforeAll(() => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const s = new BerthStack(app, 'PermPlacement', {
      identity: { mode: 'jwt', jwtIssuer: 'https://issuer.example.com', jwtAudience: ['berth'] },
      baremetalScheduler: 'placement',
    });
    pt = Template.fromStack(s);
  }, 120_000);

  const fnsOf = (t: Template) => Object.values(t.findResources('AWS::Lambda::Function')) as any[];
  function statementsIn(t: Template, description: string): Statement[] {
    const fn = fnsOf(t).find((f) => f.Properties.Description === description);
    if (!fn) throw new Error(`no function ${description}`);
    const role = fn.Properties.Role['Fn::GetAtt'][0] as string;
    return (Object.values(t.findResources('AWS::IAM::Policy')) as any[])
      .filter((p) => p.Properties.Roles.some((r: any) => r.Ref === role))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[])
      .filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')));
  }
  const isBaremetal = (s: Statement) => {
    const k = JSON.stringify([...keys(s)].sort());
    return [BAREMETAL_ITEM_KEYS, BAREMETAL_INDEX_KEYS, BAREMETAL_MARKER_KEYS].some((b) => JSON.stringify([...b].sort()) === k) || isFeed(s);
  };

  it('each bare-metal family and step: its bare-metal statements plus exactly its BAREMETAL_PLACEMENT_ACCESS rules', () => {
    const all: Array<[string, string, AccessRule[]]> = [
      ...Object.entries(BAREMETAL_PLACEMENT_ACCESS.families).map(([f, r]) => [`Bare metal ${f}`, f, r] as [string, string, AccessRule[]]),
      ...Object.entries(BAREMETAL_PLACEMENT_ACCESS.steps).map(([f, r]) => [`Bare metal step ${f}`, f, r] as [string, string, AccessRule[]]),
    ];
    for (const [description, , rules] of all) {
      // (a family's own read of the layout record is granted in either scheduler mode)
      const family = !description.startsWith('Bare metal step');
      const placementSt = statementsIn(pt, description).filter((s) => !isBaremetal(s) && !(family && isLayoutRead(s)));
      // the feed statements are every writer's (checked by isFeed), whichever rule list brought them
      const want = normalise(rules).filter((r) => !FEED_WRITE.some((f) => JSON.stringify(f.keys) === JSON.stringify(r.keys)));
      expect(placementSt.length, description).toBe(want.length);
      for (const s of placementSt) {
        expect(JSON.stringify(s.Resource)).not.toContain('*');
        const w = want.find((r) => (r.index ?? undefined) === indexOf(s) && JSON.stringify(r.keys) === JSON.stringify([...keys(s)].sort()));
        expect(w, `${description}: unexpected statement ${JSON.stringify(s)}`).toBeDefined();
        expect([...actions(s)].sort()).toEqual(w!.actions);
      }
    }
    // what stays out: the failure step writes only its allocation; nobody writes the forest image,
    // aggregates' first sightings or the scheduler's progress, and nobody reads the legacy index
    expect(statementsIn(pt, 'Bare metal step fail-allocation').filter((s) => !isBaremetal(s))).toEqual([]);
    for (const [description] of all) {
      for (const s of statementsIn(pt, description).filter((x) => !isBaremetal(x))) {
        const writes = actions(s).some((a) => WRITES.includes(a));
        for (const pk of ['IMG#x', 'FOREST', 'AGG#a', 'META'])
          if (writes)
            expect(
              keys(s).some((k) => matches(k, pk)),
              `${description} writes ${pk}`,
            ).toBe(false);
        expect(
          keys(s).some((k) => matches(k, 'LEGACYALLOC#0')),
          `${description} LEGACYALLOC`,
        ).toBe(false);
      }
    }
    // the forest: its snapshot reads for the two steps that hold it, and nobody else
    const readsForest = (d: string) => statementsIn(pt, d).some((s) => indexOf(s) === 'gsi1');
    expect(readsForest('Bare metal step find-candidates')).toBe(true);
    expect(readsForest('Bare metal step reserve-node')).toBe(true);
    expect(readsForest('Bare metal nodes')).toBe(false);
  });

  it('sets BAREMETAL_SCHEDULER=placement on bare-metal, Placement and maintenance functions; the default stack sets it nowhere', () => {
    const described = fnsOf(pt).filter((f) => /^(Bare metal|Placement |Scheduled maintenance)/.test(String(f.Properties.Description ?? '')));
    expect(described.length).toBeGreaterThan(20);
    for (const f of described) expect(f.Properties.Environment?.Variables?.BAREMETAL_SCHEDULER, f.Properties.Description).toBe('placement');
    for (const f of fnsOf(template)) expect(f.Properties.Environment?.Variables?.BAREMETAL_SCHEDULER, f.Properties.Description).toBeUndefined();
  });

  it('an unknown scheduler stops the synth', () => {
    expect(() => validateScheduler('nova')).toThrow(SchedulerConfigError);
    expect(validateScheduler(undefined)).toBe('database');
  });
});
