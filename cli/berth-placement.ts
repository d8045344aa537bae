/**
 * Berth's Placement API for the commands that read it as a client would
 * (verify-placement): a deployed Berth's URL, or this table's Placement handlers — the
 * code Lambda runs — served in this process on a local port, without Lambda's 6 MB
 * answer limit (a list of 100,000 providers is larger). Locally the handlers take
 * Placement's noauth2 identity: the token `admin`.
 */
import { openstackSession, type OpenStackSession } from './openstack-session.js';

export interface BerthSide {
  session: OpenStackSession;
  /** what it is, for messages */
  label: string;
  close(): Promise<void>;
}

export async function berthPlacement(url?: string, token?: string): Promise<BerthSide> {
  if (url) {
    const session = await openstackSession({ serviceType: 'placement', endpoint: url, token });
    return { session, label: session.endpoint, close: async () => {} };
  }
  process.env.MAX_RESPONSE_BYTES ??= '0';
  const { servePlacement } = await import('../local/apis.js');
  const { closeServers } = await import('../local/servers.js');
  const { tableName } = await import('../functions/store/ddb/client.js');
  const server = await servePlacement(0, '127.0.0.1');
  const port = (server.address() as { port: number }).port;
  const session = await openstackSession({ serviceType: 'placement', endpoint: `http://127.0.0.1:${port}`, token: 'admin' });
  return { session, label: `table ${tableName()} (its handlers in this process)`, close: () => closeServers([server]) };
}
