/** Gathers what `rules/roster.ts` needs from the stores: the roster as it should be right now. */

import { createHmac } from 'node:crypto';
import { dayKey } from '../crypto/dayKeys.js';
import { passIssuer, rosterPassHashes } from '../crypto/familyPass.js';
import type { AllowedAdult } from '../domain/pickup.js';
import type { AspectDoc } from '../domain/projection.js';
import type { RosterDoc } from '../domain/roster.js';
import type { StudentDoc } from '../domain/student.js';
import { idSetBuilder, idSetWith } from '../lib/idSet.js';
import { utcDay } from '../rules/checkin.js';
import type { AspectProjection } from '../rules/projections.js';
import {
  aspectRosterDoc,
  type FamilyMember,
  type FamilyPasses,
  familyMembersOf,
  rosterFamilyDocs,
  rosterOtherDocs,
  rosterStudentDocs,
} from '../rules/roster.js';
import { photosAllowed } from '../rules/students.js';
import type { CheckinStore } from '../store/checkins.js';
import type { ClassStore } from '../store/classes.js';
import { type ProjectionStore, projectionOfDoc } from '../store/projections.js';
import { inRosterRange, type RosterRange, type RosterStore, type StoredRosterDoc } from '../store/roster.js';
import type { StudentStore } from '../store/students.js';
import type { RosterContext } from './rosterReconciler.js';
import type { StudentDirectory } from './studentDirectory.js';

/**
 * A guardian phone's family key: a keyed hash under the check-in secret (which never leaves the
 * server), so tablets can group siblings without holding the number, and cannot recover it from the
 * key by trying the few billion phone numbers there are.
 */
export const familyKeyOf =
  (secret: Uint8Array) =>
  (phoneDigits: string): string =>
    createHmac('sha256', secret).update(`chamada-family:${phoneDigits}`).digest('base64url').slice(0, 22);

/**
 * The family keys of one pass, each phone's computed once: the student documents and the family
 * documents ask for the same ones (an HMAC is some 20 µs here: 0049).
 */
const familyKeysOfPass = (secret: Uint8Array): ((phoneDigits: string) => string) => {
  const keyOf = familyKeyOf(secret);
  const keys = new Map<string, string>();
  return (digits) => {
    const known = keys.get(digits);
    if (known !== undefined) return known;
    const key = keyOf(digits);
    keys.set(digits, key);
    return key;
  };
};

/**
 * The roster's family passes under `secret` at the stored generations, hashed again each pass: 9–12
 * µs of CPU a family (an HMAC and a SHA-256 at generation 0), half a second a pass at 40,000
 * families (`bench/familyPasses.ts`). Hashes were once held from one pass to the next, about 280
 * bytes a family (14 MB at 50,000) in every instance, to spare a cost measured then at 137 µs a
 * family (decision 0058); measured again, that did not pay for the memory (0075).
 */
export const familyPassesOf = (
  secret: Uint8Array,
  generations: ReadonlyMap<string, number>,
): FamilyPasses => ({
  issuer: passIssuer(secret),
  hashesOf: (familyKey) => rosterPassHashes(secret, familyKey, generations.get(familyKey) ?? 0),
});

/** Today and the next two UTC days: the days a tablet may check children in offline for. */
export const KEY_DAYS = 3;
const DAY_MS = 86_400_000;

const dayAfter = (day: string, n: number): string => utcDay(new Date(Date.parse(day) + n * DAY_MS));

export interface RosterWindow {
  /** Codes derive from the UTC day of the check-in, so the keys follow UTC days. */
  readonly keyDays: ReadonlyArray<string>;
  /**
   * Sessions are dated on the ministry's own calendar, which is a UTC day behind in the Americas in
   * the evening (21:00 in Brazil is already tomorrow in UTC) and a day ahead east of UTC in the
   * morning. The service knows no time zone, so sessions are taken a day either side of the key days:
   * wherever the tablet is, its today and next two days are inside.
   */
  readonly sessionDays: ReadonlyArray<string>;
  /** Events of a session are dated by the device's clock: a day either side of the session days. */
  readonly aspectFrom: string;
  readonly aspectTo: string;
}

export const rosterWindow = (now: Date): RosterWindow => {
  const today = utcDay(now);
  const keyDays = Array.from({ length: KEY_DAYS }, (_, i) => dayAfter(today, i));
  const sessionDays = Array.from({ length: KEY_DAYS + 2 }, (_, i) => dayAfter(today, i - 1));
  return {
    keyDays,
    sessionDays,
    aspectFrom: dayAfter(today, -2),
    aspectTo: dayAfter(today, KEY_DAYS + 1),
  };
};

