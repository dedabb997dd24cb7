/**
 * Slack's authorize page as a person meets it in a browser (FakeSlack.showAllowPage): which
 * workspace to install in (Slack's workspace switcher), what the app asks for, and Allow or
 * Cancel. Allow is a link back to the same page with the choice made (`team`, `user`,
 * `approve=1`), which then answers as the page always has: a redirect to the app's
 * redirect URL with a code. Without showAllowPage the page approves at once, as `installAs`
 * says (what the tests use).
 */
import type { Answer } from './wire.ts';
import type { Workspace } from './workspaces.ts';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Who clicks Allow: the chosen workspace and person, if the page was answered. */
export function allowChoice(
  query: URLSearchParams,
): { team: string; user: string; deny: boolean } | undefined {
  const team = query.get('team');
  const user = query.get('user');
  if (query.get('approve') !== '1' || !team || !user) return undefined;
  return { team, user, deny: query.get('deny') === '1' };
}

/** The page: the workspace in `team` (or the first) chosen, the others a click away. */
export function allowPage(path: string, query: URLSearchParams, workspaces: Workspace[]): Answer {
  const chosen = workspaces.find((w) => w.team === query.get('team')) ?? workspaces[0];
  if (!chosen) return { status: 500, body: 'no workspace' };
  const link = (extra: Record<string, string>) => {
    const q = new URLSearchParams(query);
    for (const [k, v] of Object.entries(extra)) q.set(k, v);
    return esc(`${path}?${q}`);
  };
  const user = chosen.users[0] ?? 'U0001';
  const others = workspaces
    .map((w) =>
      w.team === chosen.team
        ? `<strong>${esc(w.name)}</strong>`
        : `<a id="switch-${esc(w.team)}" href="${link({ team: w.team })}">${esc(w.name)}</a>`,
    )
    .join(' · ');
  const scopes = (query.get('scope') ?? '')
    .split(',')
    .filter(Boolean)
    .map((s) => `<li><code>${esc(s)}</code></li>`)
    .join('');
  const allow = link({ team: chosen.team, user, approve: '1' });
  const cancel = link({ team: chosen.team, user, approve: '1', deny: '1' });
  const body = `<!doctype html><html><head><meta charset="utf-8"><title>Install the app (fake Slack)</title>
<style>body{font:16px system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}
a.button{display:inline-block;padding:.5em 1.2em;border-radius:6px;text-decoration:none;margin-right:.5em}
#allow-${esc(chosen.team)}{background:#007a5a;color:#fff}.cancel{border:1px solid #bbb;color:#222}</style></head>
<body><p>Fake Slack · install in: ${others}</p>
<h1>The app is requesting permission to access the ${esc(chosen.name)} Slack workspace</h1>
<p>Signed in as <code>${esc(user)}</code> (${esc(chosen.domain)}.slack.com, <code>${esc(chosen.team)}</code>).</p>
<p>It asks to:</p><ul>${scopes}</ul>
<p><a class="button" id="allow-${esc(chosen.team)}" href="${allow}">Allow</a>
<a class="button cancel" href="${cancel}">Cancel</a></p></body></html>`;
  return { status: 200, body, headers: { 'content-type': 'text/html; charset=utf-8' } };
}
