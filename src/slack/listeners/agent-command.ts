import type { App, SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { Inflight } from '../../inflight.ts';
import { conversationKind, kindFromChannelName } from '../../invite-hint.ts';
import type { PendingCommands } from '../../jobs/pending-commands.ts';
import type { JobService, StartRequest } from '../../jobs/service.ts';
import type { Logger } from '../../log.ts';
import { decodeSlackText } from '../../mrkdwn.ts';
import type { WorkLanes } from '../../work-queue.ts';
import { AGENT_USAGE } from '../blocks.ts';
import { readCommand } from './command-payload.ts';
import { answerSubCommand, parseSubCommand, type SubCommandDeps } from './sub-commands.ts';

/** What a user is told when the bot has more starts waiting than it takes. */
export const BUSY_TEXT =
  "I'm starting a lot of jobs right now and couldn't take this one. Please run `/agent` again in a minute.";

/**
 * `/agent <prompt>`: ack within Slack's 3 s (with usage when there is no prompt), then
 * hand over to the job service, which posts the root message and creates the job. Nothing
 * but reading the payload happens before the ack; the start runs from the work queue.
 */
export function registerAgentCommand(
  app: App,
  deps: SubCommandDeps & {
    jobs: JobService;
    log: Logger;
    inflight: Inflight;
    work: WorkLanes;
    pending?: PendingCommands;
  },
): void {
  const log = deps.log.child({ component: 'agent-command' });
  async function onAgent({ command, ack, respond }: SlackCommandMiddlewareArgs): Promise<void> {
    const payload = await readCommand(command, ack, log);
    if (!payload) return;
    const { text, team_id, channel_id, user_id, channel_name } = payload;
    const prompt = decodeSlackText(text).trim();
    /** An answer only the person who ran the command sees. */
    const tell = async (answer: string) => {
      await respond({ response_type: 'ephemeral', replace_original: false, text: answer });
    };
    const cmd = parseSubCommand(prompt);
    if (cmd.kind === 'help') {
      // Answered in the ack itself: nothing to look up.
      await ack({ response_type: 'ephemeral', text: deps.usage ?? AGENT_USAGE });
      log.info({ channelId: channel_id, userId: user_id, empty: cmd.empty }, 'command.usage');
      return;
    }
    if (cmd.kind !== 'prompt') {
      await ack();
      const enterpriseId = payload.enterprise_id || undefined;
      const who = { teamId: team_id, enterpriseId, channelId: channel_id, userId: user_id };
      const reply = async () => tell(await answerSubCommand(cmd, who, { ...deps, log }, 'command'));
      if (!deps.work.answers.offer(`command.${cmd.kind}`, reply)) await reply();
      return;
    }
    if (!deps.work.starts.hasRoom()) {
      await ack({ response_type: 'ephemeral', text: BUSY_TEXT });
      log.warn({ channelId: channel_id, userId: user_id }, 'command.busy');
      return;
    }
    await ack();
    const req: StartRequest = {
      teamId: team_id,
      enterpriseId: payload.enterprise_id || undefined,
      channelId: channel_id,
      userId: user_id,
      prompt,
      // A DM or group DM: no "invite me" hint there.
      conversation: conversationKind(channel_id, kindFromChannelName(channel_name)),
    };
    const recorded = recordPending(req, payload.response_url);
    deps.work.starts.offer('job.start', async () => {
      const id = await recorded;
      // This process is stopping: the record stays for the next one, or another replica.
      const url = payload.response_url;
      const command = deps.pending && url ? deps.pending.begin(id, url) : undefined;
      if (command === false) return;
      await deps.jobs.startJob(command ? { ...req, command } : req, tell);
    });
  }

  /** Records the command after this turn, so that a crash before its start loses none. */
  function recordPending(req: StartRequest, responseUrl: string | undefined) {
    if (!deps.pending || !responseUrl) return Promise.resolve(undefined);
    return deps.pending.record({
      teamId: req.teamId,
      enterpriseId: req.enterpriseId ?? null,
      channelId: req.channelId,
      userId: req.userId,
      text: req.prompt,
      responseUrl,
      conversation: req.conversation ?? null,
    });
  }
  app.command('/agent', (args) => deps.inflight.track(onAgent(args)));
}
