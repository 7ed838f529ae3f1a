import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from './config.js';
import { isProduction } from './config.js';

export const JWT_SECRET_FILE = 'jwt-secret';

/**
 * Outside production a missing JWT_SECRET is generated once and kept in DATA_DIR, so tokens issued
 * before a restart stay valid. Production never reaches the file: the codec already refused it.
 */
export const resolveJwtSecret = async (config: Config): Promise<Config & { readonly jwtSecret: string }> => {
  if (config.jwtSecret !== undefined) return { ...config, jwtSecret: config.jwtSecret };
  if (isProduction(config)) throw new Error('JWT_SECRET is required in production');
  await mkdir(config.dataDir, { recursive: true });
  const file = join(config.dataDir, JWT_SECRET_FILE);
  const existing = await readFile(file, 'utf8').then(
    (s) => s.trim(),
    (e: unknown) => {
      if (e instanceof Error && 'code' in e && e.code === 'ENOENT') return undefined;
      throw e;
    },
  );
  if (existing !== undefined && existing.length >= 43) return { ...config, jwtSecret: existing };
  const secret = randomBytes(32).toString('base64url');
  // `wx` makes the first writer win if two processes start at once; the loser reads the winner's file.
  const written = await writeFile(file, `${secret}\n`, {
    mode: 0o600,
    flag: existing === undefined ? 'wx' : 'w',
  }).then(
    () => true,
    (e: unknown) => {
      if (e instanceof Error && 'code' in e && e.code === 'EEXIST') return false;
      throw e;
    },
  );
  if (written) return { ...config, jwtSecret: secret };
  return { ...config, jwtSecret: (await readFile(file, 'utf8')).trim() };
};
