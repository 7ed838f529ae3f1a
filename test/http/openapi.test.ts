import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildOpenApiDocument } from '../../src/http/openapi/openApiDocument.js';
import { routes } from '../../src/http/registry.js';
import { useService } from '../support/harness.js';
import { call } from '../support/http.js';
import { countingRoutes, probeRoutes } from '../support/probeRoutes.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';
import { authHeaders, DEV_TOKENS } from '../support/testService.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const operationsOf = (doc: Record<string, unknown>): string[] => {
  const paths = doc.paths;
  if (typeof paths !== 'object' || paths === null) throw new Error('no paths');
  return Object.entries(paths).flatMap(([path, item]) =>
    METHODS.filter((m) => typeof item === 'object' && item !== null && m in item).map(
      (m) => `${m.toUpperCase()} ${path}`,
    ),
  );
};

const fill = (path: string) => path.replace(/\{[^}]+\}/g, '6f1c2a8e-9d3b-4c5e-8f7a-1b2c3d4e5f60');

describe('OpenAPI document', () => {
  const h = useService();

  it('is served at /api/v1/openapi.json as OpenAPI 3.1.0, info version 1.0.0', async () => {
    const r = await call(`${h.url}/api/v1/openapi.json`);
    expect(r.status).to.equal(200);
    expect(r.json).to.deep.include({ openapi: '3.1.0' });
    expect(r.json).to.have.nested.property('info.version', '1.0.0');
  });

  it('lists exactly the operations of the registry', async () => {
    const served = (await call(`${h.url}/api/v1/openapi.json`)).json;
    if (typeof served !== 'object' || served === null) throw new Error('not an object');
    const documented = operationsOf({ ...served });
    expect(documented).to.have.members(routes.map((r) => `${r.method.toUpperCase()} ${r.path}`));
  });

  it('every documented operation is routed by the app (none falls through to the 404 handler)', async () => {
    const doc = buildOpenApiDocument(routes);
    for (const op of operationsOf(doc)) {
      const [method = '', path = ''] = op.split(' ');
      const r = await call(`${h.url}${fill(path)}`, {
        method,
        headers: authHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN),
      });
      const notRouted = r.status === 404 && r.text.includes('No such route');
      expect(notRouted, `${op} is documented but not routed`).to.equal(false);
    }
  });

  it('an undocumented path is not routed', async () => {
    const r = await call(`${h.url}/api/v1/undocumented`);
    expect(r.status).to.equal(404);
  });

  it('documents the error envelope, the bearer scheme and the device-id header once routes need them', () => {
    const doc = buildOpenApiDocument(probeRoutes());
    expect(doc).to.have.nested.property('components.schemas.ErrorEnvelope');
    expect(doc).to.have.nested.property('components.securitySchemes.bearerAuth.scheme', 'bearer');
    expect(doc).to.have.nested.property('components.parameters.DeviceId.in', 'header');
    expect(doc).to.have.nested.property('paths./api/v1/_probe/admin.get.responses.403');
    expect(doc).to.have.nested.property('paths./api/v1/_probe/echo/{itemId}.post.requestBody');
    expect(doc).to.have.nested.property(
      'paths./api/v1/_probe/echo/{itemId}.post.responses.201.headers.Location',
    );
  });

  it('lists SESSION_EXPIRED beside UNAUTHORIZED in the 401 of every authenticated route, and no 401 on a public one', () => {
    const doc = buildOpenApiDocument(probeRoutes());
    for (const auth of ['bearer', 'admin'])
      expect(doc)
        .to.have.nested.property(`paths./api/v1/_probe/${auth}.get.responses.401.description`)
        .that.contains('`UNAUTHORIZED`')
        .and.contains('`SESSION_EXPIRED`');
    expect(doc).not.to.have.nested.property('paths./api/v1/_probe/none.get.responses.401');
  });

  it('shows closed request bodies (additionalProperties false) with their bounds', () => {
    const doc = buildOpenApiDocument(probeRoutes());
    expect(doc).to.have.nested.property('components.schemas.ProbeEchoBody.additionalProperties', false);
    expect(doc).to.have.nested.property(
      'components.schemas.ProbeEchoBody.properties.displayName.maxLength',
      80,
    );
    expect(doc).to.have.nested.property('components.schemas.ProbeEchoBody.properties.classId.format', 'uuid');
  });
});

describe('OpenAPI document: idempotency', () => {
  it('requires Idempotency-Key on mutations and documents the 409 and the replay header', () => {
    const doc = buildOpenApiDocument(probeRoutes());
    const op = 'paths./api/v1/_probe/echo/{itemId}.post';
    expect(doc)
      .to.have.nested.property(`${op}.parameters`)
      .that.deep.includes({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(doc).to.have.nested.property('components.parameters.IdempotencyKey.required', true);
    expect(doc)
      .to.have.nested.property(`${op}.responses.409.description`)
      .that.contains('IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_PAYLOAD');
    expect(doc).to.have.nested.property(`${op}.responses.201.headers.Idempotent-Replayed`);
  });

  it('does not ask for a key on reads', () => {
    const doc = buildOpenApiDocument(probeRoutes());
    expect(JSON.stringify(doc.paths)).to.contain('IdempotencyKey');
    expect(doc)
      .to.have.nested.property('paths./api/v1/_probe/admin.get.parameters')
      .that.does.not.deep.include({
        $ref: '#/components/parameters/IdempotencyKey',
      });
  });
});

describe('OpenAPI document: lint of every shape the generator produces', function () {
  this.timeout(60_000);
  it('a document with every auth class, bodies, path and query parameters and mutations passes redocly recommended-strict', async () => {
    const dir = await makeTempDir('openapi');
    try {
      const file = join(dir, 'openapi.json');
      await writeFile(
        file,
        JSON.stringify(buildOpenApiDocument(probeRoutes(countingRoutes({ items: 0, flaky: 0, missing: 0 })))),
      );
      const lint = spawnSync(
        join('node_modules', '.bin', 'redocly'),
        ['lint', file, '--config', 'redocly.yaml', '--format=summary'],
        {
          encoding: 'utf8',
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        },
      );
      expect(lint.status, `${lint.stdout}\n${lint.stderr}`).to.equal(0);
    } finally {
      await removeDir(dir);
    }
  });
});
