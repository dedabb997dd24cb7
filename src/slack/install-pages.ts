import type { ServerResponse } from 'node:http';

/**
 * The pages a browser sees at the end of an install (`/slack/oauth_redirect`): what happened
 * and what to do next. They name the workspace and nothing secret (no token, code or state).
 */

/** What the success page knows of the install (Bolt's Installation, the parts shown). */
export interface InstalledWhere {
  team?: { id: string; name?: string | undefined } | undefined;
  enterprise?: { id: string; name?: string | undefined } | undefined;
  isEnterpriseInstall?: boolean | undefined;
  appId?: string | undefined;
  /** An org-wide install's org address (auth.test `url`). */
  enterpriseUrl?: string | undefined;
}

/** Why an install failed, as Bolt's OAuth errors say it (`code`), and Slack's own error. */
export interface InstallFailure {
  code?: string | undefined;
  data?: { error?: string | undefined } | undefined;
}

const escapeHtml = (s: string): string =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#x27;');

function page(res: ServerResponse, status: number, title: string, paragraphs: string[]): void {
  const body = paragraphs.map((p) => `<p>${p}</p>`).join('\n');
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
  });
  res.end(
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
      '<style>body{font-family:system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em;line-height:1.5}</style>' +
      `</head><body><h1>${title}</h1>\n${body}\n</body></html>`,
  );
}

const NEXT_STEP =
  'Whoever installed Docs Agent (or an admin they name in its settings) connects a docs project there: the project id and an admin API key from the Mintlify dashboard (API keys page). Until a project is connected, every command answers with how to connect.';

/** 200: installed in a workspace, or org-wide; next, the Home tab. */
export function installedPage(i: InstalledWhere, res: ServerResponse, installPath: string): void {
  if (i.isEnterpriseInstall) {
    const org = escapeHtml(i.enterprise?.name ?? i.enterprise?.id ?? 'your organisation');
    const manage = i.enterpriseUrl
      ? ` (<a href="${escapeHtml(i.enterpriseUrl)}">your organisation's admin pages</a>)`
      : '';
    page(res, 200, 'Docs Agent is installed', [
      `Docs Agent is installed for the whole <strong>${org}</strong> organisation. An org admin adds it to the workspaces that should have it${manage}.`,
      `Next: in each of those workspaces, open <strong>Docs Agent</strong> in Slack's sidebar and its <strong>Home</strong> tab. ${NEXT_STEP}`,
    ]);
    return;
  }
  const team = i.team;
  const name = escapeHtml(team?.name ?? team?.id ?? 'your workspace');
  const home =
    team && i.appId
      ? ` (<a href="slack://app?team=${encodeURIComponent(team.id)}&amp;id=${encodeURIComponent(i.appId)}&amp;tab=home">open it</a>)`
      : '';
  page(res, 200, 'Docs Agent is installed', [
    `Docs Agent is installed in <strong>${name}</strong>.`,
    `Next: open <strong>Docs Agent</strong> in Slack's sidebar and its <strong>Home</strong> tab${home}. ${NEXT_STEP}`,
    `To install it in another workspace, start again at <a href="${escapeHtml(installPath)}">${escapeHtml(installPath)}</a>.`,
  ]);
}

/** The failure page: what went wrong in words, and how to start again. */
export function installFailedPage(
  e: InstallFailure,
  res: ServerResponse,
  installPath: string,
): void {
  const again = `Start again at <a href="${escapeHtml(installPath)}">${escapeHtml(installPath)}</a>, in the same browser, within 10 minutes.`;
  switch (e.code) {
    case 'slack_oauth_missing_state':
    case 'slack_oauth_invalid_state':
      page(res, 400, 'Docs Agent was not installed', [
        'This install link has expired, or it was opened in another browser than the one that started the install, so it cannot be trusted and nothing was installed.',
        again,
      ]);
      return;
    case 'slack_oauth_installer_authorization_error':
      page(res, 400, 'Docs Agent was not installed', [
        'The install was cancelled in Slack, so nothing was installed.',
        again,
      ]);
      return;
    case 'slack_oauth_missing_code':
      page(res, 400, 'Docs Agent was not installed', [
        'Slack sent no authorization code, so nothing was installed.',
        again,
      ]);
      return;
    default: {
      const slack = e.data?.error;
      page(res, slack ? 502 : 500, 'Docs Agent was not installed', [
        slack
          ? `Slack refused the install (<code>${escapeHtml(slack)}</code>), so nothing was installed. If it says <code>bad_redirect_uri</code>, the app's Redirect URL (OAuth &amp; Permissions) must be this bot's address followed by <code>/slack/oauth_redirect</code>.`
          : 'The install could not be completed, so nothing was installed. Whoever runs Docs Agent finds the reason in its log (<code>install.failed</code>).',
        again,
      ]);
    }
  }
}
