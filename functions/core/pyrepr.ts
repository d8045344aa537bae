/**
 * Python's repr() of JSON values, so validation messages read exactly like the ones
 * Placement (Python jsonschema) and Ironic produce: 'str', True/False/None, 1.5,
 * {'a': 1}, ['x'].
 */

export function pyStr(s: string): string {
  const hasSingle = s.includes("'");
  const hasDouble = s.includes('"');
  const quote = hasSingle && !hasDouble ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20 || cp === 0x7f) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp >= 0x80 && cp < 0xa0) out += '\\x' + cp.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + quote;
}

export function pyNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n);
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : n < 0 ? '-inf' : 'nan';
  const s = String(n);
  return s.includes('e') ? s.replace(/e\+?/, 'e+').replace('e+-', 'e-') : s;
}

export function pyRepr(v: unknown, sortKeys = false): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return pyStr(v);
  if (typeof v === 'number') return pyNumber(v);
  if (Array.isArray(v)) return '[' + v.map((x) => pyRepr(x, sortKeys)).join(', ') + ']';
  if (typeof v === 'object') {
    let keys = Object.keys(v as object);
    if (sortKeys) keys = keys.sort();
    return '{' + keys.map((k) => `${pyStr(k)}: ${pyRepr((v as Record<string, unknown>)[k], sortKeys)}`).join(', ') + '}';
  }
  return String(v);
}

/** pprint.pformat without line wrapping (pformat sorts dict keys). */
export function pyPformat(v: unknown): string {
  return pyRepr(v, true);
}
