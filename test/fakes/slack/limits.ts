/**
 * How the fake Slack says no on purpose: faults a test queues (`failNext`), and Slack's
 * published rate limits, enforced once asked (`enforceRateLimits`).
 */
import { type Answer, fail, type Json, str } from './wire.ts';

export type Fault =
  | { error: string }
  | { status: 429; retryAfterSec: number }
  /** `tookEffect`: Slack did the work and the answer was lost on the way (a gateway 5xx). */
  | { status: 500 | 503; tookEffect?: boolean };

/** Slack's published limits, as the fake enforces them once asked to (`enforceRateLimits`). */
export interface RateLimits {
  /** chat.postMessage, per channel: about one a second, short bursts allowed. */
  postMessage: { perSecond: number; burst: number };
  /** chat.update, per workspace: Tier 3, about 50 a minute, bursts allowed. */
  update: { perMinute: number; burst: number };
}
export const SLACK_RATE_LIMITS: RateLimits = {
  postMessage: { perSecond: 1, burst: 3 },
  update: { perMinute: 50, burst: 10 },
};

/** Faults queued per method (or `upload_url`, `response_url`), each for so many calls. */
export class Faults {
  private readonly faults: { method: string; fault: Fault; remaining: number }[] = [];

  add(method: string, fault: Fault, times: number): void {
    this.faults.push({ method, fault, remaining: times });
  }

  /** The next fault queued for `method`, as the answer to give and whether the work is done. */
  take(method: string): { answer: Answer; tookEffect: boolean } | undefined {
    const i = this.faults.findIndex((f) => f.method === method);
    const entry = this.faults[i];
    if (!entry) return undefined;
    if (--entry.remaining <= 0) this.faults.splice(i, 1);
    const f = entry.fault;
    if ('error' in f) return { answer: { status: 200, body: fail(f.error) }, tookEffect: false };
    if (f.status === 429) {
      const headers = { 'retry-after': String(f.retryAfterSec) };
      return { answer: { status: 429, body: fail('ratelimited'), headers }, tookEffect: false };
    }
    const body = f.status === 503 ? 'Service Unavailable' : 'Internal Server Error';
    return { answer: { status: f.status, body }, tookEffect: f.tookEffect === true };
  }
}

/** Slack's rate limits: off until `enforce` is called with limits. */
export class RateLimiter {
  private limiter:
    | {
        limits: RateLimits;
        now: () => number;
        buckets: Map<string, { tokens: number; at: number }>;
      }
    | undefined;

  enforce(limits: RateLimits | false, now: () => number): void {
    this.limiter = limits ? { limits, now, buckets: new Map() } : undefined;
  }

  /** A token bucket per channel (posts) or per workspace (updates); 429 when empty. */
  limited(method: string, args: Json, team: string): Answer | undefined {
    const l = this.limiter;
    if (!l) return undefined;
    const { postMessage: post, update } = l.limits;
    const rule =
      method === 'chat.postMessage'
        ? { key: `post:${str(args.channel)}`, perMs: post.perSecond / 1000, burst: post.burst }
        : method === 'chat.update'
          ? { key: `update:${team}`, perMs: update.perMinute / 60_000, burst: update.burst }
          : undefined;
    if (!rule) return undefined;
    const t = l.now();
    const b = l.buckets.get(rule.key) ?? { tokens: rule.burst, at: t };
    b.tokens = Math.min(rule.burst, b.tokens + (t - b.at) * rule.perMs);
    b.at = t;
    l.buckets.set(rule.key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    const retryAfterSec = Math.max(1, Math.ceil((1 - b.tokens) / rule.perMs / 1000));
    const headers = { 'retry-after': String(retryAfterSec) };
    return { status: 429, body: fail('ratelimited'), headers };
  }
}
