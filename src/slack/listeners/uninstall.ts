import type { App } from '@slack/bolt';
import { z } from 'zod';
import type { Inflight } from '../../inflight.ts';
import type { Logger } from '../../log.ts';
import type { Uninstall } from '../../workspaces/uninstall.ts';

/**
 * Distributed mode: `app_uninstalled`, and `tokens_revoked` naming the bot user, end the
 * workspace's install (src/workspaces/uninstall.ts). Bolt hands both over without authorizing
 * them (there is no token left), with the install's team, org and whether it was org-wide in
 * the context. A `tokens_revoked` for people's tokens only leaves the install alone: the app
 * asks for no user token.
 */

const TokensRevoked = z.object({
  tokens: z.object({ bot: z.array(z.string()).optional() }).optional(),
});

interface Ctx {
  teamId?: string | undefined;
  enterpriseId?: string | undefined;
  isEnterpriseInstall?: boolean | undefined;
}

export function registerUninstall(
  app: App,
  deps: { uninstall: Uninstall; inflight: Inflight; log: Logger },
): void {
  const place = (c: Ctx) => ({
    teamId: c.teamId,
    enterpriseId: c.enterpriseId,
    isEnterpriseInstall: c.isEnterpriseInstall === true,
  });
  const run = (c: Ctx, cause: 'app_uninstalled' | 'tokens_revoked') =>
    deps.inflight.track(
      deps.uninstall(place(c), cause).catch((err: unknown) => {
        // Slack does not resend it: the other of the pair (or a re-install) comes next.
        deps.log.error({ err, ...place(c), cause }, 'workspace.uninstall_failed');
      }),
    );
  app.event('app_uninstalled', ({ context }) => run(context, 'app_uninstalled'));
  app.event('tokens_revoked', ({ event, context }) => {
    const bots = TokensRevoked.safeParse(event).data?.tokens?.bot ?? [];
    if (bots.length === 0) return Promise.resolve();
    return run(context, 'tokens_revoked');
  });
}
