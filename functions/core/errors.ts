/**
 * The two shapes of failure, used by every layer:
 *  - thrown: a Problem (an answer: HTTP status, detail and, for Placement, an error
 *    code, plus any headers the answer carries). Every API error is one: each API's
 *    own kinds (PlacementError, IronicError, WebobError) extend it, and each API's
 *    framework renders any Problem in its own error format. The core never imports
 *    HTTP code.
 *  - returned: an expected outcome the caller decides on, always `{ error: '<what>' }`
 *    plus details (a failed condition, a lost race, a duplicate name); success is
 *    `{ ok: true, ... }` or the value itself. No bare strings, no other tag names.
 */
export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly detail: string = '',
    readonly code?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail || `HTTP ${status}`);
  }
}

/**
 * What a caller is told about a failure nobody expected (a 500's text, an allocation's or
 * a node's last_error): only that it happened and under which request or execution id
 * the service logged the detail. Never the error's own text: an AWS error names the
 * account, the role ARN and the table.
 */
export function internalErrorText(kind: 'Request' | 'Execution', id: string): string {
  return `An unexpected error occurred. ${kind} id: ${id}`;
}

export const bad = (detail: string, code?: string) => new Problem(400, detail, code);

/** A returned failure: `{ error: E }` with whatever details E carries. */
export type Failure<E extends string = string> = { readonly error: E };

export function isFailure(x: unknown): x is Failure {
  return typeof x === 'object' && x !== null && typeof (x as { error?: unknown }).error === 'string';
}
