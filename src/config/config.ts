/**
 * The service's configuration, decoded from the environment by one codec. Decoding is pure; reading or
 * creating the development JWT secret file is the only IO and lives in `resolveJwtSecret`.
 */
import { isIPv4, isIPv6 } from 'node:net';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as t from 'io-ts';
import { type WallTime, WallTimeFromString } from '../domain/backup.js';
import { isPlainObject, refine } from '../domain/codec.js';
import { isWebhookSecret, WEBHOOK_SECRET_RULE } from '../domain/notifications.js';

const unset = (u: unknown): boolean => u === undefined || u === '';

/** Treats an absent or empty variable as `fallback`, so `PORT=` behaves like no `PORT` at all. */
const withDefault = <C extends t.Mixed>(codec: C, fallback: t.TypeOf<C>) =>
  new t.Type<t.TypeOf<C>, t.OutputOf<C>, unknown>(
    codec.name,
    codec.is,
    (u, c) => (unset(u) ? t.success(fallback) : codec.validate(u, c)),
    codec.encode,
  );

const optionalString = new t.Type<string | undefined, string | undefined, unknown>(
  'string',
  (u): u is string | undefined => u === undefined || typeof u === 'string',
  (u, c) => (unset(u) ? t.success(undefined) : typeof u === 'string' ? t.success(u) : t.failure(u, c)),
  (a) => a,
);

const intFromString = (min: number, max: number) =>
  new t.Type<number, string, unknown>(
    `an integer from ${min} to ${max}`,
    (u): u is number => typeof u === 'number' && Number.isInteger(u) && u >= min && u <= max,
    (u, c) => {
      if (typeof u !== 'string' || !/^\d+$/.test(u)) return t.failure(u, c);
      const n = Number(u);
      return n >= min && n <= max ? t.success(n) : t.failure(u, c);
    },
    String,
  );

/** A comma-separated list whose items each satisfy `item`; blanks around commas are ignored. */
const csvOf = <C extends t.Mixed>(item: C, name: string) =>
  new t.Type<ReadonlyArray<t.TypeOf<C>>, string, unknown>(
    name,
    (u): u is ReadonlyArray<t.TypeOf<C>> => Array.isArray(u) && u.every(item.is),
    (u, c) => {
      if (typeof u !== 'string') return t.failure(u, c);
      const parts = u
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      return pipe(
        parts.map((p, i) => item.validate(p, [...c, { key: String(i), type: item, actual: p }])),
        E.sequenceArray,
      );
    },
    (a) => a.join(','),
  );

const isHttpOrigin = (s: string): boolean => {
  try {
    const u = new URL(s);
    return (u.protocol === 'https:' || u.protocol === 'http:') && u.origin === s;
  } catch {
    return false;
  }
};

const Origin = refine(
  t.string,
  isHttpOrigin,
  'an origin such as https://app.example.org (scheme, host, optional port; no path)',
);
const Mailto = refine(t.string, (s) => /^mailto:[^@\s]+@[^@\s]+\.[^@\s]+$/.test(s), 'a mailto: address');
const ModuleId = refine(
  t.string,
  (s) => /^[a-z][a-z0-9._-]{0,63}$/.test(s),
  'a module id (lower case, digits, . _ -)',
);
const DbPrefix = refine(
  t.string,
  (s) => /^[a-z][a-z0-9_$()+-]{0,100}$/.test(s),
  'a CouchDB database-name prefix (lower case letter first, then a-z 0-9 _ $ ( ) + -)',
);
const HttpUrl = refine(
  t.string,
  (s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  },
  'an http(s) URL',
);

/**
 * Which proxies may set X-Forwarded-For: none by default (the socket address is the client), a hop
 * count, or a list of addresses, CIDR ranges and Express's names (loopback, linklocal, uniquelocal).
 */