/** Students read, and their roster documents reconciled, at a time in the full pass. */
export const ROSTER_PAGE = 2_500;

/**
 * The roster ids of the students whose keys are in [from, to) (to undefined: to the last student,
 * and for the student documents to the last id of all, which no other kind follows).
 */
const studentRanges = (from: string, to: string | undefined): RosterRange[] => [
  // ';' follows ':': the first id past every `photo:` one.
  { from: `photo:${from}`, to: to === undefined ? 'photo;' : `photo:${to}` },
  { from: `student:${from}`, to: to === undefined ? undefined : `student:${to}` },
];

/**
 * Families reconciled at a time in the full pass. Every child with a guardian's phone is in a family,
 * so there are about as many families as children: all their documents at once, wanted and stored,
 * passed the 256 MB heap during an import at about 80,000 students (decision 0058).
 */
export const FAMILY_PAGE = 2_500;

/** The family documents' ids: `family:<key>`; ';' follows ':', so `family;` is past them all. */
const FAMILIES_FROM = 'family:';
const FAMILIES_TO = 'family;';

/** The rest of the roster's ids: before, between and after the families, and between the students' two ranges. */
const OTHER_RANGES: ReadonlyArray<RosterRange> = [
  { from: '', to: FAMILIES_FROM },
  { from: FAMILIES_TO, to: 'photo:' },
  { from: 'photo;', to: 'student:' },
];

/**
 * A family member as the full pass holds it until the families' pages: one string, its fields
 * joined by NUL, the family key first (keys are all 22 characters, so the strings sort by family).
 * Held for every child of the roll at once (about 114 bytes each in `bench/familyPasses.ts`, where
 * the member's object with the strings it kept alive took some 270: 67.5 MB at 250,000 students;
 * decision 0076), and copied through JSON so that it holds only its own characters: V8 keeps the
 * parts of a string built by concatenation, and the whole of a string a slice was cut from, alive
 * behind it.
 */
export type PackedMember = string;

export const packMember = (m: FamilyMember): PackedMember =>
  JSON.parse(
    JSON.stringify(`${m.familyKey}\u0000${m.phoneSuffix}\u0000${m.studentId}\u0000${m.guardianName}`),
  );

export const unpackMember = (packed: PackedMember): FamilyMember => {
  const [familyKey = '', phoneSuffix = '', studentId = '', ...guardian] = packed.split('\u0000');
  return { familyKey, phoneSuffix, studentId, guardianName: guardian.join('\u0000') };
};

const familyKeyOfPacked = (packed: PackedMember): string => packed.slice(0, packed.indexOf('\u0000'));

/**
 * `members` (packed, sorted) split into runs of at most `familyPage` families, each with the range of
 * family ids it covers: together the ranges cover every family id, so a stored family no member
 * names any more is in one of them and goes. No members: one range, to delete what is there.
 */
export const familyPages = (
  members: ReadonlyArray<PackedMember>,
  familyPage: number,
): Array<{ readonly range: RosterRange; readonly members: ReadonlyArray<FamilyMember> }> => {
  const pages: Array<{ range: RosterRange; members: ReadonlyArray<FamilyMember> }> = [];
  let from = FAMILIES_FROM;
  let start = 0;
  do {
    const page: FamilyMember[] = [];
    let end = start;
    let families = 0;
    for (; end < members.length; end += 1) {
      const member = unpackMember(members[end] ?? '');
      if (page.at(-1)?.familyKey !== member.familyKey) {
        if (families >= Math.max(1, familyPage)) break;
        families += 1;
      }
      page.push(member);
    }
    const next = members[end];
    const to = next === undefined ? FAMILIES_TO : `${FAMILIES_FROM}${familyKeyOfPacked(next)}`;
    pages.push({ range: { from, to }, members: page });
    from = to;
    start = end;
  } while (start < members.length);
  return pages;
};

