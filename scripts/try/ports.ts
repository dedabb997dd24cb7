/**
 * The ports `npm run try` listens on: the defaults (3000 for the bot, 3999 for the control
 * API) when free, another free one when a default is taken (a bot already running, another
 * `npm run try`), and a clear refusal naming the flag when a port asked for is taken.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on `port` (0: any free one); EADDRINUSE and the like reject. */
export function listen(server: Server, port: number, host?: string): Promise<number> {
  return new Promise((ok, fail) => {
    const failed = (err: Error) => fail(err);
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      ok((server.address() as AddressInfo).port);
    });
  });
}

/** Whether the bot could listen on `port` (on every interface, as it does) right now. */
async function isFree(port: number): Promise<boolean> {
  const probe = createServer();
  try {
    await listen(probe, port);
    return true;
  } catch {
    return false;
  } finally {
    await new Promise((ok) => probe.close(ok));
  }
}

/** A port nothing listens on now, for the bot: `wanted` when free. */
export async function botPortFor(wanted: number, chosen: boolean): Promise<PortChoice> {
  if (await isFree(wanted)) return { port: wanted };
  if (chosen) return { taken: refusal(wanted, 'bot-port') };
  const probe = createServer();
  const port = await listen(probe, 0);
  await new Promise((ok) => probe.close(ok));
  return { port, note: `port ${wanted} is taken; the bot uses ${port} (--bot-port picks one)` };
}

/** The control server listening: on `wanted`, or on a free port when the default is taken. */
export async function listenControl(
  server: Server,
  wanted: number,
  chosen: boolean,
): Promise<PortChoice> {
  try {
    return { port: await listen(server, wanted, '127.0.0.1') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    if (chosen) return { taken: refusal(wanted, 'control-port') };
    const port = await listen(server, 0, '127.0.0.1');
    return {
      port,
      note: `port ${wanted} is taken; the control API uses ${port} (--control-port picks one)`,
    };
  }
}

export type PortChoice = { port: number; note?: string } | { taken: string };

function refusal(port: number, flag: string): string {
  return `port ${port} is taken (another bot or \`npm run try\`?): stop what uses it, or pass --${flag} with a free port (or leave --${flag} out to get one)`;
}
