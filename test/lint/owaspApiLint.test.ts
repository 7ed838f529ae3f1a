/**
 * The OWASP API Security Top 10 lint of `npm run lint` (decision 0029): the served document has no
 * error under `.spectral.yaml`, and the ruleset still finds errors where they are (a document that
 * loses its limits fails), so a passing lint is not an empty one.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { buildOpenApiDocument } from '../../src/http/openapi/openApiDocument.js';
import { routes as defaultRoutes } from '../../src/http/registry.js';
import { removeDir } from '../support/tempDir.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SPECTRAL = join(ROOT, 'node_modules', '.bin', 'spectral');

// Spectral's JSON format: one finding per rule and place; severity 0 is an error.
const Findings = t.array(t.type({ code: t.union([t.string, t.number]), severity: t.number }));

const lint = async (doc: unknown): Promise<{ errors: number; codes: ReadonlyArray<string> }> => {
  // Under the repository, as `npm run openapi:lint`'s document is: the ruleset's exceptions name
  // paths relative to it.
  await mkdir(join(ROOT, 'build'), { recursive: true });
  const dir = await mkdtemp(join(ROOT, 'build', 'owasp-lint-'));
  try {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(doc));
    // Spectral exits 1 when it finds anything: its findings are on stdout either way.
    const stdout = await new Promise<string>((resolve) => {
      execFile(
        SPECTRAL,
        ['lint', file, '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'json', '--quiet'],
        { maxBuffer: 64 * 1024 * 1024 },
        (_error, out) => resolve(out),
      );
    });
    const results = Findings.decode(JSON.parse(stdout));
    if (E.isLeft(results)) throw new Error(`spectral answered something else: ${stdout.slice(0, 200)}`);
    const errors = results.right.filter((r) => r.severity === 0);
    return { errors: errors.length, codes: errors.map((r) => String(r.code)) };
  } finally {
    await removeDir(dir);
  }
};

describe('OWASP API Security Top 10 lint of the served OpenAPI document', function () {
  this.timeout(120_000);

  it('finds no error in the document the service serves', async () => {
    const result = await lint(buildOpenApiDocument(defaultRoutes));
    expect(result.codes).to.deep.equal([]);
  });

  it('still finds an error in a document that drops a string limit', async () => {
    const doc = JSON.parse(JSON.stringify(buildOpenApiDocument(defaultRoutes)));
    doc.components.schemas.ErrorEnvelope.properties.error.properties.message = { type: 'string' };
    const result = await lint(doc);
    expect(result.codes).to.include('owasp:api4:2023-string-limit');
  });
});
