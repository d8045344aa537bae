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
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : n < 0 ? '-inf' : 'nan';
  if (Number.isInteger(n)) return String(n);
  // float repr: the shortest round-trip digits (as JS), scientific below 1e-4 with a
  // two-digit exponent ('1.5e-07')
  const [mantissa, e] = n.toExponential().split('e') as [string, string];
  const exp = Number(e);
  if (exp < -4) return `${mantissa}e-${String(-exp).padStart(2, '0')}`;
  return String(n);
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

const cpLen = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** str.splitlines(keepends=True) */
function splitLines(s: string): string[] {
  return s.match(/[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029])|[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+$/g) ?? [];
}

/**
 * pprint.pformat(v, width) of Python 3 (sort_dicts=True, indent=1, compact=False): the
 * repr when it fits, else dicts and lists one item per line and long strings split at
 * whitespace, exactly as CPython's PrettyPrinter lays them out.
 */
export function pyPformat(v: unknown, width = 80): string {
  const out: string[] = [];
  const format = (obj: unknown, indent: number, allowance: number, level: number): void => {
    const rep = pyRepr(obj, true);
    if (cpLen(rep) > width - indent - allowance) {
      if (Array.isArray(obj)) {
        list(obj, indent, allowance, level + 1);
        return;
      }
      if (obj && typeof obj === 'object') {
        dict(obj as Record<string, unknown>, indent, allowance, level + 1);
        return;
      }
      if (typeof obj === 'string') {
        str(obj, rep, indent, allowance, level + 1);
        return;
      }
    }
    out.push(rep);
  };
  const dict = (obj: Record<string, unknown>, indent: number, allowance: number, level: number): void => {
    out.push('{');
    const keys = Object.keys(obj).sort();
    const inner = indent + 1;
    keys.forEach((k, i) => {
      const last = i === keys.length - 1;
      const rep = pyStr(k);
      out.push(rep, ': ');
      format(obj[k], inner + cpLen(rep) + 2, last ? allowance + 1 : 1, level);
      if (!last) out.push(',\n' + ' '.repeat(inner));
    });
    out.push('}');
  };
  const list = (items: unknown[], indent: number, allowance: number, level: number): void => {
    out.push('[');
    const inner = indent + 1;
    items.forEach((x, i) => {
      if (i > 0) out.push(',\n' + ' '.repeat(inner));
      format(x, inner, i === items.length - 1 ? allowance + 1 : 1, level);
    });
    out.push(']');
  };
  const str = (s: string, whole: string, indent: number, allowance: number, level: number): void => {
    if (s === '') return void out.push(whole);
    const lines = splitLines(s);
    if (level === 1) {
      indent += 1;
      allowance += 1;
    }
    const maxWidth = width - indent;
    let maxWidth1 = maxWidth;
    const chunks: string[] = [];
    for (const [i, line] of lines.entries()) {
      const lastLine = i === lines.length - 1;
      if (lastLine) maxWidth1 -= allowance;
      const rep = pyStr(line);
      if (cpLen(rep) <= maxWidth1) {
        chunks.push(rep);
        continue;
      }
      const parts = (line.match(/\S*\s*/g) ?? []).filter((p) => p !== '');
      let maxWidth2 = maxWidth;
      let current = '';
      parts.forEach((part, j) => {
        const candidate = current + part;
        if (j === parts.length - 1 && lastLine) maxWidth2 -= allowance;
        if (cpLen(pyStr(candidate)) > maxWidth2) {
          if (current) chunks.push(pyStr(current));
          current = part;
        } else current = candidate;
      });
      if (current) chunks.push(pyStr(current));
    }
    if (chunks.length === 1) return void out.push(whole);
    if (level === 1) out.push('(');
    out.push(chunks.join('\n' + ' '.repeat(indent)));
    if (level === 1) out.push(')');
  };
  format(v, 0, 0, 0);
  return out.join('');
}
