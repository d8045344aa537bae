/**
 * What a parsed JSON request document must also satisfy before it is validated:
 *  - well-formed Unicode: JSON's `\uD800` escapes can produce strings with unpaired
 *    surrogates, which have no UTF-8 encoding, so DynamoDB (or any UTF-8 store) cannot
 *    hold them faithfully (Python's json accepts them and upstream then fails in the
 *    database);
 *  - bounded nesting: the schema validator and the handlers recurse over documents
 *    (Python's json raises RecursionError around depth 1000, a 500 upstream).
 * Both APIs refuse such a body with their own 400 "Malformed JSON". Pure.
 */
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Deeper than any request document of either API (Placement's deepest is 5 levels). */
export const MAX_JSON_DEPTH = 64;

/**
 * Keys a JSON document may not use: JSON.parse keeps them as plain keys, but JavaScript
 * does not treat them as data — copying "__proto__" into another object sets its
 * prototype, and an object whose "constructor" is not Object's is not a plain object to
 * the DynamoDB marshaller (which then fails). Both APIs refuse them as bad input.
 */
export const PROTOTYPE_KEYS: readonly string[] = ['__proto__', 'constructor'];
export const prototypeKeyMessage = (k: string) => `the key "${k}" is not allowed`;

/** Why this parsed document is refused, or undefined when it is fine. */
export function jsonDocumentProblem(doc: unknown): string | undefined {
  // iterative walk: the point is to refuse documents too deep to recurse over
  const stack: Array<[unknown, number]> = [[doc, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (LONE.test(v)) return loneSurrogateMessage(v);
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return `the document is nested deeper than ${MAX_JSON_DEPTH} levels`;
    if (Array.isArray(v)) {
      for (const x of v) stack.push([x, depth + 1]);
      continue;
    }
    for (const [k, x] of Object.entries(v)) {
      if (LONE.test(k)) return loneSurrogateMessage(k);
      if (PROTOTYPE_KEYS.includes(k)) return prototypeKeyMessage(k);
      stack.push([x, depth + 1]);
    }
  }
  return undefined;
}

function loneSurrogateMessage(s: string): string {
  const m = LONE.exec(s)!;
  return `unpaired surrogate \\u${m[0].charCodeAt(0).toString(16)} in a string: the text is not valid Unicode`;
}
