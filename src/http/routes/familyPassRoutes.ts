/** The family pass (decision 0049): the printable card, the stub's QR text, and revocation. */
import * as E from 'fp-ts/lib/Either.js';
import {
  FamilyPassCard,
  FamilyPassContent,
  FamilyPassIssued,
  FamilyPassQuery,
} from '../../domain/familyPass.js';
import { StudentIdParams } from '../../domain/student.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

const WHAT_IT_IS =
  'A family is the children who share a guardian phone (decision 0027); a child belongs to the family of the ' +
  'first phone on its record. The QR code holds an opaque token and no personal data; a tablet checks it ' +
  'offline against its roster, which carries only a hash of it. It checks a family in, never a child out.';

export const getFamilyPassRoute = defineRoute({
  operationId: 'getFamilyPass',
  method: 'get',
  path: '/api/v1/students/{studentId}/family-pass',
  auth: 'cadastro',
  summary: "The printable family pass of a child's family (SVG, or PNG with `format=png`)",
  description:
    `${WHAT_IT_IS} The card shows the QR code, the guardian's first name and the children's first names, ` +
    'nothing else personal. The same card is answered until the pass is revoked. 404 for an unknown child, ' +
    '409 `NO_FAMILY` for a child without a guardian phone, 409 `CONFLICT` for a deleted one. Every read is audited.',
  tags: ['students'],
  params: StudentIdParams,
  query: FamilyPassQuery,
  response: {
    status: 200,
    description: 'The card: `image/svg+xml`, or `image/png` at 300 dpi with `format=png`.',
    codec: FamilyPassCard,
    mediaType: 'image/svg+xml',
    headers: { 'Content-Disposition': 'The file name a download is saved under (`inline`).' },
  },
  errors: ['NOT_FOUND', 'CONFLICT', 'NO_FAMILY'],
  auditRead: 'READ_SENSITIVE',
  handler: async ({ params, query, deps }) => {
    const format = query.format ?? 'svg';
    const card = await deps.registration.familyPasses.card(params.studentId, format);
    return E.map((c: { body: Uint8Array; mediaType: 'image/svg+xml' | 'image/png' }) => ({
      body: c.body,
      mediaType: c.mediaType,
      headers: { 'Content-Disposition': `inline; filename="cartao-familia.${format}"` },
    }))(card);
  },
});

export const getFamilyPassContentRoute = defineRoute({
  operationId: 'getFamilyPassContent',
  method: 'get',
  path: '/api/v1/students/{studentId}/family-pass/content',
  auth: 'chamador',
  permission: 'attendance',
  summary: "The text of a child's family pass, for the guardian's stub printed at check-in",
  description:
    `${WHAT_IT_IS} A tablet holds no pass (a stolen one could otherwise print every family's): it asks for ` +
    "this while online, and prints the stub without the QR code when it cannot. Errors as the card's. " +
    'Every read is audited.',
  tags: ['students'],
  params: StudentIdParams,
  response: { status: 200, description: "The QR code's text.", codec: FamilyPassContent },
  errors: ['NOT_FOUND', 'CONFLICT', 'NO_FAMILY'],
  auditRead: 'READ_SENSITIVE',
  handler: async ({ params, deps }) => {
    const content = await deps.registration.familyPasses.content(params.studentId);
    return E.map((body: FamilyPassContent) => ({ body }))(content);
  },
});

export const revokeFamilyPassRoute = defineRoute({
  operationId: 'revokeFamilyPass',
  method: 'post',
  path: '/api/v1/students/{studentId}/family-pass/revoke',
  auth: 'admin',
  summary: "Replace the family pass of a child's family (a lost card)",
  description:
    `${WHAT_IT_IS} The old pass is refused by every tablet from its next roster pull, and a new one is ` +
    'issued at once: `GET …/family-pass` prints it. The family is not left without a pass: a lost card is ' +
    'replaced, not disabled. Errors as the card’s.',
  tags: ['students'],
  params: StudentIdParams,
  response: { status: 200, description: 'The new pass was issued.', codec: FamilyPassIssued },
  errors: ['NOT_FOUND', 'CONFLICT', 'NO_FAMILY'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const issued = await ctx.deps.registration.familyPasses.revoke(actor.right, ctx.params.studentId);
    return E.map((body: FamilyPassIssued) => ({ body }))(issued);
  },
});

export const familyPassRoutes = [getFamilyPassRoute, getFamilyPassContentRoute, revokeFamilyPassRoute];
