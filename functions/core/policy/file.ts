/**
 * Operators' policy overrides: a policy file (JSON, or YAML limited to
 * `"rule": "check"` lines, as oslo.policy's sample files are) and a JSON object of
 * rules, the latter applied last. Pure: the caller reads the file.
 */
/** Parse a policy file: JSON, or YAML limited to `"rule": "check"` lines. */
export function parsePolicyFile(text: string): Record<string, string> {
  const t = text.trim();
  if (t.startsWith('{')) return JSON.parse(t) as Record<string, string>;
  const out: Record<string, string> = {};
  for (const raw of t.split('\n')) {
    const line = raw.replace(/^\s+|\s+$/g, '');
    if (!line || line.startsWith('#')) continue;
    const m = /^(["']?)([^"']+)\1\s*:\s*(["']?)(.*)\3\s*$/.exec(line);
    if (!m) throw new Error(`cannot parse policy line: ${line}`);
    out[m[2]!] = m[4]!;
  }
  return out;
}

/** The rules of the file text and then of the JSON overrides, merged. */
export function ruleOverrides(fileText: string | undefined, json: string | undefined): Record<string, string> {
  return { ...(fileText !== undefined ? parsePolicyFile(fileText) : {}), ...(json ? (JSON.parse(json) as Record<string, string>) : {}) };
}