export type TrustProxy = false | number | ReadonlyArray<string>;
const TrustProxyC = new t.Type<TrustProxy, string, unknown>(
  'false, a hop count, or a comma-separated list of proxy addresses / CIDR ranges / loopback, linklocal, uniquelocal',
  (u): u is TrustProxy => u === false || typeof u === 'number' || Array.isArray(u),
  (u, c) => {
    if (typeof u !== 'string' || u === 'false') return t.success(false);
    if (/^\d{1,2}$/.test(u)) return t.success(Number(u));
    const parts = u
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '');
    const ok =
      parts.length > 0 &&
      parts.every((p) => /^(loopback|linklocal|uniquelocal|[0-9a-fA-F:.]+(\/\d{1,3})?)$/.test(p));
    return ok ? t.success(parts) : t.failure(u, c);
  },
  (a) => (a === false ? 'false' : typeof a === 'number' ? String(a) : a.join(',')),
);

/** An address range clients of `/metrics` may come from: one address is a range of prefix 32 or 128. */
export interface AddressRange {
  readonly family: 'ipv4' | 'ipv6';
  readonly network: string;
  readonly prefix: number;
}

const LOOPBACK: ReadonlyArray<AddressRange> = [
  { family: 'ipv4', network: '127.0.0.0', prefix: 8 },
  { family: 'ipv6', network: '::1', prefix: 128 },
];

const addressRanges = (item: string): ReadonlyArray<AddressRange> | undefined => {
  if (item === 'loopback') return LOOPBACK;
  const match = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(item);
  const network = match?.[1];
  if (network === undefined) return undefined;
  const family = isIPv4(network) ? 'ipv4' : isIPv6(network) ? 'ipv6' : undefined;
  if (family === undefined) return undefined;
  const widest = family === 'ipv4' ? 32 : 128;
  const prefix = match?.[2] === undefined ? widest : Number(match[2]);
  return prefix <= widest ? [{ family, network, prefix }] : undefined;
};

/** Comma-separated addresses, CIDR ranges and `loopback`; an empty list allows no address. */
const AddressRangesC = new t.Type<ReadonlyArray<AddressRange>, string, unknown>(
  'a comma-separated list of IP addresses, CIDR ranges (10.0.0.0/8, fd00::/8) and loopback',
  (u): u is ReadonlyArray<AddressRange> => Array.isArray(u),
  (u, c) => {
    if (typeof u !== 'string') return t.failure(u, c);
    const ranges: AddressRange[] = [];
    for (const item of u.split(',').map((p) => p.trim())) {
      if (item === '') continue;
      const parsed = addressRanges(item);
      if (parsed === undefined) return t.failure(u, c);
      ranges.push(...parsed);
    }
    return t.success(ranges);
  },
  (a) => a.map((r) => `${r.network}/${r.prefix}`).join(','),
);

/** An IANA time zone this runtime knows (`America/Sao_Paulo`). */
const TimeZone = refine(
  t.string,
  (zone) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      return true;
    } catch {
      return false;
    }
  },
  'an IANA time zone such as America/Sao_Paulo',
);

/** A printer's host as PRINTER_HOSTS names it: a DNS name or an IP address (IPv6 without brackets). */
const PrinterHost = refine(
  t.string,
  (s) =>
    isIPv4(s) ||
    isIPv6(s) ||
    (s.length <= 253 &&
      /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(s)),
  'a host name or an IP address',
);

const DEFAULT_SECURITY_CONTACTS = [
  'mailto:security@chamada.example',
  'mailto:privacy@chamada.example',
] as const;

