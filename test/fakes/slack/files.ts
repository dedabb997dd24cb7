/**
 * Files, by Slack's upload flow (v2): files.getUploadURLExternal hands out an upload URL,
 * the bytes are POSTed there, and files.completeUploadExternal shares them in a channel.
 * The older files.upload is answered `method_deprecated`, as Slack does since 2025.
 */
import { blocksError, threadTsError } from './checks.ts';
import type { Messages } from './messages.ts';
import {
  type Answer,
  type Caller,
  fail,
  type Handler,
  isObj,
  type Json,
  multipart,
  str,
} from './wire.ts';

export interface StoredFile {
  id: string;
  name: string;
  title: string;
  mimetype: string;
  filetype: string;
  bytes: Buffer;
  created: number;
}

const MIME: Record<string, [string, string]> = {
  txt: ['text/plain', 'text'],
  md: ['text/plain', 'markdown'],
  json: ['application/json', 'json'],
  csv: ['text/csv', 'csv'],
  diff: ['text/plain', 'diff'],
  patch: ['text/plain', 'diff'],
  png: ['image/png', 'png'],
  jpg: ['image/jpeg', 'jpg'],
  pdf: ['application/pdf', 'pdf'],
};

export class FileUploads {
  readonly files = new Map<string, StoredFile>();
  private readonly pendingUploads = new Map<string, { name: string; length: number }>();
  private fileSeq = 0;
  /** How much later than the upload's completion its message appears (0: at once). */
  shareDelayMs = 0;
  private readonly messages: Messages;
  private readonly base: () => string;

  /** `base`: the fake's own URL, where upload URLs point. */
  constructor(messages: Messages, base: () => string) {
    this.messages = messages;
    this.base = base;
  }

  /** The Web API methods answered here, by name. */
  handlers(): [string, Handler][] {
    return [
      ['files.getUploadURLExternal', (a) => this.uploadUrl(a)],
      ['files.completeUploadExternal', (a, caller) => this.completeUpload(a, caller)],
      // Retired by Slack in 2025 in favour of the upload v2 flow above.
      ['files.upload', () => fail('method_deprecated')],
    ];
  }

  /**
   * The bytes POSTed to an upload URL; `fault` is the answer a test queued instead, if any.
   * Answers what to record as the call's arguments, and the HTTP answer.
   */
  receive(
    id: string,
    type: string,
    body: Buffer,
    fault: Answer | undefined,
  ): { args: Json; answer: Answer } {
    const pending = this.pendingUploads.get(id);
    // WebClient posts a multipart form with one file part; curl-style clients post raw bytes.
    const parts = type.startsWith('multipart/form-data') ? multipart(body, type) : [];
    const bytes = (parts.find((p) => p.filename !== undefined) ?? parts[0])?.data ?? body;
    const answer = fault ?? {
      status: pending ? 200 : 404,
      body: pending ? `OK - ${bytes.length}` : 'invalid upload url',
    };
    if (pending && answer.status === 200) {
      const [mimetype, filetype] = MIME[pending.name.split('.').pop() ?? ''] ?? [
        'application/octet-stream',
        'binary',
      ];
      const created = Math.floor(Date.now() / 1000);
      const { name } = pending;
      this.files.set(id, { id, name, title: name, mimetype, filetype, bytes, created });
    }
    return { args: { file_id: id, bytes: bytes.length }, answer };
  }

  private uploadUrl(a: Json): Json {
    const filename = str(a.filename);
    const length = Number(a.length);
    if (!filename || !Number.isInteger(length) || length < 0) return fail('invalid_arguments');
    const file_id = `F${String(++this.fileSeq).padStart(10, '0')}`;
    this.pendingUploads.set(file_id, { name: filename, length });
    return { ok: true, upload_url: `${this.base()}upload/v1/${file_id}`, file_id };
  }

  private completeUpload(a: Json, caller: Caller): Json {
    if (!Array.isArray(a.files) || a.files.length === 0) return fail('invalid_arguments');
    const channel = str(a.channel_id);
    // Slack ignores `blocks` when `initial_comment` is given; otherwise they must be valid.
    const blocks = str(a.initial_comment) ? undefined : a.blocks;
    const err =
      (channel ? this.messages.channelError(channel) : undefined) ??
      threadTsError(a.thread_ts) ??
      (blocks === undefined ? undefined : blocksError(blocks));
    if (err) return err;
    const done: StoredFile[] = [];
    for (const f of a.files) {
      const file = isObj(f) ? this.files.get(str(f.id) ?? '') : undefined;
      if (!file) return fail('file_not_found'); // unknown id, or its bytes were never uploaded
      if (isObj(f) && str(f.title)) file.title = String(f.title);
      done.push(file);
    }
    const json = done.map((f) => this.fileJson(f, caller));
    // Slack shares asynchronously; by default the file message is posted at once, the state
    // most tests await; `shareDelayMs` shows it later, as a busy Slack does.
    const share = () =>
      channel &&
      this.messages.botMessage(
        channel,
        { text: a.initial_comment, thread_ts: a.thread_ts, ...(blocks ? { blocks } : {}) },
        { files: json },
        caller,
      );
    if (this.shareDelayMs > 0) setTimeout(share, this.shareDelayMs);
    else share();
    return { ok: true, files: json };
  }

  private fileJson(f: StoredFile, { team: TEAM, botUser: BOT }: Caller): Json {
    const { id, name, title, mimetype, filetype, created } = f;
    const path = `${TEAM}-${id}/${encodeURIComponent(name)}`;
    return {
      ...{ id, created, timestamp: created, name, title, mimetype, filetype, size: f.bytes.length },
      ...{ user: BOT, user_team: TEAM, mode: 'hosted', is_external: false, is_public: true },
      url_private: `https://files.slack.com/files-pri/${path}`,
      permalink: `https://acme.slack.com/files/${BOT}/${id}/${encodeURIComponent(name)}`,
      // Sharing is asynchronous in Slack: right after completion these are still empty.
      shares: {},
      channels: [],
    };
  }
}
