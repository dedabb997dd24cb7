import type { Job } from '../api/schemas.ts';
import type { JobSnapshot } from '../store/types.ts';

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
