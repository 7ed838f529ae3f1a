/**
 * The one translator of both apps: each app keeps its own dictionaries (one per language, the same
 * keys in each) and gets from here the lookup with `{name}` placeholders filled in. A placeholder
 * given no value stays as written, so a value a caller forgot shows on screen instead of vanishing.
 */
export type Lang = 'pt-BR' | 'en';

export const LANGS: ReadonlyArray<Lang> = ['pt-BR', 'en'];

export const isLang = (s: unknown): s is Lang => s === 'pt-BR' || s === 'en';

export type Params = Readonly<Record<string, string | number>>;

export type Dictionaries<K extends string> = Readonly<Record<Lang, Readonly<Record<K, string>>>>;

export type Translate<K extends string> = (key: K, params?: Params) => string;

export const interpolate = (text: string, params: Params = {}): string =>
  text.replace(/\{(\w+)\}/g, (whole, name: string) =>
    Object.hasOwn(params, name) ? String(params[name]) : whole,
  );

export const translator =
  <K extends string>(dictionaries: Dictionaries<K>) =>
  (lang: Lang): Translate<K> =>
  (key, params) =>
    interpolate(dictionaries[lang][key], params);
