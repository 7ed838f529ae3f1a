/** Volunteers in the room as the desk knows them: what it counts, what it asks of the server, what it keeps. */
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import {
  changeRequest,
  makeVolunteerBoard,
  summarise,
  volunteersInRoom,
  volunteersWanted,
} from '../../src/kiosk/app/roomVolunteers.js';

const ME = '6f1c2a0e-0000-4000-8000-000000000001';
const SESSION = '6f1c2a0e-0000-4000-8000-0000000000aa';

const volunteer = (volunteerId: string, userId: string | null, checkedOutAt: string | null = null) => ({
  volunteerId,
  sessionId: SESSION,
  userId,
  name: userId === null ? 'Dona Cida' : 'Beatriz',
  checkedInAt: '2026-11-29T09:00:00.000Z',
  checkedInBy: ME,
  checkedOutAt,
  checkedOutBy: null,
});

describe("kiosk: the volunteers the desk counts in a session's room", () => {
  it("counts those without a check-out and finds the signed-in user's open stay", () => {
    const items = [
      volunteer('v1', ME, '2026-11-29T09:30:00.000Z'),
      volunteer('v2', null),
      volunteer('v3', ME),
    ];
    expect(summarise(items, ME, 0)).to.deep.equal({ inRoom: 2, mine: 'v3', rosterAtRead: 0 });
  });

  it('finds no stay of the user once they left, nor of anyone when nobody is signed in', () => {
    const items = [volunteer('v1', ME, '2026-11-29T09:30:00.000Z'), volunteer('v2', null)];
    expect(summarise(items, ME, 1).mine).to.equal(null);
    expect(summarise([volunteer('v3', ME)], undefined, 1).mine).to.equal(null);
  });

  it("keeps no helper's name: the summary is a count and an id", () => {
    expect(JSON.stringify(summarise([volunteer('v2', null)], ME, undefined))).not.to.include('Cida');
  });

  it('counts the list read at this desk while the roster still says what it said then', () => {
    expect(volunteersInRoom(0, { inRoom: 1, mine: 'v1', rosterAtRead: 0 })).to.equal(1);
    expect(volunteersInRoom(undefined, { inRoom: 2, mine: null, rosterAtRead: undefined })).to.equal(2);
  });

  it('counts the roster once a pull changed it after the read, and the roster alone before any read', () => {
    expect(volunteersInRoom(3, { inRoom: 1, mine: 'v1', rosterAtRead: 0 })).to.equal(3);
    expect(volunteersInRoom(0, { inRoom: 1, mine: 'v1', rosterAtRead: 1 })).to.equal(0);
    expect(volunteersInRoom(2, undefined)).to.equal(2);
    expect(volunteersInRoom(undefined, undefined)).to.equal(0);
  });

  it('asks at least one volunteer of a room with a ratio, even empty, and one per started group of children', () => {
    expect(volunteersWanted(0, 6)).to.equal(1);
    expect(volunteersWanted(6, 6)).to.equal(1);
    expect(volunteersWanted(7, 6)).to.equal(2);
    expect(volunteersWanted(12, null)).to.equal(null);
  });
});

