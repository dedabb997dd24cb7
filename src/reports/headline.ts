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
 * for `/visitors` and the digest alike (the configured project's only), under the workspace
 * the report is for (`scope` maps it: src/store/scope.ts). Keeping it is a side matter: a
 * failure is logged and the report goes out anyway.
 */
export function keepingHeadlines(
  reports: ReportService,
  store: Pick<Store, 'putReportHeadline'>,
  log: Logger,
  scope: ScopeOf = singleScope,
): ReportService {
  return {
    async build(range, project, workspace) {
      const report = await reports.build(range, project, workspace);
      // The Home shows the configured project's figures; a bound channel's report is not them.
      if (project !== undefined) return report;
      await Promise.resolve()
        .then(() => store.putReportHeadline(scope(workspace), headlineOf(report)))
        .catch((err: unknown) => log.warn({ err }, 'report.headline_not_kept'));
      return report;
    },
  };
}
