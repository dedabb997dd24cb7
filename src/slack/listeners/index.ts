import type { App } from '@slack/bolt';
import type { JobService } from '../../jobs/service.ts';
import type { Logger } from '../../log.ts';
import type { Store } from '../../store/types.ts';
import { registerAgentCommand } from './agent-command.ts';
import { registerThreadReplies } from './thread-replies.ts';

/** One registration point per Slack surface. */
export function registerListeners(
  app: App,
  deps: { jobs: JobService; store: Store; log: Logger },
): void {
  registerAgentCommand(app, deps);
  registerThreadReplies(app, deps);
  app.error(async (err) => {
    // Surprises only: expected failures are handled, and answered, where they happen.
    deps.log.error({ err, component: 'bolt' }, 'slack.unhandled_error');
  });
}
