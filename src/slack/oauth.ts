import type { HTTPReceiverOptions } from '@slack/bolt';
import type { Distribution } from '../config/distribution.ts';
import type { Logger } from '../log.ts';
import { installedPage, installFailedPage } from './install-pages.ts';
import {
  type InstallationPort,
  vaultInstallationStore,
  workspaceOf,
} from './installation-store.ts';

/**
 * Distributed mode's OAuth, as HTTPReceiver options (Bolt builds its InstallProvider from
 * them): "Add to Slack" at `/slack/install` sends the browser straight to Slack's authorize
 * page with a signed `state` (SLACK_STATE_SECRET) also set in an HttpOnly cookie; Slack sends
 * it back to `/slack/oauth_redirect` with a code, which is exchanged (oauth.v2.access) only if
 * the state is this app's, under 10 minutes old and the cookie's; the installation (tokens
 * included) is sealed into the store. The scopes are the manifest's.
 */

export interface OAuthSetup {
  distribution: Distribution;
  /** The bot scopes manifest.yml asks for (src/manifest.ts). */
  scopes: readonly string[];
  installations: InstallationPort;
  /** SLACK_API_URL: the Web API (the code exchange, auth.test, token refreshes) and, beside it, the authorize page. */
  apiUrl: string;
  timeoutMs: number;
  log: Logger;
  /**
   * A request of this workspace is being authorized: what the middleware reads of it next
   * (its docs row) may be read meanwhile, beside the installation, rather than after it.
   */
  authorizing?: (ws: { teamId: string | undefined; enterpriseId: string | undefined }) => void;
}

export interface OAuthReceiverOptions {
  options: Pick<
    HTTPReceiverOptions,
    | 'clientId'
    | 'clientSecret'
    | 'stateSecret'
    | 'scopes'
    | 'installationStore'
    | 'installerOptions'
  >;
  /** The paths the installer serves (GET). */
  paths: string[];
}

/**
 * Slack's authorize page, beside its Web API: `https://slack.com/api/` gives
 * `https://slack.com/oauth/v2/authorize` (and the fake Slack's base the same way).
 */
export function authorizeUrlOf(apiUrl: string): string {
  return new URL('../oauth/v2/authorize', apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`).toString();
}

export function oauthReceiverOptions(s: OAuthSetup): OAuthReceiverOptions {
  const d = s.distribution;
  const log = s.log.child({ component: 'install' });
  const installationStore = vaultInstallationStore(s.installations, log);
  return {
    paths: [d.installPath, d.redirectPath],
    options: {
      clientId: d.clientId,
      clientSecret: d.clientSecret,
      stateSecret: d.stateSecret,
      scopes: [...s.scopes],
      installationStore,
      installerOptions: {
        installPath: d.installPath,
        redirectUriPath: d.redirectPath,
        // The install page is Slack's own: no page of ours in between.
        directInstall: true,
        stateVerification: true,
        authorizationUrl: authorizeUrlOf(s.apiUrl),
        clientOptions: { slackApiUrl: s.apiUrl, timeout: s.timeoutMs },
        callbackOptions: {
          afterInstallation: async (installation) => {
            installationStore.freshInstall(installation);
            const rotating = installation.bot?.refreshToken !== undefined;
            if (rotating !== d.tokenRotation)
              log.warn(
                { ...workspaceOf(installation), rotating, configured: d.tokenRotation },
                'install.token_rotation_mismatch',
              );
            return true;
          },
          success: (installation, _options, _req, res) =>
            installedPage(installation, res, d.installPath),
          failure: (error, _options, _req, res) => {
            const e = error as { code?: string; data?: { error?: string } };
            log.warn({ code: e.code, slackError: e.data?.error }, 'install.failed');
            installFailedPage(e, res, d.installPath);
          },
        },
      },
    },
  };
}