export const EnvCodec = t.type({
  PORT: withDefault(intFromString(0, 65535), 8080),
  HOST: withDefault(t.string, '127.0.0.1'),
  DATA_DIR: withDefault(t.string, './data'),
  COUCHDB_URL: withDefault(t.union([HttpUrl, t.undefined]), undefined),
  DB_PREFIX: withDefault(DbPrefix, 'chamada_'),
  STORE_TIMEOUT_MS: withDefault(intFromString(200, 120_000), 5000),
  // Every request is answered within this (decision 0046), whatever the store does: 6 s, a store call's
  // 5 s and the answer around it. Below 500 ms a healthy store's ordinary requests would be cut.
  REQUEST_DEADLINE_MS: withDefault(intFromString(500, 300_000), 6000),
  NODE_ENV: withDefault(t.keyof({ development: null, test: null, production: null }), 'development'),
  AUTH_MODE: withDefault(t.keyof({ jwt: null, dev: null }), 'jwt'),
  JWT_SECRET: optionalString,
  DEV_ADMIN_TOKEN: optionalString,
  DEV_CALLER_TOKEN: optionalString,
  DEV_REPORTS_TOKEN: optionalString,
  DEV_CADASTRO_TOKEN: optionalString,
  CORS_ORIGINS: withDefault(csvOf(Origin, 'a comma-separated list of origins'), []),
  ACCESS_TOKEN_TTL_SECONDS: withDefault(intFromString(30, 86_400), 900),
  REFRESH_TOKEN_TTL_SECONDS: withDefault(intFromString(60, 31_536_000), 604_800),
  SESSION_TTL_SECONDS: withDefault(intFromString(60, 31_536_000), 86_400),
  // Every authenticated route, per principal and device: 600 a minute (10 a second sustained). A door's
  // busiest quarter hour stays far below it (README, "Rate limits"); a client stuck in a loop or a
  // stolen token scraping the directory is stopped within the minute. Counted in memory, so any limit
  // costs the same; 0 turns it off.
  RATE_LIMIT_REQUESTS: withDefault(intFromString(0, 1_000_000), 600),
  RATE_LIMIT_WINDOW_SECONDS: withDefault(intFromString(1, 3_600), 60),
  // How often instances on one CouchDB exchange their counts: each may let through what the others
  // counted in one period beyond the limit, so it is a small share of the window.
  RATE_LIMIT_EXCHANGE_MS: withDefault(intFromString(100, 60_000), 1000),
  SEED_ADMIN_EMAIL: optionalString,
  SEED_ADMIN_PASSWORD: optionalString,
  SECURITY_CONTACTS: withDefault(
    refine(
      csvOf(Mailto, 'mailto: addresses'),
      (a) => a.length === 2,
      'exactly two comma-separated mailto: addresses',
    ),
    [...DEFAULT_SECURITY_CONTACTS],
  ),
  // At most 100: GET /api/v1/license states the bound (OWASP API4).
  LICENSE_MODULES: withDefault(
    refine(
      csvOf(ModuleId, 'a comma-separated list of module ids'),
      (a) => a.length <= 100,
      'at most 100 module ids',
    ),
    [],
  ),
  NOTIFY_WEBHOOK_URL: withDefault(t.union([HttpUrl, t.undefined]), undefined),
  // Checked in `crossFieldProblems`, which never echoes it: decoding errors quote the value.
  NOTIFY_WEBHOOK_SECRET: optionalString,
  SESSION_MODE: withDefault(t.keyof({ bearer: null, cookie: null }), 'bearer'),
  TRUST_PROXY: withDefault(TrustProxyC, false),
  // Checked in `crossFieldProblems`, which never echoes it: decoding errors quote the value.
  METRICS_TOKEN: optionalString,
  METRICS_ALLOW: withDefault(AddressRangesC, []),
  LOG_LEVEL: withDefault(
    t.keyof({ fatal: null, error: null, warn: null, info: null, debug: null, trace: null, silent: null }),
    'info',
  ),
  // The service's own backups (decision 0044): off unless BACKUP_DIR is set.
  BACKUP_DIR: optionalString,
  BACKUP_AT: withDefault(WallTimeFromString, { hour: 2, minute: 30 }),
  BACKUP_TIME_ZONE: withDefault(TimeZone, 'America/Sao_Paulo'),
  BACKUP_KEEP_DAYS: withDefault(intFromString(1, 3650), 14),
  // The retention job's daily run (decision 0045), on the wall clock of its zone; it also runs at start.
  RETENTION_AT: withDefault(WallTimeFromString, { hour: 3, minute: 30 }),
  RETENTION_TIME_ZONE: withDefault(TimeZone, 'America/Sao_Paulo'),
  // Printers (0051): the hosts a printer's URI may name (unset: any), how long a job waits for a
  // printer that does not answer, and the time zone of the time printed on labels.
  PRINTER_HOSTS: withDefault(csvOf(PrinterHost, 'a comma-separated list of host names or IP addresses'), []),
  PRINT_GIVE_UP_SECONDS: withDefault(intFromString(5, 3600), 60),
  LABEL_TIME_ZONE: withDefault(TimeZone, 'America/Sao_Paulo'),
});
type Env = t.TypeOf<typeof EnvCodec>;