/** The roster documents of some students (their thumbnails and pickup adults read), and the adults. */
const studentDocsOf = async (
  deps: {
    readonly directory: Pick<StudentDirectory, 'consentsRecorded'>;
    readonly pickups: {
      allowedAdultsOfAll(students: ReadonlyArray<StudentDoc>): Promise<Map<string, AllowedAdult[]>>;
    };
    readonly thumbnail?: (studentId: string, photoRef: string) => Promise<string | undefined>;
  },
  students: ReadonlyArray<StudentDoc>,
  allowed: (studentId: string) => boolean,
  familyKey: (phoneDigits: string) => string,
): Promise<{ docs: RosterDoc[]; adults: Map<string, AllowedAdult[]> }> => {
  const active = students.filter((s) => s.status === 'ACTIVE');
  const thumbnails = new Map<string, { photoRef: string; data: string }>();
  const thumbnail = deps.thumbnail;
  if (thumbnail !== undefined) {
    for (const s of active) {
      const photoRef = s.photoRef;
      if (photoRef === null || !allowed(s.studentId)) continue;
      const data = await thumbnail(s.studentId, photoRef);
      if (data !== undefined) thumbnails.set(s.studentId, { photoRef, data });
    }
  }
  const adults = await deps.pickups.allowedAdultsOfAll(active);
  const docs = rosterStudentDocs({
    students,
    photosAllowed: allowed,
    consentsRecorded: deps.directory.consentsRecorded,
    thumbnails,
    familyKey,
    adults,
  });
  return { docs, adults };
};

export interface RosterPassResult {
  readonly written: number;
  readonly deleted: number;
  readonly context: RosterContext;
}

/**
 * The roster's full pass: what `rosterDocs` gives for the server's records right now, written where it
 * differs. The students are read from the store a page at a time, in id order, and each page's
 * documents are reconciled against the same ids' range of the roster before the next page is read
 * (the whole roll and its roster at once passed the heap at 100,000 students; decision 0019, tenth
 * round). The ids between and after the pages are reconciled too, so a removed student's documents go.
 */
