/**
 * Users and roles (ADMIN only; the server answers 403 to anyone else): create a user with roles,
 * change a user's roles, reset a password, deactivate; create a custom role and choose its
 * permissions. System roles are shown with their permissions and cannot be changed.
 */
import * as E from 'fp-ts/lib/Either.js';
import { field, h, replaceChildren } from '../../../client/dom.js';
import { statusOf } from '../../../client/transport.js';
import { PERMISSIONS, type Permission } from '../../../domain/principal.js';
import type { Role } from '../../../domain/role.js';
import type { User } from '../../../domain/user.js';
import { onAnswer, sayFailure } from '../calls.js';
import { api } from '../client.js';
import type { Shell } from '../shell.js';
import { adminWords, row, section, table } from './adminKit.js';
import { type AdminKey, type AdminT, adminTranslator } from './adminText.js';

const permKey = (p: Permission): AdminKey => `perm.${p}`;

/** The ticked boxes' values that are permissions (every box of the group is one). */
const permissionsOf = (values: ReadonlyArray<string>): Permission[] =>
  PERMISSIONS.filter((p) => values.includes(p));

/** A group of checkboxes, one per value, each labelled; `checked()` reads the ticked values. */
const checks = (
  legend: string,
  options: ReadonlyArray<{ value: string; label: string }>,
  ticked: ReadonlyArray<string>,
  disabled = false,
) => {
  const boxes = options.map((o) => {
    const box = h('input', { attrs: { type: 'checkbox', value: o.value } });
    box.checked = ticked.includes(o.value);
    box.disabled = disabled;
    return { o, box };
  });
  return {
    el: h(
      'fieldset',
      { className: 'checks' },
      h('legend', {}, legend),
      ...boxes.map(({ o, box }) => h('label', { className: 'check' }, box, o.label)),
    ),
    checked: () => boxes.filter((b) => b.box.checked).map((b) => b.o.value),
  };
};

export const usersPage = (shell: Shell): void => {
  const at = adminTranslator();
  const users = h('div', { attrs: { 'data-test': 'users' } });
  const roles = h('div', { attrs: { 'data-test': 'roles' } });
  const newUser = h('div');
  const newRole = h('div');
  replaceChildren(
    shell.main,
    h('h1', {}, at('users.title')),
    users,
    newUser,
    section(at('roles.title'), roles, newRole),
  );

  const load = async () => {
    const [ud, rd] = await Promise.all([api.listUsers(), api.listRoles()]);
    const forbidden = [ud, rd].some((a) => E.isLeft(a) && statusOf(a.left) === 403);
    if (forbidden) return shell.say(at('users.forbidden'), 'error');
    if (E.isLeft(ud)) return sayFailure(shell, ud.left, adminWords(at));
    if (E.isLeft(rd)) return sayFailure(shell, rd.left, adminWords(at));
    const roleOptions = rd.right.items.map((x) => ({ value: x.name, label: x.display_name }));
    replaceChildren(
      users,
      table(
        [
          at('users.email'),
          at('users.displayName'),
          at('users.roles'),
          at('users.status'),
          at('col.actions'),
        ],
        ud.right.items.map((x) => userRow(shell, at, x, roleOptions, load)),
        at('users.none'),
        'users-table',
      ),
    );
    replaceChildren(newUser, userForm(shell, at, roleOptions, load));
    replaceChildren(
      roles,
      table(
        [at('roles.displayName'), at('roles.permissions')],
        rd.right.items.map((x) => roleRow(shell, at, x, load)),
        '',
        'roles-table',
      ),
    );
    replaceChildren(newRole, roleForm(shell, at, load));
  };
  void load();
};

