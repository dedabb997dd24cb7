import type { App, SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { Inflight } from '../../inflight.ts';
import type { JobService } from '../../jobs/service.ts';
import type { Logger } from '../../log.ts';
import { decodeSlackText } from '../../mrkdwn.ts';
import { AGENT_USAGE } from '../blocks.ts';
import { readCommand } from './command-payload.ts';

/**
 * `/agent <prompt>`: ack within Slack's 3 s (with usage when there is no prompt), then
 * hand over to the job service, which posts the root message and creates the job.
 */
export function registerAgentCommand(
  app: App,
  deps: { jobs: JobService; log: Logger; inflight: Inflight },
): void {
  const log = deps.log.child({ component: 'agent-command' });
  async function onAgent({ command, ack, respond }: SlackCommandMiddlewareArgs): Promise<void> {
    const payload = await readCommand(command, ack, log);
    if (!payload) return;
    const { text, team_id, channel_id, user_id } = payload;
    const prompt = decodeSlackText(text).trim();
    if (prompt === '' || /^help$/i.test(prompt)) {
      await ack({ response_type: 'ephemeral', text: AGENT_USAGE });
      log.info({ channelId: channel_id, userId: user_id, empty: prompt === '' }, 'command.usage');
      return;
    }
    await ack();
    await deps.jobs.startJob(
      { teamId: team_id, channelId: channel_id, userId: user_id, prompt },
      async (reply) => {
        await respond({ response_type: 'ephemeral', replace_original: false, text: reply });
      },
    );
  }
  app.command('/agent', (args) => deps.inflight.track(onAgent(args)));
}
