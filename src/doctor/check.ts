/** One line of the doctor's report (checks.ts runs them; each check module returns these). */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** What to do about a failure. */
  fix?: string;
}

export type SlackAnswer<T> = ({ ok: true } & T) | { ok: false; error: string };
