/**
 * The endpoints the browser apps call, each declared with the `src/domain` codecs its route declares
 * (test/client/endpoints.test.ts holds every one to the server's registry: same method and path, the
 * same codec values). `apiOf(transport)` turns them into typed functions.
 */
import { AuditPage, AuditQuery } from '../domain/audit.js';
import {
  ActivityListQuery,
  ClassC,
  ClassList,
  ClassSession,
  ClassSessionList,
  ClassSessionListQuery,
  CreateClassBody,
  CreateClassSessionBody,
  CreateNucleusBody,
  Nucleus,
  NucleusList,
  PatchClassBody,
  PatchClassSessionBody,
  PatchNucleusBody,
} from '../domain/classes.js';
import {
  Consent,
  ConsentHistory,
  ConsentQuery,
  CreateConsentBody,
  RevokeConsentBody,
} from '../domain/consent.js';
import { FamilyPassCard, FamilyPassIssued, FamilyPassQuery } from '../domain/familyPass.js';
import { PhotoImage, PhotoQuery, PhotoUpload, StudentPhoto } from '../domain/photo.js';
import {
  AddPickupAdultBody,
  CreateGrantBody,
  Grant,
  GrantList,
  PickupEntry,
  PickupList,
  RevokeGrantBody,
  VerifyPickupBody,
} from '../domain/pickup.js';
import { CreatePrintJobBody, Printer, PrinterList, PrintJob, PrintJobAccepted } from '../domain/printing.js';
import {
  AttendanceQuery,
  AttendanceReport,
  ConflictPage,
  ConflictQuery,
  VisitorsQuery,
  VisitorsReport,
} from '../domain/reports.js';
import { CreateRoleBody, PatchRoleBody, Role, RoleList } from '../domain/role.js';
import { CreateScheduleBody, EndScheduleBody, Schedule, ScheduleList } from '../domain/schedules.js';
import {
  CreateStudentBody,
  DeleteStudentBody,
  PatchStudentBody,
  Student,
  StudentListQuery,
  StudentPage,
} from '../domain/student.js';
import { StudentExport } from '../domain/studentExport.js';
import { ImportReport, ImportStudentsQuery, StudentsCsv } from '../domain/studentImport.js';
import {
  CreateUserBody,
  DeactivateUserBody,
  PasswordReset,
  PatchUserBody,
  ResetPasswordBody,
  User,
  UserList,
} from '../domain/user.js';
import { type Client, clientOf, type Endpoint } from './endpoint.js';
import type { Tokens, Transport } from './transport.js';

