/**
 * The roles record in the private database: one document per role name. The four system roles are
 * created at start and cannot be changed or deleted. Role permissions are read on every
 * authenticated request, so they are cached briefly; this instance's own writes refresh the cache.
 */

import { type Permission, SYSTEM_ROLE_PERMISSIONS, SYSTEM_ROLES } from '../domain/principal.js';
import { RoleDoc } from '../domain/role.js';
import { getDoc, listDocs } from './docs.js';
import { conflictAs, putDoc } from './docWrites.js';
import type { Database } from './pouch.js';
import { isConflict } from './storeErrors.js';

export const roleDocId = (name: string): string => `role:${name}`;

const SYSTEM_DISPLAY_NAMES: Readonly<Record<(typeof SYSTEM_ROLES)[number], string>> = {
  ADMIN: 'Administrador',
  CHAMADOR: 'Chamador',
  RELATORIOS: 'Relatórios',
  CADASTRO: 'Cadastro',
};

export type NewRole = Omit<RoleDoc, '_id' | '_rev' | 'docType'>;

export interface RoleStore {
  ensureSystemRoles(now: string): Promise<void>;
  get(name: string): Promise<RoleDoc | undefined>;
  list(): Promise<RoleDoc[]>;
  create(role: NewRole): Promise<RoleDoc | 'EXISTS'>;
  update(current: RoleDoc, next: NewRole): Promise<RoleDoc | 'CONFLICT'>;
  remove(current: RoleDoc): Promise<'OK' | 'CONFLICT'>;
  /** The permissions the named roles grant (unknown names grant nothing). */
  permissionsOf(roles: ReadonlyArray<string>): Promise<Permission[]>;
}

export const CACHE_TTL_MS = 5_000;

export const roleStore = (db: Database, clock: () => Date = () => new Date()): RoleStore => {
  // Not on the bounded cache (`src/lib/boundedCache.ts`), on purpose: what is held is one value, the
  // listing of every role, which the four system roles and an administrator's few custom roles keep
  // small, so there is nothing to bound and nothing to evict. Its freshness is a time to live (another
  // instance may change a role, and no feed tells this one), and loads are single-flight across a
  // generation; neither is what an entry-count cache gives, and the TTL follows the injected clock.
  type ByName = ReadonlyMap<string, ReadonlyArray<Permission>>;
  let cache: { readonly at: number; readonly byName: ByName } | undefined;
  // One listing at a time: when the cache expired under load, every request in flight listed the
  // roles itself (0019, fourth round). A change of a role starts a new generation: a listing begun
  // before it neither fills the cache nor serves the requests that come after it.
  let loading: Promise<ByName> | undefined;
  let generation = 0;
  const invalidate = () => {
    cache = undefined;
    loading = undefined;
    generation += 1;
  };
  const load = (now: number): Promise<ByName> => {
    if (loading !== undefined) return loading;
    const started = generation;
    const listing = store.list().then((all) => {
      const byName: ByName = new Map(all.map((r) => [r.name, r.permissions]));
      if (started === generation) cache = { at: now, byName };
      return byName;
    });
    const settled = () => {
      if (loading === listing) loading = undefined;
    };
    listing.then(settled, settled);
    loading = listing;
    return listing;
  };
  const store: RoleStore = {
    async ensureSystemRoles(now) {
      for (const name of SYSTEM_ROLES) {
        await db
          .put({
            _id: roleDocId(name),
            docType: 'role',
            name,
            display_name: SYSTEM_DISPLAY_NAMES[name],
            permissions: [...SYSTEM_ROLE_PERMISSIONS[name]],
            is_system: 1,
            created_at: now,
            updated_at: now,
          })
          .catch((e: unknown) => {
            if (!isConflict(e)) throw e;
          });
      }
      invalidate();
    },

    get: (name) => getDoc(db, RoleDoc, roleDocId(name)),

    async list() {
      return (await listDocs(db, RoleDoc, 'role')).sort((a, b) => a.name.localeCompare(b.name));
    },

    async create(role) {
      const created = await putDoc(
        db,
        { _id: roleDocId(role.name), docType: 'role' as const, ...role },
        'EXISTS',
      );
      if (created !== 'EXISTS') invalidate();
      return created;
    },

    async update(current, next) {
      const updated = await putDoc(
        db,
        { _id: current._id, _rev: current._rev, docType: 'role' as const, ...next },
        'CONFLICT',
      );
      if (updated !== 'CONFLICT') invalidate();
      return updated;
    },

    remove: (current) =>
      conflictAs('CONFLICT', async () => {
        await db.remove(current._id, current._rev);
        invalidate();
        return 'OK' as const;
      }),

    async permissionsOf(roles) {
      const now = clock().getTime();
      const byName = cache !== undefined && now - cache.at <= CACHE_TTL_MS ? cache.byName : await load(now);
      return [...new Set(roles.flatMap((r) => byName.get(r) ?? []))];
    },
  };
  return store;
};
