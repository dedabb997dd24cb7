import type { AckFn, RespondArguments } from '@slack/bolt';
import { z } from 'zod';
import type { Logger } from '../../log.ts';

/** The fields of a slash command payload the bot reads. */
export const SlashCommand = z.object({
  text: z.string().default(''),
  team_id: z.string().min(1),
  /** The team's Enterprise Grid org, when it is in one. */
  enterprise_id: z.string().optional(),
  channel_id: z.string().min(1),
  user_id: z.string().min(1),
  /** `directmessage` in a DM, `mpdm-…` in a group DM. */
  channel_name: z.string().optional(),
  /** Where the person can be answered for 30 minutes (5 posts), even after a restart. */
  response_url: z.string().optional(),
});
export type SlashCommand = z.infer<typeof SlashCommand>;

/**
 * Validates a command payload; a malformed one is answered in the ack and logged, and
 * `undefined` comes back so the listener stops there.
 */
export async function readCommand(
  command: unknown,
  ack: AckFn<string | RespondArguments>,
  log: Logger,
): Promise<SlashCommand | undefined> {
  const parsed = SlashCommand.safeParse(command);
  if (parsed.success) return parsed.data;
  log.warn({ issues: parsed.error.issues.map((i) => i.path.join('.')) }, 'command.malformed');
  await ack({
    response_type: 'ephemeral',
    text: "Sorry, I couldn't read that command. Please try again.",
  });
  return undefined;
}
