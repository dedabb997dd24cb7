import type { JobSnapshot, PollRecord } from '../../src/store/types.ts';

/** Rows the store suites (test/store/*.test.ts) start from. */
export const thread = {
  teamId: 'T1',
  channelId: 'C1',
  threadTs: '100.1',
  userId: 'U1',
  prompt: 'Add a quickstart',
};
export const snap = (over: Partial<JobSnapshot> = {}): JobSnapshot => ({
  jobId: 'job_1',
  status: 'active',
  model: 'm',
  repository: 'https://github.com/acme/docs',
  ref: 'main',
  prLink: null,
  ...over,
});

export const poll = (p: Partial<PollRecord> & Pick<PollRecord, 'threadId'>): PollRecord => ({
  round: 0,
  snapshot: null,
  schedule: { nextPollAt: null, pollIntervalMs: 1 },
  announcements: [],
  now: 0,
  ...p,
});
