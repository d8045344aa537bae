/**
 * A problem the domain core reports (bad query, conflict, ...). It carries an HTTP
 * status and, for Placement, an error code; each API's framework renders it in its
 * own error format. The core never imports HTTP code.
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
