import type { z } from 'zod';

/**
 * A JSON string we put in Slack (a button's value, a modal's private_metadata) read back
 * with `schema`: undefined when it is not JSON or not of that shape (an older bot wrote it,
 * or someone crafted it), for the caller to answer as "out of date".
 */
export function readJson<S extends z.ZodType>(schema: S, raw: string): z.infer<S> | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
