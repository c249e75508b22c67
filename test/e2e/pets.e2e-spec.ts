import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../utils/test-app.js';

/** The sample pet store: no /v1 prefix, no credential, `{code:0,data}` on success and `{code:<status>,message}` on failure. */
describe('sample pet endpoints', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  /** A fresh pet through the public form endpoint; returns the response's pet. */
  async function addPet(name: string, status: string) {
    const res = await t.http.post('/pet').type('form').send({ name, status });
    expect(res.status).toBe(201);
    return res.body.data as { id: number; name: string; status: string; category: object; photoUrls: string[]; tags: object[] };
  }

  function expectPetError(res: { status: number; body: unknown }, status: number) {
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ code: status, message: expect.any(String) });
  }

  describe('POST /pet (form-encoded)', () => {
    it('creates a pet with empty category, photoUrls and tags, answering 201 {code:0,data}', async () => {
      const res = await t.http.post('/pet').type('form').send({ name: 'Rex', status: 'available' });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.body).toEqual({
        code: 0,
        data: { id: expect.any(Number), name: 'Rex', category: {}, photoUrls: [], tags: [], status: 'available' },
      });
      expect(Number.isInteger(res.body.data.id)).toBe(true);
      expect(res.body.data.id).toBeGreaterThanOrEqual(1);

      const again = await t.http.get(`/pet/${res.body.data.id}`);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
    });

    it('gives every new pet its own id', async () => {
      const a = await addPet('One', 'pending');
      const b = await addPet('Two', 'sold');
      expect(a.id).not.toBe(b.id);
      expect(a.status).toBe('pending');
      expect(b.status).toBe('sold');
    });

    it('answers 400 {code:400,message} when name or status is missing', async () => {
      for (const form of [{ status: 'available' }, { name: 'Rex' }, {}]) {
        const res = await t.http.post('/pet').type('form').send(form);
        expectPetError(res, 400);
      }
    });

    it('answers 400 for an empty name or a status outside available/pending/sold', async () => {
      for (const form of [
        { name: '', status: 'available' },
        { name: 'Rex', status: 'lost' },
        { name: 'Rex', status: 'AVAILABLE' },
        { name: 'Rex', status: '' },
      ]) {
        const res = await t.http.post('/pet').type('form').send(form);
        expectPetError(res, 400);
      }
    });
  });

  describe('GET /pet/{petId}', () => {
    it('returns the pet', async () => {
      const pet = await addPet('Findme', 'pending');
      const res = await t.http.get(`/pet/${pet.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ code: 0, data: pet });
    });

    it('answers 404 {code:404,message} for an id that does not exist', async () => {
      const res = await t.http.get('/pet/999999999');
      expectPetError(res, 404);
    });

    it('answers 400 for a non-numeric, zero, negative, fractional or oversized id', async () => {
      for (const id of ['abc', '0', '-1', '1.5', '1e3', '12abc', '99999999999999999999']) {
        const res = await t.http.get(`/pet/${id}`);
        expectPetError(res, 400);
      }
    });
  });

  describe('PUT /pet (JSON)', () => {
    it('updates the given fields, keeps omitted ones and replaces category, tags and photoUrls', async () => {
      const pet = await addPet('Before', 'available');

      const first = await t.http.put('/pet').send({
        id: pet.id,
        category: { id: 1, name: 'Dogs' },
        photoUrls: ['https://img.example/a.png', 'https://img.example/b.png'],
        tags: [{ id: 1, name: 'friendly' }, { name: 'large' }],
      });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        code: 0,
        data: {
          id: pet.id,
          name: 'Before',
          status: 'available',
          category: { id: 1, name: 'Dogs' },
          photoUrls: ['https://img.example/a.png', 'https://img.example/b.png'],
          tags: [{ id: 1, name: 'friendly' }, { name: 'large' }],
        },
      });

      // Objects and arrays are replaced, not merged: the category's id and the old tags are gone.
      const second = await t.http.put('/pet').send({
        id: pet.id,
        name: 'After',
        status: 'sold',
        category: { name: 'Cats' },
        photoUrls: ['https://img.example/c.png'],
        tags: [{ id: 7 }],
      });
      expect(second.status).toBe(200);
      const expected = {
        id: pet.id,
        name: 'After',
        status: 'sold',
        category: { name: 'Cats' },
        photoUrls: ['https://img.example/c.png'],
        tags: [{ id: 7 }],
      };
      expect(second.body).toEqual({ code: 0, data: expected });

      // Stored, not only echoed.
      const stored = await t.http.get(`/pet/${pet.id}`);
      expect(stored.body).toEqual({ code: 0, data: expected });

      // An update carrying only the id changes nothing.
      const noop = await t.http.put('/pet').send({ id: pet.id });
      expect(noop.status).toBe(200);
      expect(noop.body.data).toEqual(expected);

      // Empty arrays and objects clear.
      const cleared = await t.http.put('/pet').send({ id: pet.id, category: {}, photoUrls: [], tags: [] });
      expect(cleared.status).toBe(200);
      expect(cleared.body.data).toEqual({ ...expected, category: {}, photoUrls: [], tags: [] });
    });

    it('answers 400 when the id is missing or not a positive integer', async () => {
      for (const body of [{ name: 'No id' }, { id: 0, name: 'x' }, { id: -3 }, { id: 'abc' }, { id: 1.5 }]) {
        const res = await t.http.put('/pet').send(body);
        expectPetError(res, 400);
      }
    });

    it('answers 404 for an unknown id', async () => {
      const res = await t.http.put('/pet').send({ id: 999999999, name: 'Ghost' });
      expectPetError(res, 404);
    });

    it('answers 400 for an invalid status, field types or null fields, and leaves the pet unchanged', async () => {
      const pet = await addPet('Stable', 'pending');
      for (const body of [
        { id: pet.id, status: 'lost' },
        { id: pet.id, name: '' },
        { id: pet.id, photoUrls: 'not-an-array' },
        { id: pet.id, tags: [{ id: 0 }] },
        { id: pet.id, category: { id: 'x' } },
        { id: pet.id, tags: ['x'] },
        // null is not "omitted": it must not reach the NOT NULL columns (was a 500).
        { id: pet.id, name: null },
        { id: pet.id, status: null },
        { id: pet.id, photoUrls: null },
        { id: pet.id, tags: null },
        { id: pet.id, category: null },
      ]) {
        const res = await t.http.put('/pet').send(body);
        expectPetError(res, 400);
      }
      const stored = await t.http.get(`/pet/${pet.id}`);
      expect(stored.body.data).toEqual(pet);
    });

    it('answers 400 in the pet envelope for malformed JSON', async () => {
      const res = await t.http.put('/pet').set('Content-Type', 'application/json').send('{"id": 1, "name": ');
      expectPetError(res, 400);
      expect(res.body).not.toHaveProperty('error');
    });
  });

  describe('DELETE /pet/{petId}', () => {
    it('deletes without an api_key header, answering {code:0}, then 404', async () => {
      const pet = await addPet('Gone', 'sold');
      const res = await t.http.delete(`/pet/${pet.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ code: 0 });

      expectPetError(await t.http.get(`/pet/${pet.id}`), 404);
      expectPetError(await t.http.delete(`/pet/${pet.id}`), 404);
    });

    it('deletes with an api_key header', async () => {
      const pet = await addPet('Gone too', 'available');
      const res = await t.http.delete(`/pet/${pet.id}`).set('api_key', 'special-key');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ code: 0 });
      expectPetError(await t.http.get(`/pet/${pet.id}`), 404);
    });

    it('answers 404 for an unknown id and 400 for a bad one', async () => {
      expectPetError(await t.http.delete('/pet/999999999'), 404);
      for (const id of ['abc', '0', '-1']) {
        expectPetError(await t.http.delete(`/pet/${id}`), 400);
      }
    });
  });

  describe('GET /pet/findByStatus', () => {
    let available: number;
    let pending: number;
    let sold: number;

    beforeAll(async () => {
      available = (await addPet('Status available', 'available')).id;
      pending = (await addPet('Status pending', 'pending')).id;
      sold = (await addPet('Status sold', 'sold')).id;
    });

    function ids(body: { data: { id: number }[] }): number[] {
      return body.data.map((p) => p.id);
    }

    it('finds pets by one status', async () => {
      const res = await t.http.get('/pet/findByStatus').query({ status: 'pending' });
      expect(res.status).toBe(200);
      expect(res.body.code).toBe(0);
      expect(Array.isArray(res.body.data)).toBe(true);
      expect(res.body.data.every((p: { status: string }) => p.status === 'pending')).toBe(true);
      expect(ids(res.body)).toContain(pending);
      expect(ids(res.body)).not.toContain(available);
      expect(ids(res.body)).not.toContain(sold);
      const mine = res.body.data.find((p: { id: number }) => p.id === pending);
      expect(mine).toEqual({ id: pending, name: 'Status pending', category: {}, photoUrls: [], tags: [], status: 'pending' });
    });

    it('finds pets by comma-separated statuses', async () => {
      const res = await t.http.get('/pet/findByStatus?status=available,sold');
      expect(res.status).toBe(200);
      expect(res.body.code).toBe(0);
      expect(res.body.data.every((p: { status: string }) => ['available', 'sold'].includes(p.status))).toBe(true);
      expect(ids(res.body)).toEqual(expect.arrayContaining([available, sold]));
      expect(ids(res.body)).not.toContain(pending);
    });

    it('finds pets by repeated status parameters', async () => {
      const res = await t.http.get('/pet/findByStatus?status=pending&status=sold');
      expect(res.status).toBe(200);
      expect(res.body.data.every((p: { status: string }) => ['pending', 'sold'].includes(p.status))).toBe(true);
      expect(ids(res.body)).toEqual(expect.arrayContaining([pending, sold]));
      expect(ids(res.body)).not.toContain(available);
    });

    it('answers 400 when status is missing, empty or invalid (alone or among valid ones)', async () => {
      for (const url of [
        '/pet/findByStatus',
        '/pet/findByStatus?status=',
        '/pet/findByStatus?status=lost',
        '/pet/findByStatus?status=available,lost',
        '/pet/findByStatus?status=available&status=lost',
      ]) {
        expectPetError(await t.http.get(url), 400);
      }
    });
  });

  it('needs no credential: an absent or bogus Authorization header changes nothing', async () => {
    const pet = await addPet('Open', 'available');
    for (const headers of [{}, { Authorization: 'Bearer not-a-real-key' }]) {
      const get = await t.http.get(`/pet/${pet.id}`).set(headers);
      expect(get.status).toBe(200);
      const find = await t.http.get('/pet/findByStatus?status=available').set(headers);
      expect(find.status).toBe(200);
      const put = await t.http.put('/pet').set(headers).send({ id: pet.id, name: 'Open still' });
      expect(put.status).toBe(200);
    }
    const created = await t.http.post('/pet').set({ Authorization: 'Bearer not-a-real-key' }).type('form').send({ name: 'Open too', status: 'sold' });
    expect(created.status).toBe(201);
    const del = await t.http.delete(`/pet/${pet.id}`).set({ Authorization: 'Bearer not-a-real-key' });
    expect(del.status).toBe(200);
  });
});
