import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import { decodeConfig } from '../../src/config/config.js';
import { JWT_SECRET_FILE, resolveJwtSecret } from '../../src/config/jwtSecret.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const problemsOf = (env: Record<string, string>): string[] => {
  const r = decodeConfig(env);
  return E.isLeft(r) ? r.left : [];
};

const configOf = (env: Record<string, string>) => {
  const r = decodeConfig(env);
  if (E.isLeft(r)) throw new Error(r.left.join('; '));
  return r.right;
};

describe('configuration', () => {
  it('needs no variable at all: every default is the documented one', () => {
    const c = configOf({});
    expect(c).to.deep.include({
      port: 8080,
      host: '127.0.0.1',
      dataDir: './data',
      couchdbUrl: undefined,
      dbPrefix: 'chamada_',
      storeTimeoutMs: 5000,
      requestDeadlineMs: 6000,
      nodeEnv: 'development',
      authMode: 'jwt',
      accessTokenTtlSeconds: 900,
      refreshTokenTtlSeconds: 604_800,
      sessionTtlSeconds: 86_400,
      logLevel: 'info',
    });
    expect(c.corsOrigins).to.deep.equal([]);
    expect(c.licenseModules).to.deep.equal([]);
    expect(c.securityContacts).to.have.length(2);
  });

  it('treats an empty variable like an absent one', () => {
    expect(configOf({ PORT: '', AUTH_MODE: '' })).to.deep.include({ port: 8080, authMode: 'jwt' });
  });

  it('parses lists, trimming blanks around commas', () => {
    const c = configOf({
      CORS_ORIGINS: 'https://a.example.org, http://localhost:5173',
      LICENSE_MODULES: 'kiosk, reports',
      SECURITY_CONTACTS: 'mailto:sec@x.org,mailto:dpo@x.org',
    });
    expect(c.corsOrigins).to.deep.equal(['https://a.example.org', 'http://localhost:5173']);
    expect(c.licenseModules).to.deep.equal(['kiosk', 'reports']);
    expect(c.securityContacts).to.deep.equal(['mailto:sec@x.org', 'mailto:dpo@x.org']);
  });

  const bad: ReadonlyArray<[string, Record<string, string>, string]> = [
    ['a port that is not a number', { PORT: 'eighty' }, 'PORT'],
    ['a port out of range', { PORT: '70000' }, 'PORT'],
    ['an unknown auth mode', { AUTH_MODE: 'basic' }, 'AUTH_MODE'],
    ['an unknown NODE_ENV', { NODE_ENV: 'prod' }, 'NODE_ENV'],
    ['an origin with a path', { CORS_ORIGINS: 'https://a.example.org/app' }, 'CORS_ORIGINS'],
    ['the wildcard origin', { CORS_ORIGINS: '*' }, 'CORS_ORIGINS'],
    ['the null origin', { CORS_ORIGINS: 'null' }, 'CORS_ORIGINS'],
    ['one security contact', { SECURITY_CONTACTS: 'mailto:a@b.org' }, 'SECURITY_CONTACTS'],
    ['a contact that is not mailto', { SECURITY_CONTACTS: 'a@b.org,mailto:c@d.org' }, 'SECURITY_CONTACTS'],
    ['a CouchDB URL that is not http', { COUCHDB_URL: 'ftp://couch' }, 'COUCHDB_URL'],
    ['a store timeout below 200 ms', { STORE_TIMEOUT_MS: '50' }, 'STORE_TIMEOUT_MS'],
    ['a request deadline below 500 ms', { REQUEST_DEADLINE_MS: '100' }, 'REQUEST_DEADLINE_MS'],
    ['a request deadline that is not a number', { REQUEST_DEADLINE_MS: '6s' }, 'REQUEST_DEADLINE_MS'],
    ['an upper-case database prefix', { DB_PREFIX: 'Chamada_' }, 'DB_PREFIX'],
    ['a TTL of zero', { ACCESS_TOKEN_TTL_SECONDS: '0' }, 'ACCESS_TOKEN_TTL_SECONDS'],
    [
      'dev mode in production',
      {
        NODE_ENV: 'production',
        AUTH_MODE: 'dev',
        DEV_ADMIN_TOKEN: 'x'.repeat(20),
        JWT_SECRET: 'y'.repeat(40),
      },
      'AUTH_MODE',
    ],
    ['production without JWT_SECRET', { NODE_ENV: 'production' }, 'JWT_SECRET'],
    [
      'production with a 31-byte JWT_SECRET',
      { NODE_ENV: 'production', JWT_SECRET: 'z'.repeat(31) },
      'JWT_SECRET',
    ],
    ['a metrics token under 32 characters', { METRICS_TOKEN: 'm'.repeat(31) }, 'METRICS_TOKEN'],
    [
      'a metrics token with a space',
      { METRICS_TOKEN: `${'m'.repeat(20)} ${'n'.repeat(20)}` },
      'METRICS_TOKEN',
    ],
    ['a metrics range with a prefix over 32', { METRICS_ALLOW: '10.0.0.0/33' }, 'METRICS_ALLOW'],
    [
      'a metrics address that is not an address',
      { METRICS_ALLOW: '10.0.0.0/8, prometheus' },
      'METRICS_ALLOW',
    ],
    ['a metrics range with a prefix over 128', { METRICS_ALLOW: 'fd00::/129' }, 'METRICS_ALLOW'],
    ['dev mode without any token', { AUTH_MODE: 'dev' }, 'AUTH_MODE'],
    ['dev mode with a short token', { AUTH_MODE: 'dev', DEV_ADMIN_TOKEN: 'short' }, 'DEV_ADMIN_TOKEN'],
    ['a backup time that is not HH:MM', { BACKUP_DIR: '/b', BACKUP_AT: '2:30' }, 'BACKUP_AT'],
    ['a backup time past 23:59', { BACKUP_DIR: '/b', BACKUP_AT: '24:00' }, 'BACKUP_AT'],
    ['an unknown time zone', { BACKUP_DIR: '/b', BACKUP_TIME_ZONE: 'America/Atlantis' }, 'BACKUP_TIME_ZONE'],
    ['backups kept no day', { BACKUP_DIR: '/b', BACKUP_KEEP_DAYS: '0' }, 'BACKUP_KEEP_DAYS'],
    ['a backup schedule without BACKUP_DIR', { BACKUP_AT: '03:00' }, 'BACKUP_DIR'],
  ];
  for (const [what, env, variable] of bad) {
    it(`refuses ${what}, naming ${variable}`, () => {
      const problems = problemsOf(env);
      expect(problems, 'problems').to.have.length.greaterThan(0);
      expect(problems.join('\n')).to.contain(variable);
    });
  }

  it('reports every bad variable at once', () => {
    const problems = problemsOf({ PORT: 'x', AUTH_MODE: 'y' });
    expect(problems.join('\n')).to.contain('PORT').and.to.contain('AUTH_MODE');
  });

  describe("the service's own backups", () => {
    it('are off without BACKUP_DIR, and read 02:30 in São Paulo, 14 days, by default', () => {
      expect(configOf({}).backup).to.equal(undefined);
      expect(configOf({ BACKUP_DIR: '/srv/backups' }).backup).to.deep.equal({
        dir: '/srv/backups',
        at: { hour: 2, minute: 30 },
        timeZone: 'America/Sao_Paulo',
        keepDays: 14,
      });
      expect(
        configOf({ BACKUP_DIR: '/b', BACKUP_AT: '23:05', BACKUP_TIME_ZONE: 'UTC', BACKUP_KEEP_DAYS: '30' })
          .backup,
      ).to.deep.equal({ dir: '/b', at: { hour: 23, minute: 5 }, timeZone: 'UTC', keepDays: 30 });
    });
  });

  describe('metrics access', () => {
    it('is closed when neither METRICS_TOKEN nor METRICS_ALLOW is set', () => {
      expect(configOf({}).metrics).to.equal(undefined);
      expect(configOf({ METRICS_TOKEN: '', METRICS_ALLOW: ' , ' }).metrics).to.equal(undefined);
    });

    it('reads a token and addresses, CIDR ranges of both families and loopback', () => {
      const token = 't'.repeat(32);
      expect(
        configOf({ METRICS_TOKEN: token, METRICS_ALLOW: '10.0.0.0/8, 192.0.2.7, fd00::/8, loopback' })
          .metrics,
      ).to.deep.equal({
        token,
        allow: [
          { family: 'ipv4', network: '10.0.0.0', prefix: 8 },
          { family: 'ipv4', network: '192.0.2.7', prefix: 32 },
          { family: 'ipv6', network: 'fd00::', prefix: 8 },
          { family: 'ipv4', network: '127.0.0.0', prefix: 8 },
          { family: 'ipv6', network: '::1', prefix: 128 },
        ],
      });
    });

    it('never repeats a refused token in the message', () => {
      const token = 'secret-but-short';
      const problems = problemsOf({ METRICS_TOKEN: token }).join('\n');
      expect(problems).to.contain('METRICS_TOKEN').and.not.to.contain(token);
    });
  });

  describe('notification webhook secret', () => {
    const URL = 'https://sms.example.org/hook';
    const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

    it('reads a Standard Webhooks secret beside the webhook', () => {
      const c = configOf({ NOTIFY_WEBHOOK_URL: URL, NOTIFY_WEBHOOK_SECRET: SECRET });
      expect(c.notifyWebhookSecret).to.equal(SECRET);
    });

    const malformed: ReadonlyArray<[string, string]> = [
      ['no whsec_ prefix', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      ['a key that is not base64', 'whsec_MfKQ9r8GKYqrTwjU-D8ILPZIo2LaLaS!'],
      ['base64 of a wrong length', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS'],
      ['a key of 16 bytes', `whsec_${Buffer.alloc(16, 7).toString('base64')}`],
      ['a key of 65 bytes', `whsec_${Buffer.alloc(65, 7).toString('base64')}`],
    ];
    for (const [what, secret] of malformed) {
      it(`refuses ${what}, naming the variable and never repeating the value`, () => {
        const problems = problemsOf({ NOTIFY_WEBHOOK_URL: URL, NOTIFY_WEBHOOK_SECRET: secret }).join('\n');
        expect(problems).to.contain('NOTIFY_WEBHOOK_SECRET').and.not.to.contain(secret);
      });
    }

    it('accepts keys of 24 and of 64 bytes', () => {
      for (const bytes of [24, 64]) {
        const secret = `whsec_${Buffer.alloc(bytes, 7).toString('base64')}`;
        expect(problemsOf({ NOTIFY_WEBHOOK_URL: URL, NOTIFY_WEBHOOK_SECRET: secret })).to.deep.equal([]);
      }
    });

    it('refuses a secret without a webhook to sign for', () => {
      expect(problemsOf({ NOTIFY_WEBHOOK_SECRET: SECRET }).join('\n')).to.contain('NOTIFY_WEBHOOK_URL');
    });

    it('refuses an unsigned webhook in production, and allows it in development', () => {
      const production = { NODE_ENV: 'production', JWT_SECRET: 's'.repeat(32), NOTIFY_WEBHOOK_URL: URL };
      expect(problemsOf(production).join('\n')).to.contain('NOTIFY_WEBHOOK_SECRET');
      expect(problemsOf({ ...production, NOTIFY_WEBHOOK_SECRET: SECRET })).to.deep.equal([]);
      expect(configOf({ NOTIFY_WEBHOOK_URL: URL }).notifyWebhookSecret).to.equal(undefined);
    });
  });

  it('accepts production with a 32-byte secret and JWT mode', () => {
    expect(configOf({ NODE_ENV: 'production', JWT_SECRET: 's'.repeat(32) }).nodeEnv).to.equal('production');
  });

  describe('development JWT secret', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await makeTempDir('cfg');
    });
    afterEach(() => removeDir(dir));

    it('is generated once, kept in DATA_DIR with owner-only permissions, and reused after a restart', async () => {
      const first = await resolveJwtSecret(configOf({ DATA_DIR: dir }));
      const second = await resolveJwtSecret(configOf({ DATA_DIR: dir }));
      expect(first.jwtSecret).to.have.length.greaterThanOrEqual(43);
      expect(second.jwtSecret).to.equal(first.jwtSecret);
      const mode = (await stat(join(dir, JWT_SECRET_FILE))).mode & 0o777;
      expect(mode).to.equal(0o600);
    });

    it('is not generated when JWT_SECRET is given', async () => {
      const c = await resolveJwtSecret(configOf({ DATA_DIR: dir, JWT_SECRET: 'given-secret' }));
      expect(c.jwtSecret).to.equal('given-secret');
      const exists = await stat(join(dir, JWT_SECRET_FILE)).then(
        () => true,
        () => false,
      );
      expect(exists).to.equal(false);
    });

    it('gives concurrent first starts the same secret', async () => {
      const results = await Promise.all(
        Array.from({ length: 5 }, () => resolveJwtSecret(configOf({ DATA_DIR: dir }))),
      );
      expect(new Set(results.map((r) => r.jwtSecret)).size).to.equal(1);
    });
  });
});
