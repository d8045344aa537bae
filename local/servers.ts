/** Stopping the local HTTP servers (APIs, dashboard, the containers' front). */
import type { Server } from 'node:http';

/** Close every server, dropping its idle keep-alive connections first so the close does not wait for them. */
export async function closeServers(servers: Iterable<Server>): Promise<void> {
  await Promise.all(
    [...servers].map(
      (s) =>
        new Promise<void>((r) => {
          s.closeAllConnections?.();
          s.close(() => r());
        }),
    ),
  );
}
