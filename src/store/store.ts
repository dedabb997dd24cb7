import { announcementQueries } from './announcements.ts';
import { buttonQueries } from './buttons.ts';
import { coordinationQueries } from './coordination.ts';
import { docsConnectionQueries } from './docs-connections.ts';
import type { Engine } from './engine.ts';
import { followUpQueries } from './follow-ups.ts';
import { forgetSweepQueries } from './forget-sweep.ts';
import { forgetQueries } from './forgets.ts';
import { gapQueries } from './gaps.ts';
import { homeQueries } from './home.ts';
import { installationQueries } from './installations.ts';
import { pendingCommandQueries } from './pending-commands.ts';
import { pollQueries } from './polls.ts';
import { projectQueries } from './projects.ts';
import { reportCacheQueries } from './report-cache.ts';
import { sealedValueQueries } from './sealed-values.ts';
import { textVectorQueries } from './text-vectors.ts';
import { threadQueries } from './threads.ts';
import type { Store } from './types.ts';
import { workspaceWorkQueries } from './workspace-work.ts';

/** The store over an engine: the queries, grouped by what they serve, written once. */
export function createStore(engine: Engine): Store {
  return {
    ...threadQueries(engine),
    ...pollQueries(engine),
    ...announcementQueries(engine),
    ...coordinationQueries(engine),
    ...followUpQueries(engine),
    ...projectQueries(engine),
    ...buttonQueries(engine),
    ...homeQueries(engine),
    ...reportCacheQueries(engine),
    ...textVectorQueries(engine),
    ...pendingCommandQueries(engine),
    ...gapQueries(engine),
    ...installationQueries(engine),
    ...docsConnectionQueries(engine),
    ...forgetQueries(engine),
    ...forgetSweepQueries(engine),
    ...sealedValueQueries(engine),
    ...workspaceWorkQueries(engine),
    ping: () => engine.ping(),
    databaseTime: () => engine.databaseTime(),
    close: () => engine.close(),
  };
}
