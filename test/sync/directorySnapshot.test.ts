/**
 * The student directory's snapshot file (decision 0040): what is written is read back, the file is
 * gone once read, and a file that does not belong to the database as it is now is never used.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { DIRECTORY_SNAPSHOT_VERSION } from '../../src/domain/directorySnapshot.js';
import { takeDirectorySnapshot, writeDirectorySnapshot } from '../../src/sync/directorySnapshot.js';
import type { StudentSummary } from '../../src/sync/studentDirectory.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const summaries: StudentSummary[] = [
  {
    studentId: '1b6f3c1e-8d0a-4e6b-9a55-2f0c7d1e9a01',
    displayName: 'Ana Souza',
    status: 'ACTIVE',
    photoRef: 'photos/ana.jpg',
    updatedAt: '2026-11-01T10:00:00.000Z',
    classId: '7a0e0b5c-3f51-4d7e-8c1b-5a2b9e3d4c10',
    visitor: false,
    visitorSince: null,
  },
  {
    studentId: '2c7a4d2f-9e1b-4f7c-8b66-3a1d8e2fab02',
    displayName: 'Bia',
    status: 'DELETED',
    photoRef: null,
    updatedAt: '2026-11-02T10:00:00.000Z',
    classId: '7a0e0b5c-3f51-4d7e-8c1b-5a2b9e3d4c10',
    visitor: true,
    visitorSince: '2026-10-30T09:00:00.000Z',
  },
];

const DB = { databaseId: 'db-one', seq: 120 };

describe('the student directory snapshot file', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await makeTempDir('directory-snapshot');
    file = join(dir, 'private.directory.json');
  });
  afterEach(() => removeDir(dir));

  it('reads back what was written, current to its sequence, and removes the file', async () => {
    await writeDirectorySnapshot(file, summaries, DB);
    expect(existsSync(`${file}.partial`), 'no partial file left').to.equal(false);
    const read = await takeDirectorySnapshot(file, { databaseId: 'db-one', seq: 130 });
    expect(read).to.deep.equal({ kind: 'read', seq: 120, summaries });
    expect(existsSync(file), 'removed once read').to.equal(false);
    expect(await takeDirectorySnapshot(file, DB)).to.deep.equal({ kind: 'unusable', reason: 'none' });
  });

  it('writes an empty directory as one', async () => {
    await writeDirectorySnapshot(file, [], DB);
    expect(await takeDirectorySnapshot(file, DB)).to.deep.equal({ kind: 'read', seq: 120, summaries: [] });
  });

  /** A valid file changed by `edit`: each row below must be refused, and removed all the same. */
  const refused: ReadonlyArray<[string, (json: Record<string, unknown>) => unknown, string]> = [
    ['written from another database', (j) => ({ ...j, databaseId: 'db-two' }), 'another database'],
    [
      'ahead of the database (it went back: a copy of an older folder)',
      (j) => ({ ...j, seq: 121 }),
      'the database went back',
    ],
    [
      'of another version',
      (j) => ({ ...j, version: DIRECTORY_SNAPSHOT_VERSION + 1 }),
      'another version or shape',
    ],
    [
      'with a field of the wrong kind',
      (j) => ({ ...j, status: ['ACTIVE', 'GONE'] }),
      'another version or shape',
    ],
    ['with a column that is not a list', (j) => ({ ...j, visitor: 'false' }), 'another version or shape'],
    [
      'with a null where a column holds strings',
      (j) => ({ ...j, classId: [null, 'class-a'] }),
      'another version or shape',
    ],
    [
      'with columns of different lengths',
      (j) => ({ ...j, displayName: ['Ana Souza'] }),
      'columns of different lengths',
    ],
  ];
  for (const [what, edit, reason] of refused) {
    it(`is not used when ${what}`, async () => {
      await writeDirectorySnapshot(file, summaries, DB);
      const json: unknown = JSON.parse(await readFile(file, 'utf8'));
      if (typeof json !== 'object' || json === null) throw new Error('the snapshot is not an object');
      await writeFile(file, JSON.stringify(edit({ ...json })));
      expect(await takeDirectorySnapshot(file, { databaseId: 'db-one', seq: 120 })).to.deep.equal({
        kind: 'unusable',
        reason,
      });
      expect(existsSync(file), 'removed all the same').to.equal(false);
    });
  }

  it('is not used when it is not JSON (a file cut short)', async () => {
    await writeFile(file, '{"version":1,"databaseId":"db-');
    expect(await takeDirectorySnapshot(file, DB)).to.deep.equal({ kind: 'unusable', reason: 'not JSON' });
    expect(existsSync(file)).to.equal(false);
  });
});
