/** The one translator of the kiosk and the office: each app's dictionaries, `{name}` filled in. */
import { expect } from 'chai';
import { interpolate, type Params, translator } from '../../src/client/translator.js';

describe('client: the translator', () => {
  const cases: ReadonlyArray<[string, Params, string]> = [
    ['Saída de {name}', { name: 'Ana' }, 'Saída de Ana'],
    ['{n} aguardando envio', { n: 3 }, '3 aguardando envio'],
    [
      '{name} tem {age}, fora da faixa ({range}).',
      { name: 'Ana', age: '2 anos', range: '3–5' },
      'Ana tem 2 anos, fora da faixa (3–5).',
    ],
    // Every occurrence, not just the first.
    ['{name} e {name}', { name: 'Ana' }, 'Ana e Ana'],
    // A value that looks like a placeholder is not read again.
    ['Olá, {name}', { name: '{other}' }, 'Olá, {other}'],
    // A placeholder given no value stays as written, so the omission shows.
    ['Olá, {name}', {}, 'Olá, {name}'],
    // An empty value is a value.
    ['Excluída. Justificativa: {reason}', { reason: '' }, 'Excluída. Justificativa: '],
    // A name the object inherits is no value.
    ['{toString}', {}, '{toString}'],
    ['Sem marcadores', { name: 'Ana' }, 'Sem marcadores'],
  ];
  for (const [text, params, expected] of cases)
    it(`${JSON.stringify(text)} with ${JSON.stringify(params)} → ${JSON.stringify(expected)}`, () =>
      expect(interpolate(text, params)).to.equal(expected));

  it("looks a key up in the language's own dictionary", () => {
    const t = translator<'hello'>({ 'pt-BR': { hello: 'Olá, {name}' }, en: { hello: 'Hello, {name}' } });
    expect(t('pt-BR')('hello', { name: 'Ana' })).to.equal('Olá, Ana');
    expect(t('en')('hello', { name: 'Ana' })).to.equal('Hello, Ana');
  });
});