export const rosterFullPass = (deps: {
  readonly students: Pick<StudentStore, 'eachPage'>;
  readonly directory: Pick<StudentDirectory, 'activeConsents' | 'consentsRecorded'>;
  /** Who may collect each child: the pickup service answers it (the tablets' gate checks it offline). */
  readonly pickups: {
    allowedAdultsOfAll(students: ReadonlyArray<StudentDoc>): Promise<Map<string, AllowedAdult[]>>;
  };
  readonly classes: Pick<ClassStore, 'listSessions' | 'listClasses'>;
  /** The day keys' secret, and the record fields the church requires before a check-in. */
  readonly checkins: Pick<CheckinStore, 'secret' | 'config'>;
  /**
   * Volunteers in a session's room now (the volunteer service); absent: the roster carries no count.
   * Asked only for the sessions whose room has a ratio: no other needs it.
   */
  readonly volunteersInRoom?: (sessionId: string) => Promise<number>;
  readonly projections: Pick<ProjectionStore, 'eachAspectByDay'>;
  /** `keepRangeMemos` absent: the pass's memos are not kept for the next start (0070). */
  readonly roster: Pick<RosterStore, 'reconcileRange'> & Partial<Pick<RosterStore, 'keepRangeMemos'>>;
  readonly clock: () => Date;
  /**
   * Each family's pass generation above 0 (0049); absent: the roster carries no family documents
   * (and so no family passes).
   */
  readonly familyPassGenerations?: () => Promise<ReadonlyMap<string, number>>;
  /** The stored thumbnail of a child's photo by its key, as base64 (photoService). */
  readonly thumbnail?: (studentId: string, photoRef: string) => Promise<string | undefined>;
  /** Students a page (tests make it small to cross pages). */
  readonly pageSize?: number;
  /** Families a page (tests make it small to cross pages). */
  readonly familyPageSize?: number;
}) => {
  return async (): Promise<RosterPassResult> => {
    const now = deps.clock();
    const days = rosterWindow(now);
    const secret = await deps.checkins.secret(now.toISOString());
    const allowed = (id: string) => photosAllowed(deps.directory.activeConsents(id));
    const activeBuilt = idSetBuilder();
    // Gathered across the pages: a family's children may be on any of them.
    const members: PackedMember[] = [];
    let written = 0;
    let deleted = 0;
    const ranges: RosterRange[] = [];
    const reconcile = async (range: RosterRange, docs: ReadonlyArray<RosterDoc>) => {
      ranges.push(range);
      const r = await deps.roster.reconcileRange(range, docs);
      written += r.written;
      deleted += r.deleted;
    };
    // The students' keys below `from` are done.
    let from = '';
    // A roll of one page is reconciled with the rest, in one read of the roster: on CouchDB each
    // range is a request, and a student's creation runs this pass (decision 0019, eighth round).
    let first = true;
    let whole: RosterDoc[] | undefined;
    await deps.students.eachPage(deps.pageSize ?? ROSTER_PAGE, async (page, last) => {
      const active = page.filter((s) => s.status === 'ACTIVE');
      for (const s of active) activeBuilt.add(s.studentId);
      // A page's keys held for the page alone: its student and family documents ask for the same
      // phones, and a pass-wide map held every phone of the roll (15 MB at 250,000; 0076).
      const familyKey = familyKeysOfPass(secret);
      const { docs, adults } = await studentDocsOf(deps, page, allowed, familyKey);
      if (deps.familyPassGenerations !== undefined)
        for (const m of familyMembersOf({ students: active, adults }, familyKey)) members.push(packMember(m));
      if (first && last) {
        whole = docs;
        return;
      }
      first = false;
      const lastStudent = page.at(-1);
      // The smallest key after the page's last: the next page starts there.
      const to = last || lastStudent === undefined ? undefined : `${lastStudent.studentId}\u0000`;
      for (const range of studentRanges(from, to))
        await reconcile(
          range,
          docs.filter((d) => inRosterRange(d._id, range)),
        );
      if (to !== undefined) from = to;
    });
    const activeIds = activeBuilt.build();
    // Only version and state of each aspect are kept, a page at a time.
    const aspects: Array<{ version: string | null; state: AspectProjection['state'] }> = [];
    const keep = (doc: AspectDoc) => {
      const p = projectionOfDoc(doc);
      if (p !== undefined) aspects.push({ version: p.version, state: p.state });
    };
    await deps.projections.eachAspectByDay('checkin', days.aspectFrom, days.aspectTo, keep);
    await deps.projections.eachAspectByDay('attendance', days.aspectFrom, days.aspectTo, keep);
    const sessions = (await deps.classes.listSessions()).filter((s) => days.sessionDays.includes(s.date));
    const classes = await deps.classes.listClasses();
    const generations = await deps.familyPassGenerations?.();
    const passes = generations === undefined ? undefined : familyPassesOf(secret, generations);
    // The issuer's document alone; the families follow, a page at a time, unless the roll is one page.
    const families =
      passes === undefined
        ? []
        : rosterFamilyDocs(whole === undefined ? [] : members.map(unpackMember), passes);
    const others = rosterOtherDocs(
      {
        classes,
        sessions,
        volunteers: await volunteersOf(sessions, classes, deps.volunteersInRoom),
        requiredFields: (await deps.checkins.config()).requiredFields,
        dayKeys: days.keyDays.map((day) => ({
          day,
          key: Buffer.from(dayKey(secret, day)).toString('base64url'),
        })),
        aspects,
      },
      activeIds,
    ).concat(families);
    if (whole !== undefined) await reconcile({ from: '', to: undefined }, [...whole, ...others]);
    else {
      for (const range of OTHER_RANGES)
        await reconcile(
          range,
          others.filter((d) => inRosterRange(d._id, range)),
        );
      members.sort();
      for (const page of familyPages(members, deps.familyPageSize ?? FAMILY_PAGE))
        await reconcile(
          page.range,
          passes === undefined
            ? []
            : rosterFamilyDocs(page.members, passes).filter((d) => inRosterRange(d._id, page.range)),
        );
    }
    await deps.roster.keepRangeMemos?.(ranges);
    return {
      written,
      deleted,
      context: { sessionIds: new Set(sessions.map((s) => s.sessionId)), activeIds },
    };
  };
};

/** Volunteers in the rooms of the sessions whose class has a ratio, by session id. */
const volunteersOf = async (
  sessions: ReadonlyArray<{ readonly sessionId: string; readonly classId: string }>,
  classes: ReadonlyArray<{ readonly classId: string; readonly childrenPerVolunteer?: number | null }>,
  inRoom: ((sessionId: string) => Promise<number>) | undefined,
): Promise<ReadonlyMap<string, number>> => {
  if (inRoom === undefined) return new Map();
  const ratioed = new Set(
    classes.filter((c) => (c.childrenPerVolunteer ?? null) !== null).map((c) => c.classId),
  );
  const counted = sessions.filter((s) => ratioed.has(s.classId));
  return new Map(
    await Promise.all(counted.map(async (s) => [s.sessionId, await inRoom(s.sessionId)] as const)),
  );
};

