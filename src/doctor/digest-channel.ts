/**
 * The doctor's look at DIGEST_CHANNEL: the channel exists, is not archived and the bot is a
 * member, so the weekly digest can post there (a wrong one would otherwise show up the next
 * Monday). Asked with conversations.info; the channel is named by Slack's name, the id (a
 * configuration value) is not repeated.
 */

export type ChannelAnswer =
  | { ok: true; name?: string; isMember: boolean; isArchived: boolean }
  | { ok: false; error: string };

const NAME = 'Digest channel';
const ID_FIX =
  'set DIGEST_CHANNEL to the channel id (the channel\u2019s details, at the bottom of About); for a private channel, invite the bot there first (`/invite @Docs Agent`)';

export async function checkDigestChannel(
  info: () => Promise<ChannelAnswer>,
): Promise<{ name: string; ok: boolean; detail: string; fix?: string }> {
  const r = await info().catch(
    (err: unknown): ChannelAnswer => ({
      ok: false,
      error: err instanceof Error ? err.message.split('\n')[0]!.slice(0, 200) : String(err),
    }),
  );
  if (!r.ok) return { name: NAME, ok: false, ...failure(r.error) };
  const where = r.name ? `#${r.name}` : 'the channel';
  if (r.isArchived)
    return {
      name: NAME,
      ok: false,
      detail: `DIGEST_CHANNEL is ${where}, which is archived`,
      fix: 'unarchive it, or set DIGEST_CHANNEL to another channel',
    };
  if (!r.isMember)
    return {
      name: NAME,
      ok: false,
      detail: `DIGEST_CHANNEL is ${where}, but the bot is not a member, so the digest cannot post there`,
      fix: `invite the bot: \`/invite @Docs Agent\` in ${where}`,
    };
  return { name: NAME, ok: true, detail: `DIGEST_CHANNEL is ${where}; the bot is a member` };
}

function failure(error: string): { detail: string; fix: string } {
  switch (error) {
    case 'channel_not_found':
      return {
        detail: 'DIGEST_CHANNEL names no channel the bot can see (channel_not_found)',
        fix: ID_FIX,
      };
    case 'missing_scope':
      return {
        detail:
          'not checked: reading a channel needs the channels:read scope (groups:read for a private one)',
        fix: 'add them under OAuth & Permissions → Bot Token Scopes (or update the app from manifest.yml), then reinstall the app to the workspace',
      };
    case 'invalid_auth':
    case 'not_authed':
    case 'token_revoked':
    case 'account_inactive':
      return {
        detail: `not checked: conversations.info answered ${error}`,
        fix: 'fix the bot token first',
      };
    default:
      return {
        detail: `could not check (conversations.info answered ${error})`,
        fix: 'check that SLACK_API_URL points at Slack\u2019s Web API and that this machine can reach it',
      };
  }
}
