import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { S, isActionable, processEvent, provisionProgram } from '../../../functions/core/baremetal/states.js';
import {
  backfillProblems,
  chooseCandidates,
  stillSuitable,
  AllocationFailed,
  type CandidateNode,
} from '../../../functions/core/baremetal/allocations.js';
import { isHostnameSafe, isValidLogicalName } from '../../../functions/core/baremetal/records.js';

const node = (over: Partial<CandidateNode> = {}): CandidateNode => ({
  uuid: over.uuid ?? Math.random().toString(16).slice(2),
  name: null,
  resource_class: 'rc',
  provision_state: S.AVAILABLE,
  maintenance: false,
  power_state: 'power off',
  instance_uuid: null,
  owner: null,
  lessee: null,
  traits: [],
  ...over,
});
const req = (over: Record<string, unknown> = {}) => ({ uuid: 'a', resource_class: 'rc', traits: [], candidate_nodes: [], ...over }) as never;

describe('provision state machine (ironic.common.states)', () => {
  it('walks enroll -> manageable -> available -> active -> available with the right targets', () => {
    let st = processEvent(S.ENROLL, 'manage', null);
    expect(st).toEqual({ state: S.VERIFYING, target: S.MANAGEABLE });
    st = processEvent(st.state, 'done', st.target);
    expect(st).toEqual({ state: S.MANAGEABLE, target: null });
    st = processEvent(st.state, 'provide', st.target);
    expect(st).toEqual({ state: S.CLEANING, target: S.AVAILABLE });
    st = processEvent(st.state, 'done', st.target);
    expect(st).toEqual({ state: S.AVAILABLE, target: null });
    st = processEvent(st.state, 'deploy', st.target);
    expect(st).toEqual({ state: S.DEPLOYING, target: S.ACTIVE });
    st = processEvent(st.state, 'done', st.target);
    expect(st).toEqual({ state: S.ACTIVE, target: null });
    st = processEvent(st.state, 'delete', st.target);
    expect(st).toEqual({ state: S.DELETING, target: S.AVAILABLE });
    st = processEvent(st.state, 'clean', st.target);
    expect(st).toEqual({ state: S.CLEANING, target: S.AVAILABLE });
    expect(processEvent(st.state, 'done', st.target)).toEqual({ state: S.AVAILABLE, target: null });
  });

  it('manual cleaning returns to manageable', () => {
    const st = processEvent(S.MANAGEABLE, 'clean', null, S.MANAGEABLE);
    expect(st).toEqual({ state: S.CLEANING, target: S.MANAGEABLE });
    expect(processEvent(st.state, 'manage', st.target)).toEqual({ state: S.MANAGEABLE, target: null });
  });

  it('refuses events the state does not allow', () => {
    expect(isActionable(S.AVAILABLE, 'provide')).toBe(false);
    expect(isActionable(S.ENROLL, 'deploy')).toBe(false);
    expect(isActionable(S.ACTIVE, 'delete')).toBe(true);
    expect(() => processEvent(S.AVAILABLE, 'provide', null)).toThrow();
  });

  it('every program the API can start ends in a stable state', () => {
    const starts: Array<[string, string]> = [
      ['manage', S.ENROLL],
      ['manage', S.AVAILABLE],
      ['provide', S.MANAGEABLE],
      ['active', S.AVAILABLE],
      ['deleted', S.ACTIVE],
      ['rebuild', S.ACTIVE],
      ['inspect', S.MANAGEABLE],
      ['adopt', S.MANAGEABLE],
      ['rescue', S.ACTIVE],
    ];
    for (const [verb, from] of starts) {
      const event = verb === 'active' ? 'deploy' : verb === 'deleted' ? 'delete' : verb;
      let st = processEvent(from, event, null);
      for (const step of provisionProgram(verb, from)) st = processEvent(st.state, step.event, st.target);
      expect([S.MANAGEABLE, S.AVAILABLE, S.ACTIVE, S.RESCUE], `${verb} from ${from}`).toContain(st.state);
      expect(st.target, `${verb} from ${from}`).toBeNull();
    }
  });
});

