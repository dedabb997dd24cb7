/**
 * What the fake Slack records (every Web API call and response_url post, with what was
 * answered) and the waits tests make on it.
 */
import { isObj, type Json } from './wire.ts';

export interface RecordedCall {
  method: string;
  args: Json;
  /**
   * Whom the call's token stands for: its workspace's team id (an org-wide install's: the
   * org's id); undefined for a token Slack did not take, or none. Never the token itself.
   */
  team?: string;
  /** Exactly what was answered: the JSON object, or the raw text for non-JSON answers. */
  response: unknown;
  status: number;
  /** How long the answer was held back (the latency set for the method); the call took effect at `at`. */
  delayMs: number;
  at: number;
  seq: number;
}
export interface RecordedResponse {
  id: string;
  body: unknown;
  status: number;
  /** How long the answer was held back (the latency set for `'response_url'`). */
  delayMs: number;
  at: number;
  seq: number;
}

/** The calls and response_url posts, in one order; waiters are checked on each. */
export class Recorder {
  readonly calls: RecordedCall[] = [];
  readonly responses: RecordedResponse[] = [];
  private readonly waiters = new Set<() => boolean>();
  private seq = 0;

  callsTo(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  waitFor(predicate: (c: RecordedCall) => boolean, timeoutMs = 5000): Promise<RecordedCall> {
    return this.waitUntil(
      () => this.calls.find(predicate),
      timeoutMs,
      () => `no matching Slack call within ${timeoutMs}ms; calls so far: ${this.callSummary()}`,
    );
  }

  waitForCalls(method: string, count: number, timeoutMs = 5000): Promise<RecordedCall[]> {
    return this.waitUntil(
      () => (this.callsTo(method).length >= count ? this.callsTo(method) : undefined),
      timeoutMs,
      () =>
        `expected ${count} ${method} call(s) within ${timeoutMs}ms, got ${this.callsTo(method).length}; calls so far: ${this.callSummary()}`,
    );
  }

  waitForResponse(
    predicate: (r: RecordedResponse) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<RecordedResponse> {
    return this.waitUntil(
      () => this.responses.find(predicate),
      timeoutMs,
      () => `no matching response_url POST within ${timeoutMs}ms; got ${this.responses.length}`,
    );
  }

  /** One clock and one sequence for calls and response_url posts, so their order is known. */
  stamp(): { at: number; seq: number } {
    return { at: Date.now(), seq: ++this.seq };
  }

  private callSummary(): string {
    const describe = (c: RecordedCall) =>
      isObj(c.response) && c.response.ok === false ? `${c.method}(${c.response.error})` : c.method;
    return this.calls.map(describe).join(', ') || '(none)';
  }

  notify(): void {
    for (const check of [...this.waiters]) check();
  }

  private waitUntil<T>(
    probe: () => T | undefined,
    timeoutMs: number,
    explain: () => string,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = (): boolean => {
        const hit = probe();
        if (hit === undefined) return false;
        cleanup();
        resolve(hit);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(explain()));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      if (!check()) this.waiters.add(check);
    });
  }
}
