/**
 * An oslo.policy-style policy engine: rule strings ("role:admin or role:service",
 * "project_id:%(project_id)s", "rule:name", "@", "!", "not", parentheses), rule
 * defaults with scope types and deprecated rules, and operator overrides. Pure.
 *
 * Where Berth is stricter than oslo.policy, on purpose:
 *  - scope: a domain-scoped or unscoped token never passes a rule registered with
 *    scope types (Berth serves no domain-level API), whether scope is enforced or not;
 *    oslo only refuses it when enforce_scope is on, and reads "unscoped" as "project";
 *  - None: a check whose value comes from the target (`project_id:%(node.owner)s`)
 *    never matches when that value, or the credential it is compared with, is missing
 *    (None). oslo compares str(None) == "None", so a token without a project "owns"
 *    every object without an owner. Literal checks (`project_domain_id:None`) keep
 *    oslo's meaning.
 */
import { scopeOf, type Scope } from './identity.js';

export interface Credentials {
  roles: string[];
  userId?: string;
  projectId?: string;
  /** the domain of a domain-scoped token */
  domainId?: string;
  /** 'all' when the token is system scoped */
  systemScope?: string;
  /** any other credential attribute a rule may test (oslo's creds dict), e.g. project_name, is_admin_project */
  extra?: Record<string, unknown>;
}

export type Target = Record<string, unknown>;

type Node =
  | { t: 'true' }
  | { t: 'false' }
  | { t: 'check'; kind: string; match: string }
  | { t: 'and'; items: Node[] }
  | { t: 'or'; items: Node[] }
  | { t: 'not'; item: Node };

export class PolicyParseError extends Error {}

/** oslo.policy's tokenizer: whitespace-separated, parentheses peeled off token ends. */
function tokenize(s: string): string[] {
  const out: string[] = [];
  for (const tok of s.split(/\s+/).filter(Boolean)) {
    let t = tok;
    while (t.startsWith('(')) {
      out.push('(');
      t = t.slice(1);
    }
    let trail = 0;
    while (t.endsWith(')') && !/%\([^)]*\)$/.test(t)) {
      trail++;
      t = t.slice(0, -1);
    }
    if (t) out.push(t);
    for (let i = 0; i < trail; i++) out.push(')');
  }
  return out;
}

export function parseRule(s: string): Node {
  const text = s.trim();
  if (text === '' || text === '@') return { t: 'true' };
  if (text === '!') return { t: 'false' };
  const toks = tokenize(text);
  let i = 0;
  const peek = () => toks[i];
  const parseOr = (): Node => {
    const items = [parseAnd()];
    while (peek()?.toLowerCase() === 'or') {
      i++;
      items.push(parseAnd());
    }
    return items.length === 1 ? items[0]! : { t: 'or', items };
  };
  const parseAnd = (): Node => {
    const items = [parseNot()];
    while (peek()?.toLowerCase() === 'and') {
      i++;
      items.push(parseNot());
    }
    return items.length === 1 ? items[0]! : { t: 'and', items };
  };
  const parseNot = (): Node => {
    if (peek()?.toLowerCase() === 'not') {
      i++;
      return { t: 'not', item: parseNot() };
    }
    return parseAtom();
  };
  const parseAtom = (): Node => {
    const tok = toks[i++];
    if (tok === undefined) throw new PolicyParseError(`unexpected end of rule ${s}`);
    if (tok === '(') {
      const n = parseOr();
      if (toks[i++] !== ')') throw new PolicyParseError(`missing ) in rule ${s}`);
      return n;
    }
    if (tok === '@') return { t: 'true' };
    if (tok === '!') return { t: 'false' };
    const colon = tok.indexOf(':');
    if (colon < 0) throw new PolicyParseError(`bad check ${tok} in rule ${s}`);
    return { t: 'check', kind: tok.slice(0, colon), match: tok.slice(colon + 1) };
  };
  const n = parseOr();
  if (i !== toks.length) throw new PolicyParseError(`trailing tokens in rule ${s}`);
  return n;
}

export interface RuleDefault {
  name: string;
  check: string;
  /** token scopes this rule accepts; checked when scope enforcement is on (domain and unscoped tokens: always) */
  scopeTypes?: Array<Exclude<Scope, 'none'>>;
  /** the deprecated check OR-ed in while new defaults are not enforced */
  deprecated?: string;
  description?: string;
}

export interface EngineOptions {
  enforceNewDefaults: boolean;
  enforceScope: boolean;
  /** operator overrides: rule name -> check string (a policy.yaml) */
  overrides?: Record<string, string>;
  /** when set, every rule except those listed resolves to '@' (tests' open mode) */
  openExcept?: string[];
}

export class PolicyEngine {
  private readonly rules = new Map<string, RuleDefault>();
  private readonly parsed = new Map<string, Node>();

  constructor(
    defaults: RuleDefault[],
    private readonly opts: EngineOptions,
  ) {
    for (const d of defaults) this.rules.set(d.name, d);
    for (const v of Object.values(opts.overrides ?? {})) parseRule(v); // fail fast
  }

