/**
 * Paging a child's guardians from the door (issue #20 point 5, decision 0037): the request, the page
 * as the tablet and the admins see it (how many phones were reached, never a number), and the stored
 * record.
 */
import * as t from 'io-ts';
import { boundedArray, boundedInt, IsoInstant, nullable, object, refine, ShortText, Uuid } from './codec.js';

export const PAGE_MESSAGE_MAX = 140;

const oneLine = (s: string): boolean => {
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
};

/**
 * One short line for an SMS: 1 to 140 characters with no control characters (a line break or an
 * escape would let a tablet shape the gateway's message beyond the line the volunteer typed).
 */
export const PageMessage = refine(
  t.string,
  (s) => s.trim().length >= 1 && s.length <= PAGE_MESSAGE_MAX && oneLine(s),
  `1 to ${PAGE_MESSAGE_MAX} characters on one line`,
  {
    minLength: 1,
    maxLength: PAGE_MESSAGE_MAX,
    pattern: '^[^\\u0000-\\u001f\\u007f]*$',
    classification: 'personal',
    examples: ['Por favor, venha até a sala 3.'],
  },
);

export const PageBody = object(
  'PageBody',
  {},
  { message: PageMessage },
  { description: 'An optional short message; without one the guardians are asked to come to the room.' },
);
export type PageBody = t.TypeOf<typeof PageBody>;

export const PageParams = object('PageParams', { checkInId: Uuid });

/** A child's record holds at most 10 phones. */
const PhoneCount = boundedInt(0, 10);

export const PageStatus = t.keyof({ SENDING: null, SENT: null });
export type PageStatus = t.TypeOf<typeof PageStatus>;

export const GuardianPage = object(
  'GuardianPage',
  {
    pageId: Uuid,
    checkInId: Uuid,
    studentId: Uuid,
    sessionId: Uuid,
    message: nullable(PageMessage),
    status: PageStatus,
    sentAt: IsoInstant,
    sentBy: ShortText,
    deviceId: nullable(Uuid),
    phonesPaged: PhoneCount,
    phonesFailed: PhoneCount,
  },
  {},
  {
    description:
      "A page sent to a child's guardians: how many of the phones on the child's record the notifier accepted " +
      '(`phonesPaged`) and refused (`phonesFailed`), never the numbers. SENDING: the notifier has not answered yet.',
  },
);
export type GuardianPage = t.TypeOf<typeof GuardianPage>;

/** Pages per child are limited (rules/pages.ts), so a session's list is short. */
export const MAX_PAGES_LISTED = 1_000;

export const GuardianPageList = object(
  'GuardianPageList',
  { items: boundedArray(GuardianPage, MAX_PAGES_LISTED) },
  {},
  { description: `Oldest first; a session's first ${MAX_PAGES_LISTED.toLocaleString('en')} pages at most.` },
);

export const GuardianPageQuery = object('GuardianPageQuery', { sessionId: Uuid });

/** The stored page: one document per page of a child at a session, numbered (`seq`) from 1. */
export const PageDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('page'),
  seq: t.number,
  pageId: t.string,
  checkInId: t.string,
  studentId: t.string,
  sessionId: t.string,
  message: t.union([t.string, t.null]),
  status: PageStatus,
  sentAt: t.string,
  sentBy: t.string,
  deviceId: t.union([t.string, t.null]),
  phonesPaged: t.number,
  phonesFailed: t.number,
});
export type PageDoc = t.TypeOf<typeof PageDoc>;
