/**
 * response_url: the URL Slack hands out with a slash command or an interaction, that takes
 * at most 5 posts of JSON with something to show; only issued ids accept posts.
 */
import { type Answer, isObj, str } from './wire.ts';

export class ResponseUrls {
  private readonly uses = new Map<string, number>();

  issue(id: string): void {
    this.uses.set(id, this.uses.get(id) ?? 0);
  }

  /** A post to `/response/<id>`: what was posted, and Slack's answer (`fault`: a queued one). */
  receive(
    id: string,
    body: Buffer,
    fault: Answer | undefined,
  ): { parsed: unknown; answer: Answer } {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString());
    } catch {
      parsed = body.toString();
    }
    const uses = this.uses.get(id);
    const answer: Answer =
      fault ??
      (uses === undefined
        ? { status: 404, body: 'expired_url' }
        : uses >= 5
          ? { status: 404, body: 'used_url' }
          : !isObj(parsed)
            ? { status: 400, body: 'invalid_payload' }
            : !str(parsed.text) && !parsed.blocks && !parsed.delete_original
              ? { status: 400, body: 'no_text' }
              : { status: 200, body: 'ok' });
    if (uses !== undefined && answer.status === 200) this.uses.set(id, uses + 1);
    return { parsed, answer };
  }
}
