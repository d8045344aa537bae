/**
 * Who made a DynamoDB call, on the wire: the local containers (./container.ts) name the
 * container, the request and its type in an `x-berth-acct` header on every call their SDK
 * sends, and the metering proxy (measure/meter/) reads it back into its ledger. Also the
 * other headers a caller and a local container exchange about a request (its id, type,
 * CPU time, log bytes). Pure apart from the SDK hook (attributeCalls).
 */

/** which request a DynamoDB call was made for */
export interface Attribution {
  /** the container (process) that made the call */
  container: string;
  /** the request id (the caller's x-berth-request-id, else one the container made up) */
  request: string;
  /** the request type (the caller's x-berth-label, else "METHOD /route/template"; "maintenance", "startup", ...) */
  label: string;
  /** the Lambda (resource family) that serves it in AWS */
  family: string;
}

/** the header a container's SDK adds to every DynamoDB call */
export const ACCT_HEADER = 'x-berth-acct';
/** calls the simulator itself makes (the fault injector's image reads): forwarded, not billed */
export const SIDE_CALL_HEADER = 'x-berth-side-call';

export function encodeAttribution(a: Attribution): string {
  return encodeURIComponent(JSON.stringify([a.container, a.request, a.label, a.family]));
}

export function decodeAttribution(v: string | string[] | undefined): Attribution | undefined {
  const text = Array.isArray(v) ? v[0] : v;
  if (!text) return undefined;
  try {
    const [container, request, label, family] = JSON.parse(decodeURIComponent(text)) as string[];
    return { container: String(container), request: String(request), label: String(label), family: String(family) };
  } catch {
    return undefined;
  }
}

/** request headers a caller may send a local container, and response headers it answers with (./container.ts) */
export const REQUEST_ID_HEADER = 'x-berth-request-id';
export const LABEL_HEADER = 'x-berth-label';
export const CONTAINER_HEADER = 'x-berth-container';
export const CPU_HEADER = 'x-berth-cpu-us';
export const LOG_HEADER = 'x-berth-log-bytes';

/** the part of an SDK client's middleware stack the hook uses */
interface Stack {
  add(
    mw: (next: (args: { request: unknown }) => Promise<unknown>) => (args: { request: unknown }) => Promise<unknown>,
    opts: { step: 'build'; name: string },
  ): void;
}

/** Name the request every call of an AWS SDK DynamoDB client belongs to (the header above). */
export function attributeCalls(client: { middlewareStack: unknown }, who: () => Attribution): void {
  (client.middlewareStack as Stack).add(
    (next) => async (args) => {
      const req = args.request as { headers?: Record<string, string> };
      if (req?.headers) req.headers[ACCT_HEADER] = encodeAttribution(who());
      return next(args);
    },
    { step: 'build', name: 'berthAttribution' },
  );
}
