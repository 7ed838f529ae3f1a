/**
 * The data-subject access export (LGPD art. 18) as the API answers it: everything held about a
 * student in one document (src/registration/studentExport.ts gathers it).
 */
import * as t from 'io-ts';
import { AuditEntry } from './audit.js';
import { boundedString, IsoInstant, nullable, object, ShortText } from './codec.js';
import { Consent } from './consent.js';
import { MAX_PHOTO_BYTES, StudentPhoto } from './photo.js';
import { Student } from './student.js';

export const EventRecord = object(
  'EventRecord',
  {
    eventId: ShortText,
    type: ShortText,
    subjectType: ShortText,
    subjectId: ShortText,
    payload: t.UnknownRecord,
    actor: object('EventActor', { userId: ShortText, role: ShortText }),
    deviceId: t.union([ShortText, t.null]),
    clientTimestamp: ShortText,
    serverTimestamp: ShortText,
  },
  { aspect: ShortText, baseVersion: t.union([ShortText, t.null]) },
);

export const StudentExport = object(
  'StudentExport',
  {
    exportedAt: IsoInstant,
    student: Student,
    imageConsents: t.array(Consent),
    events: t.array(EventRecord),
    auditEntries: t.array(AuditEntry),
    checkIns: t.array(t.UnknownRecord),
    pickupEntries: t.array(t.UnknownRecord),
    pickupAuthorizations: t.array(t.UnknownRecord),
  },
  {
    photo: nullable(
      object('ExportedPhoto', {
        stored: StudentPhoto,
        jpegBase64: boundedString(1, Math.ceil((MAX_PHOTO_BYTES * 4) / 3) + 4, {
          classification: 'sensitive',
          description: 'The stored image (JPEG), base64.',
        }),
      }),
    ),
  },
  {
    description:
      'Everything held about the student. Itself audited (action EXPORT). Once a deleted student is anonymised ' +
      '(`student.anonymisedAt`, decision 0045) it is what is left: no personal value anywhere in it.',
  },
);
export type StudentExport = t.TypeOf<typeof StudentExport>;