  has(name: string): boolean {
    return this.rules.has(name) || name in (this.opts.overrides ?? {});
  }

  private effective(name: string): string {
    const ov = this.opts.overrides?.[name];
    if (ov !== undefined) return ov;
    if (this.opts.openExcept && !this.opts.openExcept.includes(name)) return '@';
    const d = this.rules.get(name);
    if (!d) return '!';
    if (!this.opts.enforceNewDefaults && d.deprecated) return `(${d.check}) or (${d.deprecated})`;
    return d.check;
  }

  private node(name: string): Node {
    const s = this.effective(name);
    let n = this.parsed.get(s);
    if (!n) {
      n = parseRule(s);
      this.parsed.set(s, n);
    }
    return n;
  }

  /** Does the token's scope satisfy the rule's scope types? (oslo checks those of the registered default, even when overridden) */
  scopeOk(name: string, creds: Credentials): boolean {
    const d = this.rules.get(name);
    if (!d?.scopeTypes?.length) return true;
    const scope = scopeOf(creds);
    // no rule of Berth's is for domains: a domain-scoped or unscoped token is refused
    // even where oslo would only warn (enforce_scope off)
    if (scope === 'domain' || scope === 'none') return (d.scopeTypes as string[]).includes(scope);
    if (!this.opts.enforceScope) return true;
    return d.scopeTypes.includes(scope);
  }

  check(name: string, target: Target, creds: Credentials, depth = 0): boolean {
    if (depth > 20) throw new PolicyParseError(`rule recursion too deep at ${name}`);
    return this.eval(this.node(name), target, creds, depth);
  }

  private eval(n: Node, target: Target, creds: Credentials, depth: number): boolean {
    switch (n.t) {
      case 'true':
        return true;
      case 'false':
        return false;
      case 'and':
        return n.items.every((x) => this.eval(x, target, creds, depth));
      case 'or':
        return n.items.some((x) => this.eval(x, target, creds, depth));
      case 'not':
        return !this.eval(n.item, target, creds, depth);
      case 'check':
        return this.evalCheck(n.kind, n.match, target, creds, depth);
    }
  }

  private evalCheck(kind: string, match: string, target: Target, creds: Credentials, depth: number): boolean {
    if (kind === 'rule') return this.has(match) ? this.check(match, target, creds, depth + 1) : false;
    // oslo: `self.match % target`; a key missing from the target fails the check, and so
    // (Berth, see above) does a value the target has as None
    const want = interpolate(match, target);
    if (want === undefined || want === NONE) return false;
    if (kind === 'role') return creds.roles.some((r) => r.toLowerCase() === want.toLowerCase());
    // GenericCheck: a literal kind ("True:%(x)s", "'Member':%(role)s") compares with the match
    const literal = pythonLiteral(kind);
    if (literal !== undefined) return want === literal;
    // otherwise `match == str(creds[kind])`, any element of a list; a missing credential fails
    const credVal = credValue(kind, creds);
    if (credVal === ABSENT) return false;
    // a credential that is None matches no value taken from the target
    if ((credVal === null || credVal === undefined) && match !== want) return false;
    if (Array.isArray(credVal)) return credVal.some((v) => pyStr(v) === want);
    return pyStr(credVal) === want;
  }
}

const ABSENT = Symbol('absent');

/** oslo's creds dict (context.to_policy_values()): these keys are always there, None when unset. */
function credValue(kind: string, c: Credentials): unknown {
  switch (kind) {
    case 'project_id':
    case 'tenant':
    case 'tenant_id':
      return c.projectId ?? null;
    case 'user_id':
    case 'user':
      return c.userId ?? null;
    case 'system_scope':
      return c.systemScope ?? null;
    case 'domain_id':
      return c.domainId ?? null;
    case 'roles':
      return c.roles;
    default:
      return c.extra && kind in c.extra ? (c.extra[kind] ?? null) : ABSENT;
  }
}

/** Python's str() of a JSON-ish value: None / True / False as Python spells them. */
function pyStr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  return String(v);
}

/** ast.literal_eval(kind) for the literals a check's kind can be; undefined when not a literal. */
function pythonLiteral(kind: string): string | undefined {
  if (kind === 'True' || kind === 'False' || kind === 'None') return kind;
  if (/^-?\d+$/.test(kind)) return String(Number(kind));
  const q = /^(['"])(.*)\1$/.exec(kind);
  return q ? q[2] : undefined;
}

const NONE = Symbol('none');

/**
 * `match % target`: every %(key)s replaced by str(target[key]); undefined when a key is
 * missing, NONE when a key's value is None (null/undefined).
 */
function interpolate(match: string, target: Target): string | undefined | typeof NONE {
  let missing = false;
  let none = false;
  const out = match.replace(/%\(([^)]+)\)s/g, (_m, key: string) => {
    if (!Object.hasOwn(target, key)) {
      missing = true;
      return '';
    }
    const v = target[key];
    if (v === null || v === undefined) none = true;
    return pyStr(v);
  });
  if (missing) return undefined;
  return none ? NONE : out;
}
