/**
 * What the kiosk keeps in localStorage, each value decoded on the way back in (storage is input too):
 * the device id, the language, the signed-in user and tokens, the check-in configuration, and the
 * label printer this tablet prints on (its layouts are `src/domain/labelLayouts.ts`, shared with the
 * server's print jobs).
 */
import * as t from 'io-ts';
import { deviceIdIn, keptIn } from '../../client/storage.js';
import { isLabelLayout, type LabelLayout } from '../../domain/labelLayouts.js';
import { isLang, type Lang } from './i18n.js';

const KEYS = {
  deviceId: 'chamada.kiosk.deviceId',
  lang: 'chamada.kiosk.lang',
  auth: 'chamada.kiosk.auth',
  config: 'chamada.kiosk.checkinConfig',
  labelLayout: 'chamada.kiosk.labelLayout',
  labelPrinter: 'chamada.kiosk.labelPrinter',
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

/** A UUID made once per browser profile: the tablet's `X-Device-Id`. */
export const deviceId = (): string => deviceIdIn(localStorage, KEYS.deviceId);

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

/**
 * The server's printer this tablet sends its labels to (0051, item 4), with its name for the screen
 * while the list cannot be read; absent: the browser's print dialog.
 */
export const LabelPrinterChoice = t.type({ printerId: t.string, name: t.string });
export type LabelPrinterChoice = t.TypeOf<typeof LabelPrinterChoice>;
const labelPrinter = () => keptIn(localStorage, KEYS.labelPrinter, LabelPrinterChoice);
export const loadLabelPrinter = (): LabelPrinterChoice | undefined => labelPrinter().load();
export const saveLabelPrinter = (choice: LabelPrinterChoice | undefined): void => labelPrinter().save(choice);

// Each value decoded on the way back in: what an older kiosk stored, or a hand-edited value, is input.
const keptAuth = () => keptIn(localStorage, KEYS.auth, AuthState);
const keptConfig = () => keptIn(localStorage, KEYS.config, CheckinConfig);

export const loadAuth = (): AuthState | undefined => keptAuth().load();
export const saveAuth = (auth: AuthState | undefined): void => keptAuth().save(auth);

export const loadConfig = (): CheckinConfig => keptConfig().load() ?? DEFAULT_CONFIG;
export const saveConfig = (config: CheckinConfig): void => keptConfig().save(config);
