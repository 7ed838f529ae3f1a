/** Writes the OpenAPI document generated from the route registry, for linting and for client generators. */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { buildOpenApiDocument } from '../src/http/openapi/openApiDocument.js';
import { routes } from '../src/http/registry.js';

const target = process.argv[2] ?? 'build/openapi.json';
await mkdir(dirname(target), { recursive: true });
await writeFile(target, `${JSON.stringify(buildOpenApiDocument(routes), null, 2)}\n`);
process.stdout.write(`wrote ${target}\n`);
