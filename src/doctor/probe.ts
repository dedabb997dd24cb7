import { LogLevel, type Logger as SlackLogger, WebClient } from '@slack/web-api';
import type { Config } from '../config/config.ts';
import { webClientOptions } from '../slack/app.ts';
import { toChatError } from '../slack/chat.ts';
import type { SlackAnswer } from './check.ts';
import type { ChannelAnswer } from './digest-channel.ts';

/**
 * The doctor's two questions to Slack, asked with the configured tokens: does the bot token
 * work, with which scopes (auth.test and its `x-oauth-scopes` header), and does the app token
 * open Socket Mode connections (apps.connections.open; the URL it hands out is not used), and
 * is the bot in the digest's channel (conversations.info).
 */
export function slackDoctorProbe(slack: Config['slack']) {
  // Failures come back as values and are shown on the doctor's lines, not logged on the side.
  const quiet: SlackLogger = {
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: () => {},
    setLevel: () => {},
    getLevel: () => LogLevel.ERROR,
    setName: () => {},
  };
  const options = { ...webClientOptions(slack.apiUrl), timeout: 10_000, logger: quiet };
  const bot = new WebClient(slack.botToken, options);
  const appToken = slack.appToken;
  return {
    async authTest(): Promise<
      SlackAnswer<{ user?: string; team?: string; teamId?: string; scopes: string[] | undefined }>
    > {
      try {
        const r = await bot.auth.test();
        return {
          ok: true,
          ...(r.user ? { user: r.user } : {}),
          ...(r.team ? { team: r.team } : {}),
          ...(r.team_id ? { teamId: r.team_id } : {}),
          scopes: r.response_metadata?.scopes,
        };
      } catch (err) {
        return { ok: false, error: toChatError(err).code };
      }
    },
    openConnection: appToken
      ? async (): Promise<SlackAnswer<object>> => {
          try {
            await new WebClient(appToken, options).apps.connections.open();
            return { ok: true };
          } catch (err) {
            return { ok: false, error: toChatError(err).code };
          }
        }
      : undefined,
    async channelInfo(channel: string): Promise<ChannelAnswer> {
      try {
        const r = await bot.conversations.info({ channel });
        return {
          ok: true,
          ...(r.channel?.name ? { name: r.channel.name } : {}),
          isMember: r.channel?.is_member === true,
          isArchived: r.channel?.is_archived === true,
        };
      } catch (err) {
        return { ok: false, error: toChatError(err).code };
      }
    },
  };
}
