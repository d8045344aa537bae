/**
 * Python's json.dumps() output (', ' and ': ' separators, ensure_ascii), which is
 * what Ironic's pecan/WSME layer writes — including the JSON text nested inside its
 * error bodies ({"error_message": "{\"faultcode\": ...}"}).
 */

function str(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || c > 0x7e) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

export function pyDumps(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : v > 0 ? 'Infinity' : v < 0 ? '-Infinity' : 'NaN';
  if (typeof v === 'string') return str(v);
  if (Array.isArray(v)) return '[' + v.map((x) => pyDumps(x)).join(', ') + ']';
  if (typeof v === 'object') {
    const parts: string[] = [];
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (x === undefined) continue;
      parts.push(`${str(k)}: ${pyDumps(x)}`);
    }
    return '{' + parts.join(', ') + '}';
  }
  return str(String(v));
}
