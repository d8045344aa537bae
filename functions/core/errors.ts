/**
 * The two shapes of failure, used by every layer:
 *  - thrown: a Problem (an answer: HTTP status, detail and, for Placement, an error
 *    code) or an API's own subclass-like error (IronicError); each API's framework
 *    renders it in its own error format. The core never imports HTTP code.
 *  - returned: an expected outcome the caller decides on, always `{ error: '<what>' }`
 *    plus details (a failed condition, a lost race, a duplicate name); success is
 *    `{ ok: true, ... }` or the value itself. No bare strings, no other tag names.
 */
export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly code?: string,
  ) {
    super(detail);
  }
}

export const bad = (detail: string, code?: string) => new Problem(400, detail, code);

/** A returned failure: `{ error: E }` with whatever details E carries. */
export type Failure<E extends string = string> = { readonly error: E };

export function isFailure(x: unknown): x is Failure {
  return typeof x === 'object' && x !== null && typeof (x as { error?: unknown }).error === 'string';
}