export type AuthMode = Env['AUTH_MODE'];
export type NodeEnv = Env['NODE_ENV'];
export type LogLevel = Env['LOG_LEVEL'];
export type SessionMode = Env['SESSION_MODE'];

export interface DevTokens {
  readonly admin?: string;
  readonly caller?: string;
  readonly reports?: string;
  readonly cadastro?: string;
}

/** Who may read `/metrics`: a request from an allowed address, or one bearing the token. */
export interface MetricsAccess {
  /** Compared in constant time; never logged. */
  readonly token: string | undefined;
  readonly allow: ReadonlyArray<AddressRange>;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly couchdbUrl: string | undefined;
  readonly dbPrefix: string;
  /** CouchDB: how long a store call's answer may stay silent before the request is answered 503. */
  readonly storeTimeoutMs: number;
  /** How long a request may take before it is answered 503 `STORE_UNAVAILABLE` (decision 0046). */
  readonly requestDeadlineMs: number;
  readonly nodeEnv: NodeEnv;
  readonly authMode: AuthMode;
  /** Undefined only until `resolveJwtSecret` has run (outside production). */
  readonly jwtSecret: string | undefined;
  readonly devTokens: DevTokens;
  readonly corsOrigins: ReadonlyArray<string>;
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  readonly sessionTtlSeconds: number;
  /** Every authenticated route, per principal and device (RATE_LIMIT_REQUESTS per RATE_LIMIT_WINDOW_SECONDS); limit 0: off. */
  readonly deviceRateLimit: { readonly limit: number; readonly windowMs: number };
  /** How often instances sharing a CouchDB exchange their per-device counts (RATE_LIMIT_EXCHANGE_MS). */
  readonly rateLimitExchangeMs: number;
  readonly seedAdminEmail: string | undefined;
  readonly seedAdminPassword: string | undefined;
  readonly securityContacts: ReadonlyArray<string>;
  readonly licenseModules: ReadonlyArray<string>;
  readonly logLevel: LogLevel;
  /** bearer: the refresh token travels in bodies; cookie: in an httpOnly cookie, with X-CSRF-Token on mutations. */
  readonly sessionMode: SessionMode;
  /** Where one-time codes are POSTed (an SMS gateway); unset: the development notifier logs them. */
  readonly notifyWebhookUrl: string | undefined;
  /** Standard Webhooks signing secret (`whsec_…`) of that webhook; unset: unsigned (refused in production). */
  readonly notifyWebhookSecret: string | undefined;
  readonly trustProxy: TrustProxy;
  /** Undefined when neither METRICS_TOKEN nor METRICS_ALLOW is set: `/metrics` does not exist. */
  readonly metrics: MetricsAccess | undefined;
  /** The service's own backups (0044); undefined when BACKUP_DIR is not set. */
  readonly backup: BackupSchedule | undefined;
  /** When the retention job runs each day (0045), besides at start. */
  readonly retention: { readonly at: WallTime; readonly timeZone: string };
  readonly printing: PrintSettings;
}

/** Printers and print jobs (0051). */
export interface PrintSettings {
  /** The hosts a printer may be at, lower case; empty: any host. */
  readonly allowedHosts: ReadonlyArray<string>;
  /** A job whose printer has not taken it this long after it was queued fails. */
  readonly giveUpMs: number;
  /** The time zone of the date and time printed on labels. */
  readonly labelTimeZone: string;
}

export interface BackupSchedule {
  readonly dir: string;
  readonly at: WallTime;
  readonly timeZone: string;
  readonly keepDays: number;
}

export const MIN_PRODUCTION_SECRET_BYTES = 32;
const MIN_DEV_TOKEN_LENGTH = 16;
export const MIN_METRICS_TOKEN_LENGTH = 32;
const METRICS_TOKEN_RE = new RegExp(`^[\\x21-\\x7e]{${MIN_METRICS_TOKEN_LENGTH},1024}$`);