describe('names', () => {
  it('follows Ironic: RFC 3986 unreserved characters, hostnames before 1.10', () => {
    expect(isValidLogicalName('node-1.rack_2~x')).toBe(true);
    expect(isValidLogicalName('in valid')).toBe(false);
    expect(isValidLogicalName('a'.repeat(256))).toBe(false);
    expect(isValidLogicalName('')).toBe(false);
    expect(isHostnameSafe('node-1')).toBe(true);
    expect(isHostnameSafe('Node_1')).toBe(false);
  });
});

describe('candidate selection (_candidate_nodes)', () => {
  it('filters by class, state, maintenance, power, association, candidates and owner/lessee', () => {
    const good = node({ uuid: 'good' });
    const all = [
      good,
      node({ resource_class: 'other' }),
      node({ provision_state: S.MANAGEABLE }),
      node({ maintenance: true }),
      node({ power_state: null }),
      node({ instance_uuid: 'x' }),
    ];
    expect(chooseCandidates(all, req()).map((n) => n.uuid)).toEqual(['good']);
    expect(() => chooseCandidates(all, req({ candidate_nodes: ['nope'] }))).toThrow(
      'none of the requested nodes are available and match the resource class rc',
    );
    const owned = node({ uuid: 'owned', owner: 'p1' });
    const leased = node({ uuid: 'leased', lessee: 'p1' });
    expect(
      chooseCandidates([good, owned, leased], req({ owner: 'p1' }))
        .map((n) => n.uuid)
        .sort(),
    ).toEqual(['leased', 'owned']);
  });

  it("fails with Ironic's texts", () => {
    expect(() => chooseCandidates([], req())).toThrow(new AllocationFailed('no available nodes match the resource class rc'));
    expect(() => chooseCandidates([node({ traits: ['CUSTOM_A'] })], req({ traits: ['CUSTOM_B', 'CUSTOM_B', 'CUSTOM_C'] }))).toThrow(
      'no suitable nodes have the requested traits CUSTOM_B, CUSTOM_C',
    );
  });

  it('shuffles (parallel allocations must not try nodes in one order) but puts a node named like the allocation first', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 30 }), fc.nat(), fc.integer({ min: 0, max: 2 ** 31 }), (n, pick, seed) => {
        const nodes = Array.from({ length: n }, (_, i) => node({ uuid: `n${i}`, name: `node-${i}` }));
        let s = seed;
        const random = () => {
          s = (s * 1103515245 + 12345) % 2 ** 31;
          return s / 2 ** 31;
        };
        const target = `node-${pick % n}`;
        const out = chooseCandidates(nodes, req({ name: target }), random);
        expect(out).toHaveLength(n);
        expect(new Set(out.map((x) => x.uuid)).size).toBe(n);
        expect(out[0]!.name).toBe(target);
      }),
    );
    const orders = new Set<string>();
    const nodes = Array.from({ length: 6 }, (_, i) => node({ uuid: `n${i}` }));
    for (let i = 0; i < 50; i++)
      orders.add(
        chooseCandidates(nodes, req())
          .map((x) => x.uuid)
          .join(),
      );
    expect(orders.size).toBeGreaterThan(10);
  });

  it('traits are a subset match, re-checked by stillSuitable', () => {
    const n = node({ traits: ['CUSTOM_A', 'HW_CPU_X86_AVX'] });
    expect(stillSuitable(n, req({ traits: ['CUSTOM_A'] }))).toBe(true);
    expect(stillSuitable(n, req({ traits: ['CUSTOM_A', 'CUSTOM_B'] }))).toBe(false);
    expect(stillSuitable({ ...n, instance_uuid: 'x' }, req())).toBe(false);
  });
});

describe('backfill checks', () => {
  it('lists every mismatch the way _do_backfill_allocation words it', () => {
    const n = node({ uuid: 'n1', provision_state: S.AVAILABLE, traits: ['CUSTOM_A'] });
    expect(backfillProblems(n, { resource_class: 'x', traits: ['CUSTOM_B'], candidate_nodes: ['other'] })).toEqual([
      'Node must be in the "active" state, but the current state is "available"',
      'Resource class rc does not match the requested resource class x',
      "List of traits ['CUSTOM_A'] does not match the requested traits ['CUSTOM_B']",
      "Candidate nodes must be empty or contain the target node, but got ['other']",
    ]);
    expect(backfillProblems({ ...n, provision_state: S.ACTIVE }, { resource_class: 'rc', traits: [], candidate_nodes: [] })).toEqual([]);
  });
});
