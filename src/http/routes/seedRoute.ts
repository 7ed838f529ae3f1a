/** Development seed: the first ADMIN and demo data, so a newcomer can try every flow. */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { isProduction } from '../../config/config.js';
import { boundedArray, object, Text, Uuid } from '../../domain/codec.js';
import { apiError } from '../../domain/errors.js';
import type { UserDoc } from '../../domain/user.js';
import { defineRoute } from '../route.js';

/** Documented development defaults; production never reaches them (the route answers 404 there). */
export const DEV_SEED_ADMIN_EMAIL = 'admin@chamada.local';
export const DEV_SEED_ADMIN_PASSWORD = 'chamada-dev-password';

export const Seeded = object('Seeded', {
  seeded: t.literal(true),
  admin: object('SeededAdmin', { userId: Uuid, email: Text }),
  roster: object('SeededRoster', {
    nucleusId: Uuid,
    // The demo data is a handful of classes and sessions.
    classIds: boundedArray(Uuid, 100),
    sessionIds: boundedArray(Uuid, 100),
    students: t.number,
  }),
});

export const seedRoute = defineRoute({
  operationId: 'seed',
  method: 'post',
  path: '/api/v1/_seed',
  auth: 'none',
  summary: 'Seed a development database',
  description:
    'Outside production only (404 there). Creates the first ADMIN from SEED_ADMIN_EMAIL / SEED_ADMIN_PASSWORD ' +
    `(defaults ${DEV_SEED_ADMIN_EMAIL} / ${DEV_SEED_ADMIN_PASSWORD}) and demo records: a nucleus, two classes, ` +
    "today's sessions and twenty students with guardians. 409 ALREADY_SEEDED when any user exists.",
  tags: ['system'],
  idempotency: {
    exempt: 'it has no principal; a second call is 409 ALREADY_SEEDED, so a retry is harmless.',
  },
  response: { status: 200, description: 'Seeded.', codec: Seeded },
  errors: ['NOT_FOUND', 'ALREADY_SEEDED'],
  // Seen in CI: right after a start on a large data set (the retention run and the pipeline catching up
  // share two cores) the demo records took longer than the 6 s default (decision 0046).
  deadline: {
    ms: 60_000,
    why:
      'it writes the demo records one by one, and is called right after a start, while the service may still ' +
      'be catching up. Past it the answer is 503; calling again answers 409 ALREADY_SEEDED once the ADMIN exists.',
  },
  handler: async ({ deps }) => {
    if (isProduction(deps.config)) return E.left(apiError('NOT_FOUND', 'No such route.'));
    if (await deps.auth.users.anyExists()) return E.left(apiError('ALREADY_SEEDED'));
    const email = deps.config.seedAdminEmail ?? DEV_SEED_ADMIN_EMAIL;
    const created = await deps.auth.users.create(null, {
      email,
      displayName: 'Administrador',
      roles: ['ADMIN'],
      password: deps.config.seedAdminPassword ?? DEV_SEED_ADMIN_PASSWORD,
    });
    // Two seeds racing: the loser's email claim fails, which means the database is seeded.
    if (E.isLeft(created))
      return created.left.code === 'CONFLICT' ? E.left(apiError('ALREADY_SEEDED')) : created;
    const admin: UserDoc = created.right;
    const roster = await deps.registration.demo.seed({
      userId: admin.userId,
      roles: admin.roles,
      primaryRole: admin.primaryRole,
      permissions: [],
      authMode: 'jwt',
    });
    return E.right({
      body: {
        seeded: true as const,
        admin: { userId: admin.userId, email: admin.email },
        roster: { ...roster, classIds: [...roster.classIds], sessionIds: [...roster.sessionIds] },
      },
    });
  },
});