/** One line per problem, naming the variable. */
export const describeErrors = (errors: t.Errors): string[] =>
  errors.map((e) => {
    const variable = e.context[1]?.key ?? '(environment)';
    const shown = typeof e.value === 'string' ? JSON.stringify(e.value) : String(e.value);
    const expected = e.context[e.context.length - 1]?.type.name ?? 'a valid value';
    return `${variable}: ${e.message ?? `expected ${expected}`}, got ${shown}`;
  });

const crossFieldProblems = (env: Env): string[] => {
  const problems: string[] = [];
  const production = env.NODE_ENV === 'production';
  if (production && env.AUTH_MODE === 'dev') {
    problems.push('AUTH_MODE: "dev" is refused when NODE_ENV=production; use "jwt"');
  }
  if (
    production &&
    (env.JWT_SECRET === undefined || Buffer.byteLength(env.JWT_SECRET) < MIN_PRODUCTION_SECRET_BYTES)
  ) {
    problems.push(
      `JWT_SECRET: must be set to at least ${MIN_PRODUCTION_SECRET_BYTES} bytes when NODE_ENV=production`,
    );
  }
  const devTokens = {
    DEV_ADMIN_TOKEN: env.DEV_ADMIN_TOKEN,
    DEV_CALLER_TOKEN: env.DEV_CALLER_TOKEN,
    DEV_REPORTS_TOKEN: env.DEV_REPORTS_TOKEN,
    DEV_CADASTRO_TOKEN: env.DEV_CADASTRO_TOKEN,
  };
  const given = Object.entries(devTokens).filter((e): e is [string, string] => e[1] !== undefined);
  if (env.AUTH_MODE === 'dev') {
    if (given.length === 0)
      problems.push(
        'AUTH_MODE: "dev" needs at least one of DEV_ADMIN_TOKEN, DEV_CALLER_TOKEN, DEV_REPORTS_TOKEN, DEV_CADASTRO_TOKEN',
      );
    for (const [name, value] of given) {
      if (value.length < MIN_DEV_TOKEN_LENGTH)
        problems.push(`${name}: must be at least ${MIN_DEV_TOKEN_LENGTH} characters`);
    }
    if (new Set(given.map(([, v]) => v)).size !== given.length)
      problems.push('DEV_*_TOKEN: each development token must be different');
  }
  if (env.METRICS_TOKEN !== undefined && !METRICS_TOKEN_RE.test(env.METRICS_TOKEN))
    problems.push(
      `METRICS_TOKEN: must be ${MIN_METRICS_TOKEN_LENGTH} to 1,024 printable ASCII characters without spaces (a bearer token)`,
    );
  problems.push(...webhookSecretProblems(env));
  return problems;
};

const webhookSecretProblems = (env: Env): string[] => {
  const secret = env.NOTIFY_WEBHOOK_SECRET;
  if (secret === undefined) {
    return env.NODE_ENV === 'production' && env.NOTIFY_WEBHOOK_URL !== undefined
      ? [
          'NOTIFY_WEBHOOK_SECRET: must be set when NOTIFY_WEBHOOK_URL is and NODE_ENV=production, so the gateway can ' +
            'tell our messages from forged ones',
        ]
      : [];
  }
  if (!isWebhookSecret(secret))
    return [`NOTIFY_WEBHOOK_SECRET: must be ${WEBHOOK_SECRET_RULE} (a Standard Webhooks secret)`];
  if (env.NOTIFY_WEBHOOK_URL === undefined)
    return ['NOTIFY_WEBHOOK_SECRET: signs the messages of NOTIFY_WEBHOOK_URL, which is not set'];
  return [];
};

const metricsAccess = (env: Env): MetricsAccess | undefined =>
  env.METRICS_TOKEN === undefined && env.METRICS_ALLOW.length === 0
    ? undefined
    : { token: env.METRICS_TOKEN, allow: env.METRICS_ALLOW };

const BACKUP_SETTINGS = ['BACKUP_AT', 'BACKUP_TIME_ZONE', 'BACKUP_KEEP_DAYS'] as const;

