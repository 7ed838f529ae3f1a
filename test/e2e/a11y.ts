/**
 * axe-core in the page, for the WCAG 2.1 A and AA rules: the engine's source is evaluated through the
 * browser's debugging protocol (the kiosk's Content-Security-Policy allows no injected script tag, and
 * is left as it is), and what it finds comes back as plain data, decoded.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);

const Violations = t.array(
  t.type({ id: t.string, impact: t.union([t.string, t.null]), targets: t.array(t.string) }),
);

let source: string | undefined;

/** The WCAG 2.1 A/AA violations on the page as it is now: "rule: element" lines, none when it passes. */
export const wcagViolations = async (page: Page): Promise<string[]> => {
  source ??= await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  const found: unknown = await page.evaluate(`axe
    .run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
    .then((r) => r.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      targets: v.nodes.map((n) => JSON.stringify(n.target)),
    })))`);
  const decoded = Violations.decode(found);
  if (E.isLeft(decoded)) throw new Error('axe-core answered something unexpected');
  return decoded.right.flatMap((v) => v.targets.map((target) => `${v.id} (${v.impact ?? '?'}): ${target}`));
};