const userRow = (
  shell: Shell,
  at: AdminT,
  u: User,
  roleOptions: ReadonlyArray<{ value: string; label: string }>,
  reload: () => Promise<void>,
): HTMLTableRowElement => {
  const active = u.status === 'ACTIVE';
  const roleChecks = checks(at('users.roles'), roleOptions, u.roles, !active);
  const saveRoles = h(
    'button',
    {
      attrs: { type: 'button' },
      onClick: () => {
        void onAnswer(
          shell,
          api.updateUser({ params: { userId: u.userId }, body: { roles: roleChecks.checked() } }),
          () => shell.say(at('users.saved')),
          adminWords(at),
        );
      },
    },
    at('users.saveRoles'),
  );
  const password = h('input', {
    attrs: { type: 'password', autocomplete: 'new-password', minlength: '12', required: '' },
  });
  const reset = h(
    'form',
    {
      className: 'inline',
      onSubmit: (e) => {
        e.preventDefault();
        void onAnswer(
          shell,
          api.resetPassword({ params: { userId: u.userId }, body: { password: password.value } }),
          (reset) => {
            password.value = '';
            shell.say(at('users.resetDone', { count: reset.sessionsRevoked }));
          },
          adminWords(at),
        );
      },
    },
    field(`${at('users.resetPassword')} (${u.email})`, password),
    h('button', { attrs: { type: 'submit' } }, at('users.reset')),
  );
  const deactivate = h(
    'button',
    {
      className: 'danger',
      attrs: { type: 'button', 'aria-label': `${at('users.deactivate')}: ${u.email}` },
      onClick: () => {
        // One click ends every session of the user: asked once, as the kiosk asks before an emergency exit.
        if (!window.confirm(`${at('users.deactivate')}: ${u.email}?`)) return;
        void onAnswer(
          shell,
          api.deactivateUser({ params: { userId: u.userId }, body: {} }),
          async () => {
            shell.say(at('users.deactivated'));
            await reload();
          },
          adminWords(at),
        );
      },
    },
    at('users.deactivate'),
  );
  const statusLabel =
    u.status === 'ACTIVE' || u.status === 'DEACTIVATED' ? at(`users.${u.status}`) : u.status;
  const tr = row(
    u.email,
    u.displayName,
    active ? h('div', {}, roleChecks.el, saveRoles) : u.roles.join(', '),
    statusLabel,
    active ? h('div', {}, reset, deactivate) : null,
  );
  tr.dataset.user = u.email;
  return tr;
};

const userForm = (
  shell: Shell,
  at: AdminT,
  roleOptions: ReadonlyArray<{ value: string; label: string }>,
  reload: () => Promise<void>,
): HTMLFormElement => {
  const email = h('input', { attrs: { type: 'email', required: '', autocomplete: 'off' } });
  const name = h('input', { attrs: { required: '', autocomplete: 'off' } });
  const password = h('input', {
    attrs: { type: 'password', required: '', minlength: '12', autocomplete: 'new-password' },
  });
  const roleChecks = checks(at('users.roles'), roleOptions, []);
  return h(
    'form',
    {
      attrs: { 'data-test': 'user-form' },
      onSubmit: (e) => {
        e.preventDefault();
        void onAnswer(
          shell,
          api.createUser({
            body: {
              email: email.value.trim(),
              displayName: name.value.trim(),
              password: password.value,
              roles: roleChecks.checked(),
            },
          }),
          async () => {
            await reload();
            shell.say(at('users.created'));
          },
          adminWords(at),
        );
      },
    },
    h('h2', {}, at('users.new')),
    field(at('users.email'), email),
    field(at('users.displayName'), name),
    field(at('users.password'), password),
    roleChecks.el,
    h('button', { attrs: { type: 'submit' } }, at('users.create')),
  );
};

const permissionOptions = (at: AdminT) => PERMISSIONS.map((p) => ({ value: p, label: at(permKey(p)) }));

const roleRow = (shell: Shell, at: AdminT, r: Role, reload: () => Promise<void>): HTMLTableRowElement => {
  const system = r.is_system === 1;
  const perms = checks(at('roles.permissions'), permissionOptions(at), r.permissions, system);
  const save = h(
    'button',
    {
      attrs: { type: 'button' },
      onClick: () => {
        void onAnswer(
          shell,
          api.updateRole({ params: { name: r.name }, body: { permissions: permissionsOf(perms.checked()) } }),
          async () => {
            shell.say(at('roles.saved'));
            await reload();
          },
          adminWords(at),
        );
      },
    },
    at('roles.save'),
  );
  return row(
    system ? `${r.display_name} (${r.name}, ${at('roles.system')})` : `${r.display_name} (${r.name})`,
    system ? perms.el : h('div', {}, perms.el, save),
  );
};

const roleForm = (shell: Shell, at: AdminT, reload: () => Promise<void>): HTMLFormElement => {
  const name = h('input', { attrs: { required: '', pattern: '[A-Z][A-Z0-9_]{1,39}', autocomplete: 'off' } });
  const display = h('input', { attrs: { required: '', maxlength: '80', autocomplete: 'off' } });
  const perms = checks(at('roles.permissions'), permissionOptions(at), []);
  return h(
    'form',
    {
      attrs: { 'data-test': 'role-form' },
      onSubmit: (e) => {
        e.preventDefault();
        void onAnswer(
          shell,
          api.createRole({
            body: {
              name: name.value.trim(),
              display_name: display.value.trim(),
              permissions: permissionsOf(perms.checked()),
            },
          }),
          async () => {
            await reload();
            shell.say(at('roles.created'));
          },
          adminWords(at),
        );
      },
    },
    h('h3', {}, at('roles.create')),
    field(at('roles.name'), name),
    field(at('roles.displayName'), display),
    perms.el,
    h('button', { attrs: { type: 'submit' } }, at('roles.create')),
  );
};
