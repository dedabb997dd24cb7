import { z } from 'zod';

/** What a click on a report's message carries, whatever was clicked (a button, a menu). */
export const ReportAction = z.object({
  type: z.literal('block_actions'),
  team: z.object({ id: z.string().min(1) }),
  user: z.object({ id: z.string().min(1) }),
  channel: z.object({ id: z.string().min(1) }),
  trigger_id: z.string().min(1),
  container: z.object({ message_ts: z.string().min(1).optional() }).optional(),
});