/** The roster documents of some check-in and attendance aspects (named as aspects), in `context`. */
export const rosterForAspects =
  (deps: { readonly projections: ProjectionStore }) =>
  async (aspects: ReadonlyArray<string>, context: RosterContext): Promise<RosterDoc[]> => {
    const projected = await deps.projections.project(aspects);
    return [...projected.values()].flatMap((p) => {
      const doc = aspectRosterDoc(
        { version: p.version, state: p.state },
        context.sessionIds,
        context.activeIds,
      );
      return doc === undefined ? [] : [doc];
    });
  };

/** The full pass's dependencies that a students' pass reads too. */
type SharedPassDeps = Omit<
  Parameters<typeof rosterFullPass>[0],
  'students' | 'roster' | 'pageSize' | 'familyPageSize'
>;

/**
 * Students at a time in a students' pass: a file's worth of children is read and reconciled a page
 * at a time, as the full pass does.
 */
export const STUDENTS_PASS_PAGE = ROSTER_PAGE;

/**
 * The roster documents of some students whose records changed, and of the families they were or are
 * in, reconciled without reading the roll (issue #41: a full pass after each creation, or each
 * imported file, read every student; at 100,000 that is the import's cost past its file, and on
 * CouchDB the work that runs into the next file). What it leaves is what a full pass would, for:
 * - the students' own documents (`student:` and `photo:`);
 * - every family a student was in (its stored document's `families`) or is in now: its members are
 *   the stored family's others, read again (a member that left it since is left out), and the
 *   students of the pass that name it;
 * - the check-in and attendance documents of a student who becomes one of the roster's active
 *   students (a visitor registered at a tablet offline may have been checked in before the server
 *   knew the child).
 * A student that is not active, or not found, changes what other documents hold (its aspects go,
 * its families lose it): undefined, and the caller runs a full pass instead (its page writes nothing;
 * the pages before it wrote what the full pass writes too). Pages are read and written one after the
 * other, a page of records held at a time, so a family two pages name is read back as the page before
 * left it.
 */
export const rosterStudentsPass = (
  deps: SharedPassDeps & {
    readonly students: Pick<StudentStore, 'getMany'>;
    readonly roster: Pick<RosterStore, 'reconcileSome' | 'stored' | 'replaceAsRead'>;
    /** Students a page (tests make it small to cross pages). */
    readonly pageSize?: number;
  },
) => {
  return async (
    studentIds: ReadonlyArray<string>,
    context: RosterContext,
  ): Promise<RosterPassResult | undefined> => {
    const now = deps.clock();
    const ids = [...new Set(studentIds)];
    const size = Math.max(1, deps.pageSize ?? STUDENTS_PASS_PAGE);
    const secret = await deps.checkins.secret(now.toISOString());
    const familyKey = familyKeysOfPass(secret);
    const allowed = (id: string) => photosAllowed(deps.directory.activeConsents(id));
    const generations = await deps.familyPassGenerations?.();
    const passes = generations === undefined ? undefined : familyPassesOf(secret, generations);
    const entering = ids.filter((id) => !context.activeIds.has(id));
    const activeIds = entering.length === 0 ? context.activeIds : idSetWith(context.activeIds, entering);
    let written = 0;
    let deleted = 0;
    for (let i = 0; i < ids.length; i += size) {
      const page = ids.slice(i, i + size);
      const found = await deps.students.getMany(page);
      const students: StudentDoc[] = [];
      for (const id of page) {
        const s = found.get(id);
        // What the pages before wrote is what the full pass writes too.
        if (s === undefined || s.status !== 'ACTIVE') return undefined;
        students.push(s);
      }
      const { docs, adults } = await studentDocsOf(deps, students, allowed, familyKey);
      // The students' documents as stored, when the families read them (a second read spared).
      let studentsRead: ReadonlyMap<string, StoredRosterDoc | undefined> | undefined;
      if (passes !== undefined) {
        // Read before the students' documents are written: a family's members come from them.
        const families = await familiesAround(deps, students, adults, familyKey);
        studentsRead = families.students;
        const wanted = new Map(
          rosterFamilyDocs(families.members, passes)
            .filter((d) => d.docType === 'rosterFamily')
            .map((d) => [d._id, d]),
        );
        const r = await deps.roster.replaceAsRead(
          [...families.read].map(([id, read]) => ({ id, read, doc: wanted.get(id) })),
        );
        // Another writer (an instance on the same CouchDB) changed a family since it was read, maybe
        // from a member this pass did not read: only a full pass knows all its members.
        if (r === 'CONFLICT') return undefined;
        written += r.written;
        deleted += r.deleted;
      }
      const r = await deps.roster.reconcileSome(
        students.flatMap((s) => [`student:${s.studentId}`, `photo:${s.studentId}`]),
        docs,
        studentsRead,
      );
      written += r.written;
      deleted += r.deleted;
    }
    if (entering.length > 0) {
      const aspects = await aspectDocsOf(
        deps,
        rosterWindow(now),
        new Set(entering),
        context.sessionIds,
        activeIds,
      );
      // Only what the aspects give: another student's aspect is not this pass's to remove.
      const r = await deps.roster.reconcileSome(
        aspects.map((d) => d._id),
        aspects,
      );
      written += r.written;
      deleted += r.deleted;
    }
    return { written, deleted, context: { sessionIds: context.sessionIds, activeIds } };
  };
};

