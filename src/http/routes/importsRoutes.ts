/** Student import from a spreadsheet (decision 0030). */
import * as E from 'fp-ts/lib/Either.js';
import {
  columnsOfQuery,
  ImportReport,
  ImportStudentsQuery,
  MAX_IMPORT_ROWS,
  StudentsCsv,
} from '../../domain/studentImport.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

export const importStudentsRoute = defineRoute({
  operationId: 'importStudents',
  method: 'post',
  path: '/api/v1/imports/students',
  auth: 'cadastro',
  permission: 'students.add',
  summary: 'Import students from a spreadsheet (CSV), as a dry run or for real',
  description:
    'The body is the CSV file. Columns are recognised by their headers in Portuguese or English (`nome`, ' +
    '`responsável`, `turma`, `data de nascimento`, `telefone`, … or `name`, `guardian`, `class`, `birth date`, ' +
    '`phone`, …); `column.<field>=<header>` maps any other. `displayName`, `guardianName` and `className` are ' +
    'required columns. Phones in Brazilian formats are stored as E.164. A child is matched by the ' +
    '`externalId` column when the file has one, else by name, birth date and guardian; an empty optional cell ' +
    'leaves the stored value alone, so importing the same file again changes nothing. A class is named by its ' +
    'name; an unknown one is a row error unless `createClasses=true`. Each row is stored whole or not at all, ' +
    `and rows in error are reported, not stored. At most ${MAX_IMPORT_ROWS} rows (413 beyond). Each student ` +
    'created or changed is audited under its id.',
  tags: ['students'],
  query: ImportStudentsQuery,
  body: StudentsCsv,
  response: { status: 200, description: 'What the import did, or would do (dry run).', codec: ImportReport },
  errors: ['PAYLOAD_TOO_LARGE'],
  // Measured: 10,000 rows applied in 24 s on the embedded store of a 2-core machine (a dry run in 4 s);
  // a busy or remote store takes several times that (decision 0046).
  deadline: {
    ms: 120_000,
    why:
      `a file of ${MAX_IMPORT_ROWS} rows takes tens of seconds to apply. Past it the answer is 503 like any ` +
      'request past its deadline, each row stored whole or not at all; sending the file again with the same ' +
      'Idempotency-Key replays the report, or imports again, which changes nothing already stored.',
  },
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const report = await ctx.deps.registration.imports.importStudents(actor.right, ctx.body, {
      // A forgotten flag must never write: the default is the dry run.
      dryRun: ctx.query.dryRun !== 'false',
      createClasses: ctx.query.createClasses === 'true',
      columns: columnsOfQuery(ctx.query),
      correlationId: ctx.correlationId,
    });
    return E.map((body: ImportReport) => ({ body }))(report);
  },
});

export const importsRoutes = [importStudentsRoute];