describe('kiosk: the volunteer calls the desk makes', () => {
  it('checks the signed-in user in by their id, a helper by name, and out by the stay', () => {
    expect(changeRequest(SESSION, { kind: 'me-in' }, ME)).to.deep.equal({
      path: `/api/v1/sessions/${SESSION}/volunteers`,
      method: 'POST',
      body: JSON.stringify({ userId: ME }),
    });
    expect(changeRequest(SESSION, { kind: 'helper', name: 'Dona Cida' }, ME)).to.deep.equal({
      path: `/api/v1/sessions/${SESSION}/volunteers`,
      method: 'POST',
      body: JSON.stringify({ name: 'Dona Cida' }),
    });
    expect(changeRequest(SESSION, { kind: 'me-out', volunteerId: 'v/1' }, ME)).to.deep.equal({
      path: `/api/v1/sessions/${SESSION}/volunteers/v%2F1`,
      method: 'DELETE',
    });
  });

  /** A server holding a list; `answer` is the status the next change gets. */
  const fakeServer = (list: unknown[], answer = 201) => {
    const calls: Array<{ method: string; url: string; headers: Headers; body: unknown }> = [];
    const send: typeof fetch = async (input, init) => {
      const method = init?.method ?? 'GET';
      calls.push({
        method,
        url: String(input),
        headers: new Headers(init?.headers),
        body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
      });
      if (method === 'GET') return Response.json({ items: list });
      return Response.json({}, { status: answer });
    };
    return { send, calls };
  };

  it('sends a change with its own Idempotency-Key, then reads the list back and counts it at once', async () => {
    const server = fakeServer([volunteer('v1', ME)]);
    const board = makeVolunteerBoard(
      server.send,
      () => ME,
      () => 0,
    );
    let changes = 0;
    board.onChange(() => {
      changes += 1;
    });
    const done = await board.change(SESSION, { kind: 'me-in' });
    expect(done).to.deep.equal(E.right({ inRoom: 1, mine: 'v1', rosterAtRead: 0 }));
    expect(server.calls.map((c) => c.method)).to.deep.equal(['POST', 'GET']);
    expect(server.calls[0]?.headers.get('Idempotency-Key')).to.match(/^[0-9a-f-]{36}$/);
    expect(server.calls[0]?.body).to.deep.equal({ userId: ME });
    expect(board.known(SESSION)).to.deep.equal({ inRoom: 1, mine: 'v1', rosterAtRead: 0 });
    expect(changes).to.equal(1);
  });

  it('takes a refused check-in of a user already in the room as done, since the list says so', async () => {
    const server = fakeServer([volunteer('v1', ME)], 409);
    const board = makeVolunteerBoard(
      server.send,
      () => ME,
      () => 1,
    );
    expect(E.isRight(await board.change(SESSION, { kind: 'me-in' }))).to.equal(true);
  });

  it('reports a refused helper as the failure it was, with the list read again', async () => {
    const server = fakeServer([], 403);
    const board = makeVolunteerBoard(
      server.send,
      () => ME,
      () => 0,
    );
    expect(await board.change(SESSION, { kind: 'helper', name: 'Dona Cida' })).to.deep.equal(
      E.left('forbidden'),
    );
    expect(board.known(SESSION)).to.deep.equal({ inRoom: 0, mine: null, rosterAtRead: 0 });
  });

  it('says the network is missing without reading anything, and changes nothing it knew', async () => {
    let calls = 0;
    const send: typeof fetch = async () => {
      calls += 1;
      throw new TypeError('Failed to fetch');
    };
    const board = makeVolunteerBoard(
      send,
      () => ME,
      () => 0,
    );
    expect(await board.change(SESSION, { kind: 'me-in' })).to.deep.equal(E.left('network'));
    expect(calls).to.equal(1);
    expect(board.known(SESSION)).to.equal(undefined);
  });

  it('once a pull changed the roster after the read, counts the roster even when it returns to its old count', async () => {
    let roster = 0;
    const board = makeVolunteerBoard(
      fakeServer([volunteer('v1', ME)]).send,
      () => ME,
      () => roster,
    );
    await board.read(SESSION);
    const counted = () => volunteersInRoom(roster, board.known(SESSION));
    expect(counted()).to.equal(1);
    // The roster catches up, then somebody leaves at another door.
    roster = 1;
    board.rosterPulled();
    expect(counted()).to.equal(1);
    roster = 0;
    board.rosterPulled();
    expect(counted()).to.equal(0);
  });

  it('asks for a sign-in when nobody is signed in, and sends nothing', async () => {
    const server = fakeServer([]);
    const board = makeVolunteerBoard(
      server.send,
      () => undefined,
      () => 0,
    );
    expect(await board.change(SESSION, { kind: 'me-in' })).to.deep.equal(E.left('unauthorized'));
    expect(server.calls).to.deep.equal([]);
  });
});
