import type { App, SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { Inflight } from '../../inflight.ts';
import { conversationKind, kindFromChannelName } from '../../invite-hint.ts';
import type { PendingCommands } from '../../jobs/pending-commands.ts';
import type { JobService, StartRequest } from '../../jobs/service.ts';
import type { JobStatus } from '../../jobs/status.ts';
import type { Logger } from '../../log.ts';
import { decodeSlackText } from '../../mrkdwn.ts';
import type { Projects } from '../../projects.ts';
import type { WorkLanes } from '../../work-queue.ts';
import { AGENT_USAGE } from '../blocks.ts';
import { readCommand } from './command-payload.ts';

/** Asking for help, not starting a job that asks the agent for it. */
export const HELP = /^(help|\?|--help|-h)$/i;
/** `/agent status`: the person's jobs in progress and the agent budget. */
export const STATUS = /^status$/i;
/** `/agent project [<projectId> | default]`: show or change the channel's docs project. */
const PROJECT = /^project(?:\s+(\S.*))?$/is;
/** `/agent doctor`: the setup checks, only to the person asking. */
const DOCTOR = /^doctor$/i;

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
  deps: {
    jobs: JobService;
    jobStatus: JobStatus;
    projects: Projects;
    /** `/agent doctor`'s answer (src/doctor.ts, wired in the composition root). */
    doctor?: (teamId: string, channelId: string) => Promise<string>;
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
    if (prompt === '' || HELP.test(prompt)) {
      await ack({ response_type: 'ephemeral', text: AGENT_USAGE });
      log.info({ channelId: channel_id, userId: user_id, empty: prompt === '' }, 'command.usage');
      return;
    }
    if (STATUS.test(prompt)) {
      await ack();
      const reply = async () => tell(await deps.jobStatus(team_id, channel_id, user_id));
      if (!deps.work.answers.offer('command.status', reply)) await reply();
      log.info({ channelId: channel_id, userId: user_id }, 'command.status');
      return;
    }
    const project = PROJECT.exec(prompt);
    if (project) {
      await ack();
      const who = { teamId: team_id, channelId: channel_id, userId: user_id };
      const arg = project[1]?.trim();
      const reply = async () => {
        if (!arg) return tell(await deps.projects.describe(team_id, channel_id));
        const r = await deps.projects.change(who, arg);
        log.info({ ...who, changed: r.changed, refused: r.refused }, 'command.project_change');
        await tell(r.text);
      };
      if (!deps.work.answers.offer('command.project', reply)) await reply();
      return;
    }
    const doctor = deps.doctor;
    if (doctor && DOCTOR.test(prompt)) {
      await ack();
      const reply = async () => tell(await doctor(team_id, channel_id));
      if (!deps.work.answers.offer('command.doctor', reply)) await reply();
      log.info({ channelId: channel_id, userId: user_id }, 'command.doctor');
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
      channelId: req.channelId,
      userId: req.userId,
      text: req.prompt,
      responseUrl,
      conversation: req.conversation ?? null,
    });
  }
  app.command('/agent', (args) => deps.inflight.track(onAgent(args)));
}
