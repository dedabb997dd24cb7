import type { JobStatus } from '../../jobs/status.ts';
import type { Logger } from '../../log.ts';
import type { Projects } from '../../projects.ts';
import { AGENT_USAGE } from '../blocks.ts';

/**
 * The words `/agent`, mentions and DMs share: `help` (or nothing), `status`,
 * `project [<projectId> | default]` and `doctor` are answered; anything else is a prompt for
 * a job. One parser and one answerer, so the three surfaces cannot drift apart.
 */

export type SubCommand =
  | { kind: 'help'; empty: boolean }
  | { kind: 'status' }
  | { kind: 'project'; arg: string | undefined }
  | { kind: 'doctor' }
  | { kind: 'prompt'; prompt: string };

/** Asking for help, not starting a job that asks the agent for it. */
const HELP = /^(help|\?|--help|-h)$/i;
/** The person's jobs in progress and the agent budget. */
const STATUS = /^status$/i;
/** Show or change the conversation's docs project. */
const PROJECT = /^project(?:\s+(\S.*))?$/is;
/** The setup checks, only to the person asking. */
const DOCTOR = /^doctor$/i;

/** What a person typed (decoded, the bot's own mention removed), read as a sub-command. */
export function parseSubCommand(text: string): SubCommand {
  const t = text.trim();
  if (t === '' || HELP.test(t)) return { kind: 'help', empty: t === '' };
  if (STATUS.test(t)) return { kind: 'status' };
  const project = PROJECT.exec(t);
  if (project) return { kind: 'project', arg: project[1]?.trim() || undefined };
  if (DOCTOR.test(t)) return { kind: 'doctor' };
  return { kind: 'prompt', prompt: t };
}

export type Answerable = Exclude<SubCommand, { kind: 'prompt' }>;

export interface Asker {
  teamId: string;
  /** The team's Enterprise Grid org, when it has one. */
  enterpriseId?: string | undefined;
  channelId: string;
  userId: string;
}

export interface SubCommandDeps {
  jobStatus: JobStatus;
  projects: Projects;
  /** The setup checks (src/doctor/wiring.ts): a full report for admins, a health line else. */
  doctor?: (who: Asker) => Promise<{ text: string; full: boolean; failed: number }>;
  log: Logger;
  /** The `/agent help` text: AGENT_USAGE, or AGENT_USAGE_WORKSPACE in the distributed mode. */
  usage?: string;
}

/**
 * The answer to a sub-command, for the asker only; `surface` names the log event
 * (`command.status`, `message.doctor`, …). Starts nothing.
 */
export async function answerSubCommand(
  cmd: Answerable,
  who: Asker,
  deps: SubCommandDeps,
  surface: 'command' | 'message',
): Promise<string> {
  const fields = { channelId: who.channelId, userId: who.userId };
  switch (cmd.kind) {
    case 'help':
      deps.log.info({ ...fields, empty: cmd.empty }, `${surface}.usage`);
      return deps.usage ?? AGENT_USAGE;
    case 'status':
      deps.log.info(fields, `${surface}.status`);
      return deps.jobStatus(who.teamId, who.channelId, who.userId);
    case 'project': {
      if (!cmd.arg) {
        deps.log.info(fields, `${surface}.project`);
        return deps.projects.describe(who.teamId, who.channelId);
      }
      const r = await deps.projects.change(who, cmd.arg);
      deps.log.info(
        { ...fields, changed: r.changed, refused: r.refused },
        `${surface}.project_change`,
      );
      return r.text;
    }
    case 'doctor': {
      if (!deps.doctor) {
        deps.log.warn(fields, `${surface}.doctor_unavailable`);
        return "The setup checks aren't available here; whoever runs the bot can run `npm run doctor`.";
      }
      const r = await deps.doctor(who);
      deps.log.info({ ...fields, full: r.full, failed: r.failed }, `${surface}.doctor`);
      return r.text;
    }
  }
}
