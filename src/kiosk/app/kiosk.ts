/**
 * The kiosk's context: language, the signed-in session, the databases and their replication, the
 * roster index and this tablet's own events, and which screen is showing. Screens get this object and
 * render from it; when data changes (a pull, a local write, the language) the current screen is drawn
 * again through its `update`, or whole when it has none.
 */

import { h, replaceChildren } from '../../client/dom.js';
import type { RosterStudent } from '../../domain/roster.js';
import { type Headcount, headcountOf, utcDay } from '../../rules/checkin.js';
import { type AspectView, aspectView, type LocalCheckinEvent } from './checkinState.js';
import { rememberDayKeys } from './dayKeys.js';
import { type Lang, type MessageKey, translate } from './i18n.js';
import { localCheckinEvents, localVisitors } from './outboxEvents.js';
import {
  makePageQueue,
  type PageOutcome,
  type PageQueue,
  type PageRequest,
  type Readiness,
} from './pageQueue.js';
import { makeVolunteerBoard, type VolunteerBoard, volunteersInRoom } from './roomVolunteers.js';
import { buildRosterIndex, checkinAspectKey, type RosterIndex, withStudents } from './rosterIndex.js';
import type { Session } from './session.js';
import { type CheckinConfig, loadConfig, saveConfig, saveLang } from './storage.js';
import type { SyncEngine, SyncEngineState } from './sync.js';

export interface Screen {
  readonly name: string;
  /** Its address inside the app (`#/admin/...`), kept in the location bar; absent: none. */
  readonly hash?: string;
  render(kiosk: Kiosk): HTMLElement;
  /** Redraws what changed without losing focus or typed text; absent: the screen is rendered again. */
  update?(kiosk: Kiosk): void;
}

export interface Kiosk {
  lang(): Lang;
  t(key: MessageKey, params?: Readonly<Record<string, string | number>>): string;
  setLang(lang: Lang): void;
  readonly session: Session;
  readonly sync: SyncEngine;
  index(): RosterIndex;
  config(): CheckinConfig;
  setConfig(config: CheckinConfig): void;
  /** The child's check-in state at a session: the roster with this tablet's events over it. */
  aspect(sessionId: string, studentId: string): AspectView;
  /**
   * The session's headcount as this tablet knows it: the roster's check-ins (live while online, as
   * pulls bring other tablets' and the server's) with this tablet's own events over them.
   */
  headcount(sessionId: string): Headcount;
  /** Volunteers in the session's room, checked in and out at this desk online (`roomVolunteers.ts`). */
  readonly volunteers: VolunteerBoard;
  /** How many volunteers the admission rule and the headcount count in the session's room now. */
  volunteersIn(sessionId: string): number;
  /** Pages the child's guardians now, or queues the page until the server can take it (0037). */
  page(request: PageRequest): Promise<PageOutcome>;
  /** The pages waiting to be sent, and those the server refused after waiting. */
  readonly pages: Pick<PageQueue, 'counts'>;
  /** Writes one event to the outbox, then refreshes the views and asks for a sync pass. */
  record(doc: { readonly _id: string }): Promise<void>;
  reloadRoster(): Promise<void>;
  show(screen: Screen): void;
  /** The name of the screen showing. */
  screenName(): string | undefined;
}

export interface KioskParts {
  readonly root: HTMLElement;
  readonly lang: Lang;
  readonly session: Session;
  readonly sync: SyncEngine;
  readonly header: (kiosk: Kiosk, status: SyncEngineState) => HTMLElement;
  /** The screen shown when one is asked for (self-service mode keeps its own few: 0052); absent: it. */
  readonly guard?: (asked: Screen) => Screen;
}

