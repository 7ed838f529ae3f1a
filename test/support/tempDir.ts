import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const makeTempDir = (label: string): Promise<string> => mkdtemp(join(tmpdir(), `chamada-${label}-`));

export const removeDir = (dir: string): Promise<void> => rm(dir, { recursive: true, force: true });

/** The temporary folders a suite makes as it goes (`fresh`, or `keep` one made elsewhere), removed together. */
export const tempDirs = () => {
  const dirs: string[] = [];
  return {
    fresh: async (label: string): Promise<string> => {
      const dir = await makeTempDir(label);
      dirs.push(dir);
      return dir;
    },
    keep: (dir: string): void => {
      dirs.push(dir);
    },
    removeAll: async (): Promise<void> => {
      for (const dir of dirs.splice(0)) await removeDir(dir);
    },
  };
};