/**
 * The families `students` were in (their stored roster documents say) or are in now, with all their
 * members as the records are now: the students' own, and the others each stored family names, read
 * again.
 */
const familiesAround = async (
  deps: Pick<SharedPassDeps, 'pickups'> & {
    readonly students: Pick<StudentStore, 'getMany'>;
    readonly roster: Pick<RosterStore, 'stored'>;
  },
  students: ReadonlyArray<StudentDoc>,
  adults: Map<string, AllowedAdult[]>,
  familyKey: (phoneDigits: string) => string,
): Promise<{
  read: Map<string, StoredRosterDoc | undefined>;
  members: FamilyMember[];
  students: Map<string, StoredRosterDoc | undefined>;
}> => {
  const own = familyMembersOf({ students, adults }, familyKey);
  const keys = new Set(own.map((m) => m.familyKey));
  const studentIds = students.map((s) => `student:${s.studentId}`);
  const storedStudents = await deps.roster.stored(studentIds);
  for (const { doc } of storedStudents.values())
    if (doc?.docType === 'rosterStudent') for (const k of doc.families ?? []) keys.add(k);
  const ids = [...keys].map((k) => `family:${k}`);
  const storedFamilies = await deps.roster.stored(ids);
  const mine = new Set(students.map((s) => s.studentId));
  const others = new Set<string>();
  for (const { doc } of storedFamilies.values())
    if (doc?.docType === 'rosterFamily') for (const id of doc.studentIds) if (!mine.has(id)) others.add(id);
  const otherStudents = [...(await deps.students.getMany([...others])).values()].filter(
    (s) => s.status === 'ACTIVE',
  );
  const otherAdults = await deps.pickups.allowedAdultsOfAll(otherStudents);
  const theirs = familyMembersOf({ students: otherStudents, adults: otherAdults }, familyKey).filter((m) =>
    keys.has(m.familyKey),
  );
  // In student id order within each family, as the full pass gathers them.
  const members = [...own, ...theirs].sort((a, b) =>
    a.studentId < b.studentId ? -1 : a.studentId > b.studentId ? 1 : 0,
  );
  return {
    read: new Map(ids.map((id) => [id, storedFamilies.get(id)])),
    members,
    students: new Map(studentIds.map((id) => [id, storedStudents.get(id)])),
  };
};

/** The check-in and attendance documents of the students `of`, in the roster's window. */
const aspectDocsOf = async (
  deps: Pick<SharedPassDeps, 'projections'>,
  days: RosterWindow,
  of: ReadonlySet<string>,
  sessionIds: ReadonlySet<string>,
  activeIds: Pick<ReadonlySet<string>, 'has'>,
): Promise<RosterDoc[]> => {
  const docs: RosterDoc[] = [];
  const keep = (doc: AspectDoc) => {
    const p = projectionOfDoc(doc);
    if (p?.state === undefined || p.state === null || !of.has(p.state.studentId)) return;
    const made = aspectRosterDoc({ version: p.version, state: p.state }, sessionIds, activeIds);
    if (made !== undefined) docs.push(made);
  };
  await deps.projections.eachAspectByDay('checkin', days.aspectFrom, days.aspectTo, keep);
  await deps.projections.eachAspectByDay('attendance', days.aspectFrom, days.aspectTo, keep);
  return docs;
};