export const createKiosk = async (parts: KioskParts): Promise<Kiosk> => {
  let lang = parts.lang;
  let index = buildRosterIndex([]);
  let local: LocalCheckinEvent[] = [];
  let visitors: Array<{ readonly eventId: string; readonly student: RosterStudent }> = [];
  let config = loadConfig();
  let screen: Screen | undefined;
  const pages = makePageQueue(parts.session.fetch);
  // The roster's count as of the latest pull (a screen's own session document is as of when it opened).
  const rosterVolunteers = (sessionId: string) =>
    index.sessions.find((s) => s.sessionId === sessionId)?.volunteers;
  const volunteers = makeVolunteerBoard(
    parts.session.fetch,
    () => parts.session.current()?.user.userId,
    rosterVolunteers,
  );
  const headerSlot = h('div', { className: 'header-slot' });
  const content = h('div', { className: 'content' });
  replaceChildren(parts.root, headerSlot, content);

  const loadRoster = async () => {
    const all = await parts.sync.roster.allDocs({ include_docs: true });
    const pulled = buildRosterIndex(all.rows.flatMap((r) => (r.doc === undefined ? [] : [r.doc])));
    const dayKeys = await rememberDayKeys(parts.sync.roster, pulled.dayKeys, utcDay(new Date()));
    index = { ...pulled, dayKeys };
  };
  const loadLocal = async () => {
    const all = await parts.sync.outbox.allDocs({ include_docs: true });
    const docs = all.rows.flatMap((r) => (r.doc === undefined ? [] : [{ ...r.doc }]));
    local = localCheckinEvents(docs);
    visitors = localVisitors(docs);
  };
  /**
   * The roster, with the visitors this tablet registered that the server has not refused; kept until
   * the roster, the outbox or the refusals change (the desk asks for it once per row).
   */
  let merged:
    | { readonly from: readonly [RosterIndex, unknown, number]; readonly index: RosterIndex }
    | undefined;
  const indexNow = (): RosterIndex => {
    const refusals = parts.sync.status().refused;
    const from = [index, visitors, refusals.length] as const;
    if (merged?.from.every((v, i) => v === from[i])) return merged.index;
    const refused = new Set(refusals.map((r) => r.eventId));
    const extra = visitors.filter((v) => !refused.has(v.eventId)).map((v) => v.student);
    merged = { from, index: withStudents(index, extra) };
    return merged.index;
  };

  const drawHeader = () => replaceChildren(headerSlot, parts.header(kiosk, parts.sync.status()));
  const redraw = () => {
    if (screen === undefined) return;
    if (screen.update !== undefined) screen.update(kiosk);
    else replaceChildren(content, screen.render(kiosk));
  };

  const kiosk: Kiosk = {
    lang: () => lang,
    t: (key, params) => translate(lang, key, params),
    setLang(next) {
      lang = next;
      saveLang(next);
      document.documentElement.lang = next;
      drawHeader();
      if (screen !== undefined) replaceChildren(content, screen.render(kiosk));
    },
    session: parts.session,
    sync: parts.sync,
    index: indexNow,
    config: () => config,
    setConfig(next) {
      config = next;
      // Kept for the next start, offline: the attempt limit and the emergency policy hold there too.
      saveConfig(next);
    },
    aspect(sessionId, studentId) {
      const refused = new Set(parts.sync.status().refused.map((r) => r.eventId));
      const mine = local.filter((e) => e.sessionId === sessionId && e.studentId === studentId);
      return aspectView(index.checkins.get(checkinAspectKey(sessionId, studentId)), mine, refused);
    },
    headcount(sessionId) {
      const prefix = checkinAspectKey(sessionId, '');
      const children = new Set<string>();
      for (const key of index.checkins.keys())
        if (key.startsWith(prefix)) children.add(key.slice(prefix.length));
      for (const e of local) if (e.sessionId === sessionId) children.add(e.studentId);
      return headcountOf([...children].map((studentId) => kiosk.aspect(sessionId, studentId).checkins));
    },
    volunteers,
    volunteersIn: (sessionId) => volunteersInRoom(rosterVolunteers(sessionId), volunteers.known(sessionId)),
    page: (request) => pages.send(request, pageReadiness(request)),
    pages,
    async record(doc) {
      await parts.sync.outbox.put(doc);
      await loadLocal();
      await parts.sync.recount();
      redraw();
      parts.sync.kick();
    },
    async reloadRoster() {
      await loadRoster();
      // Counted on the page, so a test (or a person at the devtools) can tell a pull has landed.
      document.body.dataset.rosterPulls = String(Number(document.body.dataset.rosterPulls ?? '0') + 1);
      volunteers.rosterPulled();
      redraw();
      // A pull may have confirmed the check-in a waiting page is for.
      flushPages();
    },
    show(asked) {
      const next = parts.guard?.(asked) ?? asked;
      screen = next;
      document.body.dataset.screen = next.name;
      // Replaced, not pushed: a kiosk has no back button to walk the history with.
      if (location.hash !== (next.hash ?? '')) {
        history.replaceState(null, '', `${location.pathname}${location.search}${next.hash ?? ''}`);
      }
      drawHeader();
      replaceChildren(content, next.render(kiosk));
    },
    screenName: () => screen?.name,
  };

  /**
   * A page waits while its check-in is this tablet's alone (not on the server yet: the server would not
   * know it); a check-in the roster does not name at all goes, and the server's answer settles it.
   */
  function pageReadiness(p: PageRequest): Readiness {
    const c = kiosk.aspect(p.sessionId, p.studentId).checkins.find((v) => v.checkInId === p.checkInId);
    return c?.pending === true ? 'wait' : 'send';
  }
  const flushPages = () => {
    if (pages.counts().waiting > 0) void pages.flush(pageReadiness);
  };
  pages.onChange(drawHeader);
  // Only a screen that redraws in place: a form elsewhere must not lose what is typed in it.
  volunteers.onChange(() => screen?.update?.(kiosk));

  let refusedSeen = 0;
  parts.sync.onStatus((s) => {
    drawHeader();
    if (s.online && !s.syncing) flushPages();
    // A refused event stops counting on the desk.
    if (s.refused.length !== refusedSeen) {
      refusedSeen = s.refused.length;
      redraw();
    }
  });
  parts.sync.onRosterChanged(() => {
    void kiosk.reloadRoster();
  });
  document.documentElement.lang = lang;
  await loadRoster();
  await loadLocal();
  await pages.load();
  await parts.sync.recount();
  return kiosk;
};
