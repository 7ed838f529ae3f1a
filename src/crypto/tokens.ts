import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** 32 bytes from the CSPRNG (256 bits; a UUID v4 has 122), base64url: opaque to clients. */
export const newRefreshToken = (): string => randomBytes(32).toString('base64url');

/** Only this digest is stored, so a leaked sessions table cannot be replayed. */
export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** The contract names UUID v4 for CSRF tokens and session ids. */
export const newCsrfToken = (): string => randomUUID();
export const newSessionId = (): string => randomUUID();
