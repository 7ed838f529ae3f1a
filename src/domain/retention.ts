/**
 * Retention under the LGPD (decision 0045): how long each kind of record is kept before it is ended
 * (deleted, or anonymised where an aggregate still needs it), the ADMIN's configuration of those
 * periods with its defaults and the legal basis of each, and what a run of the retention job ended
 * or, in its preview, would end.
 */
import * as t from 'io-ts';
import { boundedArray, boundedInt, IsoInstant, nullable, object, ShortText, Text } from './codec.js';

/**
 * What replaces a personal text that a stored shape requires (a name, a justification) once it is
 * anonymised: the same for every record, so nothing about the person can be read back from it.
 */
export const ANONYMISED = '[anonymised]';

/** The configurable periods, in days: the PUT body and the stored document's fields. */
export type RetentionSetting = 'deletedStudentDays' | 'attendanceDays' | 'pageDays' | 'auditDays';

export interface PeriodRule {
  readonly defaultDays: number;
  readonly minDays: number;
  readonly maxDays: number;
  /** What a run does to a record past the period. */
  readonly ends: 'ANONYMISED' | 'DELETED' | 'SUBJECTS_ANONYMISED';
  readonly legalBasis: string;
}

/**
 * The defaults and bounds of each period, and why the record is kept that long (LGPD arts. 7, 11, 15,
 * 16, 37). The lower bounds keep an ADMIN's slip from ending what the service still works with (a
 * check-in a report or a safeguarding question reads; a deletion someone may yet want undone); the
 * upper ones refuse a period that would keep data for good in all but name.
 */
export const PERIOD_RULES: Readonly<Record<RetentionSetting, PeriodRule>> = {
  deletedStudentDays: {
    defaultDays: 30,
    minDays: 1,
    maxDays: 3650,
    ends: 'ANONYMISED',
    legalBasis:
      'LGPD arts. 15 I and 16: the purpose ends with the deletion. The grace period (art. 7 IX, legitimate ' +
      "interest) lets a mistaken deletion be noticed and the family's access request (art. 18 II) be answered " +
      'from the full record. The photo is erased at the deletion itself (art. 11, sensitive data; art. 8 §5).',
  },
  attendanceDays: {
    defaultDays: 1825,
    minDays: 30,
    maxDays: 7300,
    ends: 'DELETED',
    legalBasis:
      "LGPD art. 7 IX (the ministry's legitimate interest in safeguarding: who was in the room and who collected " +
      'the child) and art. 7 VI (exercise of rights in legal proceedings, should a day of care be questioned). ' +
      'Five years by default: a default to confirm with the ministry’s data protection officer (encarregado).',
  },
  pageDays: {
    defaultDays: 90,
    minDays: 1,
    maxDays: 3650,
    ends: 'DELETED',
    legalBasis:
      'LGPD art. 7 IX and art. 6 III (necessity): a page serves the day it was sent and the questions about it ' +
      'that follow; its message may name people.',
  },
  auditDays: {
    defaultDays: 1825,
    minDays: 365,
    maxDays: 7300,
    ends: 'SUBJECTS_ANONYMISED',
    legalBasis:
      'LGPD art. 37 (records of processing operations) and art. 6 X (accountability). Past the period the entry ' +
      'is kept without its subject (art. 12: anonymised data is not personal data): who acted, where, when and ' +
      'with what outcome stay.',
  },
};

/** Idempotency records are kept 24 hours by the contract and purged every minute (decision 0012). */
export const IDEMPOTENCY_HOURS = 24;
export const IDEMPOTENCY_LEGAL_BASIS =
  'LGPD art. 6 III (necessity): a stored response exists only to make a retried request safe; the contract ' +
  'keeps it 24 hours (not configurable).';

export const RETENTION_SETTINGS: ReadonlyArray<RetentionSetting> = [
  'deletedStudentDays',
  'attendanceDays',
  'pageDays',
  'auditDays',
];

export type RetentionPeriods = Readonly<Record<RetentionSetting, number>>;

export const DEFAULT_RETENTION: RetentionPeriods = {
  deletedStudentDays: PERIOD_RULES.deletedStudentDays.defaultDays,
  attendanceDays: PERIOD_RULES.attendanceDays.defaultDays,
  pageDays: PERIOD_RULES.pageDays.defaultDays,
  auditDays: PERIOD_RULES.auditDays.defaultDays,
};

const days = (setting: RetentionSetting, description: string) => {
  const rule = PERIOD_RULES[setting];
  return boundedInt(rule.minDays, rule.maxDays, {
    description: `${description} Default ${rule.defaultDays}; ${rule.minDays} to ${rule.maxDays}.`,
  });
};

const settingFields = {
  deletedStudentDays: days(
    'deletedStudentDays',
    "Days after a student's soft deletion before their personal data is anonymised.",
  ),
  attendanceDays: days(
    'attendanceDays',
    'Days a check-in (and its events) or an attendance mark is kept, counted from its day.',
  ),
  pageDays: days('pageDays', 'Days a page to a guardian is kept, counted from when it was sent.'),
  auditDays: days('auditDays', "Days an audit entry keeps its subject before the subject's ids are removed."),
};

