import type { ApiWorkspace } from '../api/client.ts';
import type { Logger } from '../log.ts';
import { type ScopeOf, singleScope } from '../store/scope.ts';
import type { ReportHeadline, Store } from '../store/types.ts';
import type { Report, ReportService } from './service.ts';

/** A report's headline figures, as the App Home shows them. */
export function headlineOf(r: Report): ReportHeadline {
  return {
    from: r.range.from,
    to: r.range.to,
    timeZone: r.range.timeZone,
    totals: r.totals,
    previousTotals: r.previousTotals,
    partial: r.scan.stoppedBy !== null || !r.scan.current.complete,
    generatedAt: r.generatedAt,
  };
}

/**
 * The report service, keeping each built report's headline in the store (the last one wins),
 * for `/visitors` and the digest alike, under the workspace the report is for (`scope` maps
 * it: src/store/scope.ts). Only a report of the project the Home is about is kept:
 * - single-workspace mode: the configured project's (no project given); a bound channel's
 *   report is not it;
 * - distributed mode (`distributed`): the workspace's own, whose project is the one it
 *   connected (every channel of it uses that one: src/projects.ts), so each workspace's
 *   Home shows its latest report.
 * Keeping it is a side matter: a failure is logged and the report goes out anyway.
 */
export function keepingHeadlines(
  reports: ReportService,
  store: Pick<Store, 'putReportHeadline'>,
  log: Logger,
  scope: ScopeOf = singleScope,
  distributed = false,
): ReportService {
  const ofHome = (project: string | undefined, workspace: ApiWorkspace | undefined) =>
    distributed ? Boolean(workspace?.teamId) : project === undefined;
  return {
    async build(range, project, workspace) {
      const report = await reports.build(range, project, workspace);
      if (!ofHome(project, workspace)) return report;
      await Promise.resolve()
        .then(() => store.putReportHeadline(scope(workspace), headlineOf(report)))
        .catch((err: unknown) => log.warn({ err }, 'report.headline_not_kept'));
      return report;
    },
  };
}
