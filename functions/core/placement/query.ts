/**
 * Placement's query-string mini languages (placement/util.py): resources=RC:N,...,
 * required=T1,!T2 / in:T1,T2, member_of=<agg> / in:a,b / !<agg> / !in:a,b, in_tree.
 * Each parser takes the request's microversion rules as flags and raises a 400
 * Problem with Placement's exact wording.
 */
import { bad } from '../errors.js';
import { isUuidLike } from '../compat/uuid.js';

/** util.normalize_resources_qs_param */
export function parseResources(qs: string): Record<string, number> {
  if (qs.trim() === '') {
    throw bad(
      'Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.',
    );
  }
  const result: Record<string, number> = {};
  for (const rt of qs.split(',')) {
    const parts = rt.split(':');
    if (parts.length !== 2) {
      throw bad(`Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: ${rt}.`);
    }
    const [rc, amountStr] = parts as [string, string];
    const t = amountStr.trim();
    if (!/^[+-]?\d+$/.test(t)) {
      throw bad(`Requested resource ${rc} expected positive integer amount. Got: ${amountStr}.`);
    }
    const amount = Number.parseInt(t, 10);
    if (amount < 1) throw bad(`Requested resource ${rc} requires amount >= 1. Got: ${amount}.`);
    result[rc] = amount;
  }
  return result;
}

export interface TraitFilter {
  /** AND of ORs: each inner set needs at least one of its traits */
  required: Set<string>[];
  forbidden: Set<string>;
}

/** util.normalize_traits_qs_param */
export function parseTraitsParam(val: string, allowForbidden: boolean, allowAnyTraits: boolean): TraitFilter {
  if (val.startsWith('in:')) {
    if (!allowAnyTraits) {
      throw bad(`Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: ${val}`);
    }
    const any = new Set(
      val
        .slice(3)
        .split(',')
        .map((s) => s.trim()),
    );
    if ([...any].some((t) => !t)) {
      throw bad(
        `Invalid query string parameters: Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: ${val}`,
      );
    }
    if ([...any].some((t) => t.startsWith('!'))) {
      throw bad(`Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: ${val}`);
    }
    return { required: [any], forbidden: new Set() };
  }
  const all = val.split(',').map((s) => s.trim());
  const forbidden = new Set(all.filter((t) => t.startsWith('!')).map((t) => t.replace(/^!+/, '')));
  if ([...forbidden, ...all].some((t) => !t)) {
    const form = allowForbidden ? 'HW_CPU_X86_VMX,!CUSTOM_MAGIC' : 'HW_CPU_X86_VMX,CUSTOM_MAGIC';
    throw bad(`Invalid query string parameters: Expected 'required' parameter value of the form: ${form}. Got an empty trait in: ${val}`);
  }
  const required = all.filter((t) => !t.startsWith('!')).map((t) => new Set([t]));
  if (forbidden.size && !allowForbidden) {
    throw bad(`Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: ${val}`);
  }
  return { required, forbidden };
}

/** util.normalize_traits_qs_params over every value of required<suffix> */
export function parseTraitsParams(values: string[], allowForbidden: boolean, allowAnyTraits: boolean): TraitFilter {
  const vals = allowAnyTraits ? values : values.slice(-1);
  const out: TraitFilter = { required: [], forbidden: new Set() };
  for (const v of vals) {
    const r = parseTraitsParam(v, allowForbidden, allowAnyTraits);
    out.required.push(...r.required);
    for (const f of r.forbidden) out.forbidden.add(f);
  }
  return out;
}

export interface AggregateFilter {
  /** AND of ORs */
  required: Set<string>[];
  forbidden: Set<string>;
}

/** util.normalize_member_of_qs_param */
export function parseMemberOfParam(value: string): { required: Set<string>; forbidden: Set<string> } {
  if (value.includes(',') && !(value.startsWith('in:') || value.startsWith('!in:'))) {
    throw bad(`Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: ${value}`);
  }
  let required = new Set<string>();
  let forbidden = new Set<string>();
  if (value.startsWith('!in:')) forbidden = new Set(value.slice(4).split(','));
  else if (value.startsWith('!')) forbidden = new Set([value.slice(1)]);
  else if (value.startsWith('in:')) required = new Set(value.slice(3).split(','));
  else required = new Set([value]);
  for (const agg of [...required, ...forbidden]) {
    if (!isUuidLike(agg)) {
      throw bad(`Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: ${agg}`);
    }
  }
  return { required, forbidden };
}

/** util.normalize_member_of_qs_params over every value of member_of<suffix> */
export function parseMemberOfParams(values: string[], suffix: string, multi: boolean, allowForbidden: boolean): AggregateFilter {
  if (!multi && values.length > 1) throw bad(`Multiple member_of${suffix} parameters are not supported`);
  const out: AggregateFilter = { required: [], forbidden: new Set() };
  for (const v of values) {
    const { required, forbidden } = parseMemberOfParam(v);
    if (required.size) out.required.push(required);
    if (forbidden.size) {
      if (!allowForbidden) throw bad(`Forbidden member_of${suffix} parameters are not supported in the specified microversion`);
      for (const f of forbidden) out.forbidden.add(f);
    }
  }
  return out;
}

/** util.normalize_in_tree_qs_params */
export function parseInTree(value: string): string {
  const ret = value.trim();
  if (!isUuidLike(ret)) {
    throw bad(`Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: ${value}`);
  }
  return ret;
}
