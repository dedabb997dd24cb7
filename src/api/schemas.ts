import { z } from 'zod';

/**
 * Response schemas of the service. The official OpenAPI marks every AgentJob field
 * optional; we require the two we cannot work without (`id`, `status`) and read a missing
 * `prLink` as null (no PR yet) and a missing `archivedAt` as null.
 */

export const JOB_STATUSES = ['active', 'completed', 'archived', 'failed'] as const;
export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;

/** Stopping statuses for polling (service docs, section 3). */
const FINAL_STATUSES: ReadonlySet<string> = new Set<JobStatus>(['completed', 'archived', 'failed']);
export const isFinalStatus = (status: string): boolean => FINAL_STATUSES.has(status);

export const Job = z.object({
  id: z.string().min(1),
  status: JobStatus,
  source: z
    .object({
      repository: z.string().nullish(),
      ref: z.string().nullish(),
    })
    .nullish(),
  model: z.string().nullish(),
  prLink: z
    .url({ protocol: /^https?$/ })
    .nullish()
    .transform((v) => v ?? null),
  createdAt: z.string().nullish(),
  archivedAt: z.string().nullish(),
});
export type Job = z.infer<typeof Job>;

const Count = z.number().int().nonnegative();

export const VisitorCounts = z.object({ human: Count, ai: Count, total: Count });

export const VisitorsPage = z.object({
  totals: VisitorCounts,
  visitors: z.array(VisitorCounts.extend({ path: z.string() })),
  hasMore: z.boolean(),
});
export type VisitorsPage = z.infer<typeof VisitorsPage>;
export type PageRow = VisitorsPage['visitors'][number];

/** `{error, details[]}`: the 400 body of both APIs. Details may be strings or objects. */
/**
 * `GET /v1/agent/{projectId}/jobs`, read only to learn that the project exists: its sessions
 * are not used, so only the list itself is required of the answer.
 */
export const ProjectJobs = z.object({ allSessions: z.array(z.unknown()) });

export const ErrorBody = z.object({
  error: z.string().optional(),
  message: z.string().optional(),
  details: z.array(z.unknown()).optional(),
});

export function describeDetail(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (detail && typeof detail === 'object') {
    const d = detail as { path?: unknown; message?: unknown };
    const path = Array.isArray(d.path)
      ? d.path.join('.')
      : typeof d.path === 'string'
        ? d.path
        : '';
    const message = typeof d.message === 'string' ? d.message : JSON.stringify(detail);
    return path ? `${path}: ${message}` : message;
  }
  return String(detail);
}
