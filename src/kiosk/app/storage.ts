/**
 * What the kiosk keeps in localStorage, each value decoded on the way back in (storage is input too):
 * the device id, the language, the signed-in user and tokens, the check-in configuration, and the
 * label printer this tablet prints on (its layouts are `src/domain/labelLayouts.ts`, shared with the
 * server's print jobs).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { isUuid } from '../../domain/codec.js';
import { isLabelLayout, type LabelLayout } from '../../domain/labelLayouts.js';
import { isLang, type Lang } from './i18n.js';

const KEYS = {
  deviceId: 'chamada.kiosk.deviceId',
  lang: 'chamada.kiosk.lang',
  auth: 'chamada.kiosk.auth',
  config: 'chamada.kiosk.checkinConfig',
  labelLayout: 'chamada.kiosk.labelLayout',
} as const;

export const AuthState = t.intersection([
  t.type({
    accessToken: t.string,
    refreshToken: t.string,
    accessTokenExpiresAt: t.string,
    user: t.type({ userId: t.string, email: t.string, displayName: t.string, roles: t.array(t.string) }),
    /** Set when the server refused the refresh token: the kiosk keeps working, but cannot send. */
    expired: t.boolean,
  }),
  /** The login's end (absent in what older kiosks stored); refreshing never moves it. */
  t.partial({ sessionExpiresAt: t.string }),
]);
export type AuthState = t.TypeOf<typeof AuthState>;

export const CheckinConfig = t.type({
  pickupMode: t.string,
  maxCheckoutAttempts: t.number,
  emergencyCheckoutAdminOnly: t.boolean,
});
export type CheckinConfig = t.TypeOf<typeof CheckinConfig>;
export const DEFAULT_CONFIG: CheckinConfig = {
  pickupMode: 'CODE_ONLY',
  maxCheckoutAttempts: 5,
  emergencyCheckoutAdminOnly: false,
};

const readJson = <A>(key: string, codec: t.Type<A, unknown>): A | undefined => {
  const text = localStorage.getItem(key);
  if (text === null) return undefined;
  try {
    const decoded = codec.decode(JSON.parse(text));
    return E.isRight(decoded) ? decoded.right : undefined;
  } catch {
    return undefined;
  }
};

/** A UUID made once per browser profile: the tablet's `X-Device-Id`. */
export const deviceId = (): string => {
  const stored = localStorage.getItem(KEYS.deviceId);
  if (stored !== null && isUuid(stored)) return stored;
  const made = crypto.randomUUID();
  localStorage.setItem(KEYS.deviceId, made);
  return made;
};

export const loadLang = (): Lang => {
  const stored = localStorage.getItem(KEYS.lang);
  return isLang(stored) ? stored : 'pt-BR';
};
export const saveLang = (lang: Lang): void => localStorage.setItem(KEYS.lang, lang);

/** Kept per tablet: each door has its own printer. */
export const loadLabelLayout = (): LabelLayout => {
  const stored = localStorage.getItem(KEYS.labelLayout);
  return isLabelLayout(stored) ? stored : 'sheet';
};
export const saveLabelLayout = (layout: LabelLayout): void => localStorage.setItem(KEYS.labelLayout, layout);

export const loadAuth = (): AuthState | undefined => readJson(KEYS.auth, AuthState);
export const saveAuth = (auth: AuthState | undefined): void => {
  if (auth === undefined) localStorage.removeItem(KEYS.auth);
  else localStorage.setItem(KEYS.auth, JSON.stringify(auth));
};

export const loadConfig = (): CheckinConfig => readJson(KEYS.config, CheckinConfig) ?? DEFAULT_CONFIG;
export const saveConfig = (config: CheckinConfig): void =>
  localStorage.setItem(KEYS.config, JSON.stringify(config));