export const RetentionBody = object(
  'RetentionBody',
  settingFields,
  {},
  {
    description: 'Every period, in days (the whole configuration: a PUT replaces it).',
  },
);
export type RetentionBody = t.TypeOf<typeof RetentionBody>;

const SettingC = t.keyof({ deletedStudentDays: null, attendanceDays: null, pageDays: null, auditDays: null });

export const RetentionPeriod = object(
  'RetentionPeriod',
  {
    setting: SettingC,
    days: boundedInt(0, 100_000),
    defaultDays: boundedInt(0, 100_000),
    minDays: boundedInt(0, 100_000),
    maxDays: boundedInt(0, 100_000),
    ends: t.keyof({ ANONYMISED: null, DELETED: null, SUBJECTS_ANONYMISED: null }),
    legalBasis: Text,
  },
  {},
  { description: 'One period: its value, default and bounds, what a run does past it, and why it is kept.' },
);

export const RetentionConfig = object(
  'RetentionConfig',
  {
    ...settingFields,
    idempotencyHours: boundedInt(IDEMPOTENCY_HOURS, IDEMPOTENCY_HOURS, {
      description: IDEMPOTENCY_LEGAL_BASIS,
    }),
    updatedAt: nullable(IsoInstant),
    periods: boundedArray(RetentionPeriod, RETENTION_SETTINGS.length),
  },
  {},
  {
    description:
      '`updatedAt` is null while the defaults apply. `periods` documents each setting: its default, bounds, what ' +
      'ends past it and its legal basis.',
  },
);
export type RetentionConfig = t.TypeOf<typeof RetentionConfig>;

export const RetentionConfigDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('retentionConfig'),
  deletedStudentDays: t.number,
  attendanceDays: t.number,
  pageDays: t.number,
  auditDays: t.number,
  updatedAt: t.string,
});
export type RetentionConfigDoc = t.TypeOf<typeof RetentionConfigDoc>;

/** The ids a preview lists per kind; `count` is always the whole number. */
export const MAX_PREVIEW_IDS = 200;

const Ended = (name: string, description: string) =>
  object(
    name,
    {
      count: boundedInt(0, Number.MAX_SAFE_INTEGER),
      ids: boundedArray(ShortText, MAX_PREVIEW_IDS),
    },
    {},
    {
      description: `${description} The first ${MAX_PREVIEW_IDS} ids at most; \`count\` is the whole number.`,
    },
  );

export const RetentionPreview = object(
  'RetentionPreview',
  {
    asOf: IsoInstant,
    nextRunAt: IsoInstant,
    periods: RetentionBody,
    cutoffs: object(
      'RetentionCutoffs',
      {
        deletedBefore: IsoInstant,
        attendanceBeforeDay: ShortText,
        pagesSentBefore: IsoInstant,
        auditBefore: IsoInstant,
      },
      {},
      { description: 'A record strictly older than its cutoff ends; one at the cutoff is kept.' },
    ),
    studentsAnonymised: Ended(
      'RetentionStudents',
      'Deleted students whose personal data would be anonymised.',
    ),
    photosErased: Ended(
      'RetentionPhotos',
      'Students (deleted) whose stored photo would be erased: a photo outlives its deletion only when it was ' +
        'deleted before the photo was erased at the deletion, or a crash came between the two.',
    ),
    checkInsDeleted: Ended('RetentionCheckIns', 'Check-ins (ids) past the attendance period.'),
    marksDeleted: Ended(
      'RetentionMarks',
      'Attendance marks past the attendance period, as aspects (`attendance:<studentId>:<session or day>`).',
    ),
    pagesDeleted: Ended('RetentionPages', 'Pages to guardians (page ids) past their period.'),
    auditEntriesAnonymised: Ended(
      'RetentionAuditEntries',
      'Audit entries (audit ids) whose subject would be removed.',
    ),
  },
  {},
  {
    description:
      'What the next run would end if it ran now, by the same rule; ids only (no personal data). Idempotency ' +
      'records are not listed: they are purged every minute once 24 hours old (and by each run).',
  },
);
export type RetentionPreview = t.TypeOf<typeof RetentionPreview>;

/** How many records a run ended, by kind: its audit entry, its log line and its metrics. */
export interface RetentionCounts {
  readonly studentsAnonymised: number;
  readonly photosErased: number;
  readonly checkInsDeleted: number;
  readonly marksDeleted: number;
  readonly pagesDeleted: number;
  readonly auditEntriesAnonymised: number;
  /** Idempotency records past their 24 hours, which the minute purge would have removed anyway. */
  readonly idempotencyRecordsDeleted: number;
}

export const RETENTION_KINDS: ReadonlyArray<keyof RetentionCounts> = [
  'studentsAnonymised',
  'photosErased',
  'checkInsDeleted',
  'marksDeleted',
  'pagesDeleted',
  'auditEntriesAnonymised',
  'idempotencyRecordsDeleted',
];
