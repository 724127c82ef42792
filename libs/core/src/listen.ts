import type { Server } from 'node:net';
import { UsageError } from './errors.js';

/**
 * Starts `server` on `port` (0: any free port) and returns the port it got. A port already in use
 * is the user's to change: a UsageError names it and `setting`, the flag or variable that moves it.
 */
export async function listenOn(
  server: Server,
  options: { port: number; host: string; what: string; setting: string; showHost?: boolean },
): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE') return reject(error);
      const where = options.showHost === false ? '' : ` on ${options.host}`;
      reject(
        new UsageError(
          `${options.what} ${options.port}${where} is already in use: pick another with ${options.setting} (0 lets the system choose)`,
        ),
      );
    });
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : options.port;
}