export const endpoints = {
  listStudents: { method: 'GET', path: '/api/v1/students', query: StudentListQuery, response: StudentPage },
  getStudent: { method: 'GET', path: '/api/v1/students/{studentId}', response: Student },
  createStudent: { method: 'POST', path: '/api/v1/students', body: CreateStudentBody, response: Student },
  updateStudent: {
    method: 'PATCH',
    path: '/api/v1/students/{studentId}',
    body: PatchStudentBody,
    response: Student,
  },
  deleteStudent: {
    method: 'POST',
    path: '/api/v1/students/{studentId}/delete',
    body: DeleteStudentBody,
    response: Student,
  },
  exportStudent: { method: 'GET', path: '/api/v1/students/{studentId}/export', response: StudentExport },
  getStudentPhoto: {
    method: 'GET',
    path: '/api/v1/students/{studentId}/photo',
    query: PhotoQuery,
    response: PhotoImage,
  },
  putStudentPhoto: {
    method: 'PUT',
    path: '/api/v1/students/{studentId}/photo',
    body: PhotoUpload,
    response: StudentPhoto,
  },
  /** The printable card: SVG, or PNG with `format=png`. */
  getFamilyPass: {
    method: 'GET',
    path: '/api/v1/students/{studentId}/family-pass',
    query: FamilyPassQuery,
    response: FamilyPassCard,
  },
  revokeFamilyPass: {
    method: 'POST',
    path: '/api/v1/students/{studentId}/family-pass/revoke',
    response: FamilyPassIssued,
  },
  importStudents: {
    method: 'POST',
    path: '/api/v1/imports/students',
    query: ImportStudentsQuery,
    body: StudentsCsv,
    response: ImportReport,
  },

  listNuclei: { method: 'GET', path: '/api/v1/nuclei', query: ActivityListQuery, response: NucleusList },
  createNucleus: { method: 'POST', path: '/api/v1/nuclei', body: CreateNucleusBody, response: Nucleus },
  updateNucleus: {
    method: 'PATCH',
    path: '/api/v1/nuclei/{nucleusId}',
    body: PatchNucleusBody,
    response: Nucleus,
  },
  deactivateNucleus: { method: 'POST', path: '/api/v1/nuclei/{nucleusId}/deactivate', response: Nucleus },
  reactivateNucleus: { method: 'POST', path: '/api/v1/nuclei/{nucleusId}/reactivate', response: Nucleus },
  listClasses: { method: 'GET', path: '/api/v1/classes', query: ActivityListQuery, response: ClassList },
  createClass: { method: 'POST', path: '/api/v1/classes', body: CreateClassBody, response: ClassC },
  updateClass: { method: 'PATCH', path: '/api/v1/classes/{classId}', body: PatchClassBody, response: ClassC },
  deactivateClass: { method: 'POST', path: '/api/v1/classes/{classId}/deactivate', response: ClassC },
  reactivateClass: { method: 'POST', path: '/api/v1/classes/{classId}/reactivate', response: ClassC },
  listSessions: {
    method: 'GET',
    path: '/api/v1/sessions',
    query: ClassSessionListQuery,
    response: ClassSessionList,
  },
  createSession: {
    method: 'POST',
    path: '/api/v1/sessions',
    body: CreateClassSessionBody,
    response: ClassSession,
  },
  updateSession: {
    method: 'PATCH',
    path: '/api/v1/sessions/{sessionId}',
    body: PatchClassSessionBody,
    response: ClassSession,
  },
  deactivateSession: {
    method: 'POST',
    path: '/api/v1/sessions/{sessionId}/deactivate',
    response: ClassSession,
  },
  reactivateSession: {
    method: 'POST',
    path: '/api/v1/sessions/{sessionId}/reactivate',
    response: ClassSession,
  },
  listSchedules: { method: 'GET', path: '/api/v1/schedules', response: ScheduleList },
  createSchedule: { method: 'POST', path: '/api/v1/schedules', body: CreateScheduleBody, response: Schedule },
  endSchedule: {
    method: 'POST',
    path: '/api/v1/schedules/{scheduleId}/end',
    body: EndScheduleBody,
    response: Schedule,
  },

  listConsents: {
    method: 'GET',
    path: '/api/v1/image-consents',
    query: ConsentQuery,
    response: ConsentHistory,
  },
  createConsent: {
    method: 'POST',
    path: '/api/v1/image-consents',
    body: CreateConsentBody,
    response: Consent,
  },
  revokeConsent: {
    method: 'POST',
    path: '/api/v1/image-consents/{consentId}/revoke',
    body: RevokeConsentBody,
    response: Consent,
  },

  listPickupAdults: { method: 'GET', path: '/api/v1/students/{studentId}/pickup-list', response: PickupList },
  addPickupAdult: {
    method: 'POST',
    path: '/api/v1/students/{studentId}/pickup-list',
    body: AddPickupAdultBody,
    response: PickupEntry,
  },
  verifyPickupAdult: {
    method: 'POST',
    path: '/api/v1/students/{studentId}/pickup-list/{pickupId}/verify',
    body: VerifyPickupBody,
    response: PickupEntry,
  },
  listGrants: {
    method: 'GET',
    path: '/api/v1/students/{studentId}/pickup-authorizations',
    response: GrantList,
  },
  createGrant: {
    method: 'POST',
    path: '/api/v1/students/{studentId}/pickup-authorizations',
    body: CreateGrantBody,
    response: Grant,
  },
  revokeGrant: {
    method: 'POST',
    path: '/api/v1/pickup-authorizations/{authorizationId}/revoke',
    body: RevokeGrantBody,
    response: Grant,
  },

  listUsers: { method: 'GET', path: '/api/v1/users', response: UserList },
  createUser: { method: 'POST', path: '/api/v1/users', body: CreateUserBody, response: User },
  updateUser: { method: 'PATCH', path: '/api/v1/users/{userId}', body: PatchUserBody, response: User },
  resetPassword: {
    method: 'POST',
    path: '/api/v1/users/{userId}/reset-password',
    body: ResetPasswordBody,
    response: PasswordReset,
  },
  deactivateUser: {
    method: 'POST',
    path: '/api/v1/users/{userId}/deactivate',
    body: DeactivateUserBody,
    response: User,
  },
  listRoles: { method: 'GET', path: '/api/v1/roles', response: RoleList },
  createRole: { method: 'POST', path: '/api/v1/roles', body: CreateRoleBody, response: Role },
  updateRole: { method: 'PATCH', path: '/api/v1/roles/{name}', body: PatchRoleBody, response: Role },

  attendanceReport: {
    method: 'GET',
    path: '/api/v1/reports/attendance',
    query: AttendanceQuery,
    response: AttendanceReport,
  },
  /** The same report as the server's CSV (its `Accept`), handed to a download as it comes. */
  attendanceReportCsv: {
    method: 'GET',
    path: '/api/v1/reports/attendance',
    query: AttendanceQuery,
    response: AttendanceReport,
    accept: 'text/csv',
  },
  visitorsReport: {
    method: 'GET',
    path: '/api/v1/reports/visitors',
    query: VisitorsQuery,
    response: VisitorsReport,
  },
  conflictReport: {
    method: 'GET',
    path: '/api/v1/reports/conflicts',
    query: ConflictQuery,
    response: ConflictPage,
  },
  /** The door's roles read printers without their URI (0051, item 4: each tablet picks its own). */
  listPrinters: { method: 'GET', path: '/api/v1/printers', response: PrinterList },
  getPrinter: { method: 'GET', path: '/api/v1/printers/{printerId}', response: Printer },
  createPrintJob: {
    method: 'POST',
    path: '/api/v1/print-jobs',
    body: CreatePrintJobBody,
    response: PrintJobAccepted,
  },
  getPrintJob: { method: 'GET', path: '/api/v1/print-jobs/{jobId}', response: PrintJob },

  listAuditLogs: { method: 'GET', path: '/api/v1/audit-logs', query: AuditQuery, response: AuditPage },
} as const satisfies Readonly<Record<string, Endpoint>>;

export type Api = Client<typeof endpoints>;

export const apiOf = (transport: Pick<Transport<Tokens>, 'send'>): Api => clientOf(endpoints, transport.send);