/** A schedule without its folder would look like backups that never happen. */
const backupProblems = (environment: Readonly<Record<string, string | undefined>>): string[] =>
  unset(environment.BACKUP_DIR)
    ? BACKUP_SETTINGS.filter((name) => !unset(environment[name])).map(
        (name) => `${name}: sets the service's own backups, which BACKUP_DIR turns on; it is not set`,
      )
    : [];

/** Decodes the environment; every problem is reported at once, each naming its variable. */
export const decodeConfig = (
  environment: Readonly<Record<string, string | undefined>>,
): E.Either<string[], Config> => {
  if (!isPlainObject(environment)) return E.left(['(environment): expected an object']);
  return pipe(
    EnvCodec.decode(environment),
    E.mapLeft(describeErrors),
    E.chain((env) => {
      const problems = [...crossFieldProblems(env), ...backupProblems(environment)];
      return problems.length > 0 ? E.left(problems) : E.right(env);
    }),
    E.map(
      (env): Config => ({
        port: env.PORT,
        host: env.HOST,
        dataDir: env.DATA_DIR,
        couchdbUrl: env.COUCHDB_URL,
        dbPrefix: env.DB_PREFIX,
        storeTimeoutMs: env.STORE_TIMEOUT_MS,
        requestDeadlineMs: env.REQUEST_DEADLINE_MS,
        nodeEnv: env.NODE_ENV,
        authMode: env.AUTH_MODE,
        jwtSecret: env.JWT_SECRET,
        devTokens: {
          ...(env.DEV_ADMIN_TOKEN === undefined ? {} : { admin: env.DEV_ADMIN_TOKEN }),
          ...(env.DEV_CALLER_TOKEN === undefined ? {} : { caller: env.DEV_CALLER_TOKEN }),
          ...(env.DEV_REPORTS_TOKEN === undefined ? {} : { reports: env.DEV_REPORTS_TOKEN }),
          ...(env.DEV_CADASTRO_TOKEN === undefined ? {} : { cadastro: env.DEV_CADASTRO_TOKEN }),
        },
        corsOrigins: env.CORS_ORIGINS,
        accessTokenTtlSeconds: env.ACCESS_TOKEN_TTL_SECONDS,
        refreshTokenTtlSeconds: env.REFRESH_TOKEN_TTL_SECONDS,
        sessionTtlSeconds: env.SESSION_TTL_SECONDS,
        deviceRateLimit: { limit: env.RATE_LIMIT_REQUESTS, windowMs: env.RATE_LIMIT_WINDOW_SECONDS * 1000 },
        rateLimitExchangeMs: env.RATE_LIMIT_EXCHANGE_MS,
        seedAdminEmail: env.SEED_ADMIN_EMAIL,
        seedAdminPassword: env.SEED_ADMIN_PASSWORD,
        securityContacts: env.SECURITY_CONTACTS,
        licenseModules: env.LICENSE_MODULES,
        logLevel: env.LOG_LEVEL,
        sessionMode: env.SESSION_MODE,
        notifyWebhookUrl: env.NOTIFY_WEBHOOK_URL,
        notifyWebhookSecret: env.NOTIFY_WEBHOOK_SECRET,
        trustProxy: env.TRUST_PROXY,
        metrics: metricsAccess(env),
        backup:
          env.BACKUP_DIR === undefined
            ? undefined
            : {
                dir: env.BACKUP_DIR,
                at: env.BACKUP_AT,
                timeZone: env.BACKUP_TIME_ZONE,
                keepDays: env.BACKUP_KEEP_DAYS,
              },
        retention: { at: env.RETENTION_AT, timeZone: env.RETENTION_TIME_ZONE },
        printing: {
          allowedHosts: env.PRINTER_HOSTS.map((h) => h.toLowerCase()),
          giveUpMs: env.PRINT_GIVE_UP_SECONDS * 1000,
          labelTimeZone: env.LABEL_TIME_ZONE,
        },
      }),
    ),
  );
};

export const isProduction = (config: Pick<Config, 'nodeEnv'>): boolean => config.nodeEnv === 'production';
