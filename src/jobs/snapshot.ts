import type { ApiWorkspace } from '../api/call.ts';
import type { Job } from '../api/schemas.ts';
import type { JobSnapshot, JobThread } from '../store/types.ts';

/** What the thread keeps of a job as the service described it. */
export function toSnapshot(job: Job): JobSnapshot {
  return {
    jobId: job.id,
    status: job.status,
    model: job.model ?? null,
    repository: job.source?.repository ?? null,
    ref: job.source?.ref ?? null,
    prLink: job.prLink,
  };
}

/**
 * The workspace whose docs key a job's calls go with (distributed mode; the client ignores
 * it with one workspace): the thread's team and its Enterprise Grid org.
 */
export function docsWorkspaceOf(t: Pick<JobThread, 'teamId' | 'enterpriseId'>): ApiWorkspace {
  return { teamId: t.teamId, enterpriseId: t.enterpriseId ?? null };
}
