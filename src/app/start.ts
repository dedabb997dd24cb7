import { loadConfig } from '../config/config.ts';
import { configSecrets, hideConfigValues } from '../config/values.ts';
import { makeScrubber } from '../log.ts';
import { startBot } from './bot.ts';

/**
 * The process: configuration from the environment, then the bot; SIGTERM/SIGINT stop it
 * gracefully, a second signal forces the exit. Loaded by `main.ts`.
 */
const result = loadConfig();
if (!result.ok) {
  for (const problem of result.problems) process.stderr.write(`config: ${problem}\n`);
  process.exit(1);
}

try {
  const bot = await startBot(result.config);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      bot.log.warn({ signal }, 'bot.forced_exit');
      process.exit(1);
    }
    stopping = true;
    bot.log.info({ signal }, 'bot.stopping');
    bot.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
} catch (err) {
  // One readable line, naming configuration values rather than echoing them; the details
  // (already scrubbed) went to the log.
  const scrub = makeScrubber(configSecrets(result.config));
  const hide = hideConfigValues(result.config);
  process.stderr.write(
    `startup failed: ${scrub(hide(err instanceof Error ? err.message : String(err)))}\n`,
  );
  process.exit(1);
}
