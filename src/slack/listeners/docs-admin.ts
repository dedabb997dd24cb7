import type { App } from '@slack/bolt';
import type { ModalView } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import type { Inflight } from '../../inflight.ts';
import type { Logger } from '../../log.ts';
import type { DocsAdmin, DocsState, WorkspaceRef } from '../../workspaces/docs-admin.ts';
import { SettingsInvalid } from '../../workspaces/vault.ts';
import { refusalModal } from '../access-middleware.ts';
import { DOCS_ACTIONS, DOCS_VIEWS } from '../connect-blocks.ts';
import { checkErrors, readConnectForm, readSettingsForm, settingErrors } from '../connect-form.ts';
import { connectModal, settingsModal } from '../connect-modals.ts';
import {
  type ActionArgs,
  type AdmitDeps,
  type Admitted,
  admit,
  type ViewArgs,
} from './docs-admit.ts';

/**
 * The App Home's docs buttons and forms (distributed mode): Connect a docs project, Replace
 * key, Disconnect (Slack's confirm dialog first), Settings, and the two forms' submissions.
 * Each request is admitted first (./docs-admit.ts: a workspace admin of the workspace it was
 * authorized for, by what is stored). The connect form is answered within Slack's 3 s: its
 * shapes, then the key's one check read, then the field errors or the form closed.
 */

export interface DocsAdminListenerDeps {
  docs: DocsAdmin;
  /** Publishes the person's Home with the request's client (its workspace's token). */
  publishHome(ws: WorkspaceRef, userId: string, client: WebClient): Promise<void>;
  inflight: Inflight;
  log: Logger;
}

export function registerDocsAdmin(app: App, deps: DocsAdminListenerDeps): void {
  const log = deps.log.child({ component: 'docs-admin' });
  const home = (ws: WorkspaceRef, userId: string, client: WebClient) =>
    deps.publishHome(ws, userId, client).catch((err: unknown) => {
      log.warn({ err, userId }, 'docs.home_failed');
    });
  const admitDeps: AdmitDeps = {
    docs: deps.docs,
    home: (ws, userId, args) => home(ws, userId, args.client),
    log,
  };
  registerButtons(app, deps, admitDeps, home);
  registerForms(app, deps, admitDeps, home);
}

type Home = (ws: WorkspaceRef, userId: string, client: WebClient) => Promise<void>;

function registerButtons(app: App, deps: DocsAdminListenerDeps, admitDeps: AdmitDeps, home: Home) {
  const open = async (a: Admitted, client: WebClient, view: ModalView) => {
    const trigger = a.claims.trigger_id;
    if (!trigger) return;
    await client.views.open({ trigger_id: trigger, view }).catch((err: unknown) => {
      admitDeps.log.warn({ err, userId: a.userId }, 'docs.form_failed');
    });
  };
  const formWs = (s: DocsState) => ({ teamId: s.ws.teamId, enterpriseId: s.ws.enterpriseId });
  const on = (name: string, act: (a: Admitted, args: ActionArgs) => Promise<void>) =>
    app.action(name, (args) =>
      deps.inflight.track(
        (async () => {
          const a = await admit(args, 'action', name, admitDeps);
          if (!a) return;
          await args.ack();
          await act(a, args);
        })(),
      ),
    );

  on(DOCS_ACTIONS.connect, (a, { client }) => open(a, client, connectModal(formWs(a.state))));
  on(DOCS_ACTIONS.replaceKey, async (a, { client }) => {
    const c = a.state.connection;
    if (!c) return home(a.ws, a.userId, client);
    await open(a, client, connectModal(formWs(a.state), { projectId: c.projectId }));
  });
  on(DOCS_ACTIONS.settings, (a, { client }) =>
    open(a, client, settingsModal(formWs(a.state), a.state.settings, a.state.installerUserId)),
  );
  on(DOCS_ACTIONS.disconnect, async (a, { client }) => {
    await deps.docs.disconnect(a.ws, a.userId);
    await home(a.ws, a.userId, client);
  });
}

/** What a form that failed on our side (the store, most likely) turns into. */
const FAILED =
  'Something went wrong on our side (logged for whoever runs Docs Agent), so this may not have been saved. Open the form again from the Home tab and try again.';

function registerForms(app: App, deps: DocsAdminListenerDeps, admitDeps: AdmitDeps, home: Home) {
  const on = (name: string, submitted: (a: Admitted, args: ViewArgs) => Promise<void>) =>
    app.view(name, (args) =>
      deps.inflight.track(
        (async () => {
          const a = await admit(args, 'view', name, admitDeps);
          if (a) await submitted(a, args);
        })().catch(async (err: unknown) => {
          admitDeps.log.error({ err, name, userId: args.body.user.id }, 'docs.form_failed');
          // Unless the form was answered already (Bolt refuses a second answer).
          const view = refusalModal(FAILED);
          await args.ack({ response_action: 'update', view }).catch(() => {});
        }),
      ),
    );

  on(DOCS_VIEWS.connect, async (a, args) => {
    const form = readConnectForm(a.claims.view?.state?.values);
    if (!form.ok) return args.ack({ response_action: 'errors', errors: form.errors });
    const outcome = await deps.docs.connect(a.ws, { ...form.value, userId: a.userId });
    if (!outcome.ok) {
      const errors = checkErrors(outcome, form.value.projectId);
      return args.ack({ response_action: 'errors', errors });
    }
    await args.ack();
    await home(a.ws, a.userId, args.client);
  });

  on(DOCS_VIEWS.settings, async (a, args) => {
    const settings = readSettingsForm(a.claims.view?.state?.values);
    try {
      await deps.docs.saveSettings(a.ws, settings, a.userId);
    } catch (err) {
      if (!(err instanceof SettingsInvalid)) throw err;
      return args.ack({ response_action: 'errors', errors: settingErrors(err.fields) });
    }
    await args.ack();
    await home(a.ws, a.userId, args.client);
  });
}
