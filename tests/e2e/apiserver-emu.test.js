'use strict';
// Proves that tests/apiserver-emu behaves like kube-apiserver for what the
// publisher uses. Run: node --test tests/e2e/apiserver-emu.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const https = require('node:https');
const http = require('node:http');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startEmulator, quantity } = require('../apiserver-emu');

const G = '/apis/resource.k8s.io';

// request performs one HTTPS request with a fresh connection.
function request(emu, method, p, { body, token = emu.token, headers = {}, cert } = {}) {
  return new Promise((resolve, reject) => {
    const h = { Accept: 'application/json', ...headers };
    if (token) h.Authorization = `Bearer ${token}`;
    let data;
    if (body !== undefined) {
      data = typeof body === 'string' ? body : JSON.stringify(body);
      h['Content-Type'] = h['Content-Type'] || 'application/json';
      // Node sends DELETE bodies without framing unless told the length.
      h['Content-Length'] = Buffer.byteLength(data);
    }
    const req = https.request(emu.url + p, { method, ca: emu.caPem, headers: h, agent: false, ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ code: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (data !== undefined) req.write(data);
    req.end();
  });
}

// watch opens a watch and collects events; next(n) waits for n more events.
function watch(emu, p) {
  const events = [];
  let waiters = [];
  let ended = false;
  let headers;
  const wake = () => { for (const w of waiters) w(); waiters = []; };
  const req = https.get(emu.url + p, { ca: emu.caPem, headers: { Authorization: `Bearer ${emu.token}` }, agent: false }, (res) => {
    headers = { code: res.statusCode, ...res.headers };
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (c) => {
      buf += c;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) { events.push(JSON.parse(buf.slice(0, i))); buf = buf.slice(i + 1); }
      wake();
    });
    res.on('end', () => { ended = true; wake(); });
    res.on('error', () => { ended = true; wake(); });
  });
  req.on('error', () => { ended = true; wake(); });
  const api = {
    events,
    get ended() { return ended; },
    get headers() { return headers; },
    async until(pred, ms = 3000) {
      const end = Date.now() + ms;
      while (!pred()) {
        if (Date.now() > end) throw new Error(`watch: timed out; events=${JSON.stringify(events.map((e) => e.type))}`);
        await new Promise((r) => { waiters.push(r); setTimeout(r, 50); });
      }
    },
    next(n = 1) { const want = events.length + n; return api.until(() => events.length >= want || ended).then(() => events.slice(want - n, want)); },
    close() { req.destroy(); },
  };
  return api;
}

function slice(over = {}) {
  const s = {
    apiVersion: 'resource.k8s.io/v1', kind: 'ResourceSlice',
    metadata: { generateName: 'node-1-gpu.example.com-' },
    spec: {
      driver: 'gpu.example.com', nodeName: 'node-1', pool: { name: 'node-1', generation: 1, resourceSliceCount: 1 },
      devices: [{ name: 'gpu-0', attributes: { model: { string: 'A100' }, driverVersion: { version: '1.2.3' } }, capacity: { memory: { value: '1024Mi' } } }],
    },
  };
  return { ...s, ...over, spec: { ...s.spec, ...(over.spec || {}) } };
}

function v1beta1Slice(over = {}) {
  const s = slice(over);
  s.apiVersion = 'resource.k8s.io/v1beta1';
  s.spec.devices = s.spec.devices.map(({ name, ...rest }) => ({ name, basic: rest }));
  return s;
}

let emu34; // 1.34-like: v1 + v1beta2 + v1beta1
let emu32; // 1.32-like: v1beta1 only
let tmp;

test.before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'emu-test-'));
  [emu34, emu32] = await Promise.all([
    startEmulator({ nodes: ['node-1'], tokenFile: path.join(tmp, 'token'), controlPort: 0, historySize: 50 }),
    startEmulator({ versions: ['v1beta1'], nodes: ['node-1'] }),
  ]);
});

test.after(async () => {
  await Promise.all([emu34 && emu34.stop(), emu32 && emu32.stop()]);
});

test('discovery follows the served version set', async () => {
  let r = await request(emu34, 'GET', G);
  assert.equal(r.code, 200);
  assert.equal(r.json.kind, 'APIGroup');
  assert.deepEqual(r.json.versions.map((v) => v.version), ['v1', 'v1beta2', 'v1beta1']);
  assert.equal(r.json.preferredVersion.version, 'v1');
  r = await request(emu34, 'GET', `${G}/v1`);
  const rs = r.json.resources.find((x) => x.name === 'resourceslices');
  assert.equal(rs.namespaced, false);
  assert.equal(rs.kind, 'ResourceSlice');
  for (const v of ['create', 'delete', 'get', 'list', 'update', 'watch']) assert.ok(rs.verbs.includes(v), v);
  assert.ok(r.json.resources.find((x) => x.name === 'resourceclaims' && x.namespaced));

  r = await request(emu32, 'GET', '/apis');
  assert.deepEqual(r.json.groups[0].versions.map((v) => v.groupVersion), ['resource.k8s.io/v1beta1']);
  r = await request(emu32, 'GET', '/version');
  assert.equal(r.json.minor, '32');
  // An unserved group version ends in Go's http.NotFound: plain text 404.
  for (const p of [`${G}/v1`, `${G}/v1/resourceslices`, `${G}/v1beta2/resourceslices?watch=true`]) {
    r = await request(emu32, 'GET', p);
    assert.equal(r.code, 404, p);
    assert.equal(r.text, '404 page not found\n');
  }
  // An unknown resource inside a served version is a NotFound Status.
  r = await request(emu32, 'GET', `${G}/v1beta1/nosuchthings`);
  assert.equal(r.code, 404);
  assert.equal(r.json.reason, 'NotFound');
  r = await request(emu34, 'GET', '/api/v1');
  assert.ok(r.json.resources.some((x) => x.name === 'nodes'));
});

test('authentication: 401 without or with an unknown token, client certificates, rotation', async () => {
  for (const token of [null, 'bogus']) {
    const r = await request(emu34, 'GET', `${G}/v1/resourceslices`, { token });
    assert.equal(r.code, 401);
    assert.deepEqual(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
  }
  const cert = emu34.issueClientCert('system:node:node-1', ['system:nodes']);
  emu34.resetLog();
  let r = await request(emu34, 'GET', '/api/v1/nodes/node-1', { token: null, cert });
  assert.equal(r.code, 200);
  assert.equal(r.json.metadata.name, 'node-1');
  assert.match(r.json.metadata.uid, /^[0-9a-f-]{36}$/);
  assert.equal(emu34.requests()[0].user, 'system:node:node-1');

  const old = emu34.token;
  assert.equal(fs.readFileSync(path.join(tmp, 'token'), 'utf8').trim(), old);
  const fresh = emu34.rotateToken();
  assert.equal((await request(emu34, 'GET', '/version', { token: old })).code, 401);
  assert.equal((await request(emu34, 'GET', '/version', { token: fresh })).code, 200);
  assert.equal(fs.readFileSync(path.join(tmp, 'token'), 'utf8').trim(), fresh);
  r = await request(emu34, 'GET', '/api/v1/nodes/nope');
  assert.equal(r.code, 404);
  assert.equal(r.json.message, 'nodes "nope" not found');
});

test('create with generateName returns 201 and the stored object', async () => {
  const r = await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: slice() });
  assert.equal(r.code, 201);
  const m = r.json.metadata;
  assert.match(m.name, /^node-1-gpu\.example\.com-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assert.equal(m.generation, 1);
  assert.match(m.uid, /^[0-9a-f-]{36}$/);
  assert.match(m.resourceVersion, /^\d+$/);
  assert.match(m.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(r.json.kind, 'ResourceSlice');
  // The server returns quantities in canonical form.
  assert.equal(r.json.spec.devices[0].capacity.memory.value, '1Gi');
  // A long prefix is cut to 58 characters before the 5 random ones.
  const long = slice({ metadata: { generateName: 'n'.repeat(70) } });
  const r2 = await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: long });
  assert.equal(r2.code, 201);
  assert.equal(r2.json.metadata.name.length, 63);
  assert.ok(r2.json.metadata.name.startsWith('n'.repeat(58)));
  // Fixed name twice: AlreadyExists.
  const fixed = slice({ metadata: { name: 'fixed-name' } });
  assert.equal((await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: fixed })).code, 201);
  const dup = await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: fixed });
  assert.equal(dup.code, 409);
  assert.equal(dup.json.reason, 'AlreadyExists');
  assert.equal(dup.json.message, 'resourceslices.resource.k8s.io "fixed-name" already exists');
});

test('replace: 409 on a stale resourceVersion, unconditional without, generation bumps, 404 without create-on-update', async () => {
  const c = (await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: slice() })).json;
  const name = c.metadata.name;
  const upd = JSON.parse(JSON.stringify(c));
  upd.spec.pool.generation = 2;
  let r = await request(emu34, 'PUT', `${G}/v1/resourceslices/${name}`, { body: upd });
  assert.equal(r.code, 200);
  assert.equal(r.json.metadata.generation, 2);
  assert.ok(Number(r.json.metadata.resourceVersion) > Number(c.metadata.resourceVersion));
  // Same PUT again with the old RV: conflict, with the exact upstream text.
  r = await request(emu34, 'PUT', `${G}/v1/resourceslices/${name}`, { body: upd });
  assert.equal(r.code, 409);
  assert.equal(r.json.reason, 'Conflict');
  assert.equal(r.json.message, `Operation cannot be fulfilled on resourceslices.resource.k8s.io "${name}": the object has been modified; please apply your changes to the latest version and try again`);
  assert.deepEqual(r.json.details, { name, group: 'resource.k8s.io', kind: 'resourceslices' });
  // Without resourceVersion: unconditional.
  delete upd.metadata.resourceVersion;
  upd.metadata.labels = { a: 'b' };
  r = await request(emu34, 'PUT', `${G}/v1/resourceslices/${name}`, { body: upd });
  assert.equal(r.code, 200);
  assert.equal(r.json.metadata.generation, 2, 'metadata-only change keeps generation');
  // A no-op PUT does not write: same RV.
  const rv = r.json.metadata.resourceVersion;
  r = await request(emu34, 'PUT', `${G}/v1/resourceslices/${name}`, { body: r.json });
  assert.equal(r.json.metadata.resourceVersion, rv);
  // Immutable driver.
  const imm = { ...r.json, spec: { ...r.json.spec, driver: 'other.example.com' } };
  r = await request(emu34, 'PUT', `${G}/v1/resourceslices/${name}`, { body: imm });
  assert.equal(r.code, 422);
  assert.deepEqual(r.json.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "other.example.com": field is immutable', field: 'spec.driver' }]);
  r = await request(emu34, 'PUT', `${G}/v1/resourceslices/missing`, { body: { ...upd, metadata: { name: 'missing' } } });
  assert.equal(r.code, 404);
  assert.equal(r.json.message, 'resourceslices.resource.k8s.io "missing" not found');
});

test('delete: preconditions 409, deleted object returned, 404 Status when missing', async () => {
  const c = (await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: slice() })).json;
  const name = c.metadata.name;
  let r = await request(emu34, 'DELETE', `${G}/v1/resourceslices/${name}`, {
    body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'wrong-uid', resourceVersion: c.metadata.resourceVersion } },
  });
  assert.equal(r.code, 409);
  assert.equal(r.json.reason, 'Conflict');
  assert.equal(r.json.message, `Operation cannot be fulfilled on ResourceSlice.resource.k8s.io "${name}": the UID in the precondition (wrong-uid) does not match the UID in record (${c.metadata.uid}). The object might have been deleted and then recreated`);
  r = await request(emu34, 'DELETE', `${G}/v1/resourceslices/${name}`, { body: { preconditions: { uid: c.metadata.uid, resourceVersion: '1' } } });
  assert.equal(r.code, 409);
  assert.match(r.json.message, /the ResourceVersion in the precondition \(1\) does not match/);
  r = await request(emu34, 'DELETE', `${G}/v1/resourceslices/${name}`, { body: { preconditions: { uid: c.metadata.uid, resourceVersion: c.metadata.resourceVersion } } });
  assert.equal(r.code, 200);
  assert.equal(r.json.kind, 'ResourceSlice');
  assert.equal(r.json.metadata.uid, c.metadata.uid);
  r = await request(emu34, 'DELETE', `${G}/v1/resourceslices/${name}`);
  assert.equal(r.code, 404);
  assert.deepEqual(r.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: `resourceslices.resource.k8s.io "${name}" not found`, reason: 'NotFound',
    details: { name, group: 'resource.k8s.io', kind: 'resourceslices' }, code: 404,
  });
});

test('validation: 422 Invalid with causes naming field paths per version', async () => {
  const causes = async (emu, version, body) => {
    const r = await request(emu, 'POST', `${G}/${version}/resourceslices`, { body });
    assert.equal(r.code, 422, r.text);
    assert.equal(r.json.reason, 'Invalid');
    assert.equal(r.json.details.kind, 'ResourceSlice');
    return r.json.details.causes;
  };
  // 33 attributes in v1: one cause on the device.
  const attrs = {};
  for (let i = 0; i < 33; i++) attrs[`a${i}`] = { int: i };
  let cs = await causes(emu34, 'v1', slice({ spec: { devices: [{ name: 'd0', attributes: attrs }] } }));
  assert.deepEqual(cs, [{ reason: 'FieldValueInvalid', message: 'Invalid value: 33: the total number of attributes and capacities must not exceed 32', field: 'spec.devices[0]' }]);
  // Same in v1beta1 on a 1.32 server: the path goes through `basic`.
  cs = await causes(emu32, 'v1beta1', v1beta1Slice({ spec: { devices: [{ name: 'd0', attributes: attrs }] } }));
  assert.deepEqual(cs.map((x) => x.field), ['spec.devices[0].basic']);
  // 129 devices.
  const many = Array.from({ length: 129 }, (_, i) => ({ name: `d${i}` }));
  cs = await causes(emu34, 'v1', slice({ spec: { devices: many } }));
  assert.deepEqual(cs, [{ reason: 'FieldValueTooMany', message: 'Too many: 129: must have at most 128 items', field: 'spec.devices' }]);
  // Bad semver and upper-case device name, v1beta1 paths.
  cs = await causes(emu32, 'v1beta1', v1beta1Slice({ spec: { devices: [{ name: 'GPU-0', attributes: { v: { version: 'v1.2.3' }, s: { string: 'x'.repeat(65) } } }] } }));
  assert.deepEqual(cs.map((x) => [x.reason, x.field]), [
    ['FieldValueInvalid', 'spec.devices[0].name'],
    ['FieldValueInvalid', 'spec.devices[0].basic.attributes[v].version'],
    ['FieldValueTooLong', 'spec.devices[0].basic.attributes[s].string'],
  ]);
  assert.match(cs[0].message, /^Invalid value: "GPU-0": a lowercase RFC 1123 label must consist of/);
  assert.equal(cs[1].message, 'Invalid value: "v1.2.3": must be a string compatible with semver.org spec 2.0.0');
  assert.equal(cs[2].message, 'Too long: may not be more than 64 bytes');
  // Duplicate device names, bad qualified name, zero resourceSliceCount.
  cs = await causes(emu34, 'v1', slice({ spec: { pool: { name: 'p', generation: 0, resourceSliceCount: 0 }, devices: [{ name: 'a', attributes: { '1bad': { bool: true }, 'a/b/c': { bool: true }, none: {} } }, { name: 'a' }] } }));
  assert.deepEqual(cs.map((x) => [x.reason, x.field]), [
    ['FieldValueInvalid', 'spec.pool.resourceSliceCount'],
    ['FieldValueInvalid', 'spec.devices[0].attributes[1bad]'],
    ['FieldValueRequired', 'spec.devices[0].attributes[none]'],
    ['FieldValueDuplicate', 'spec.devices[1]'],
  ]);
  // v1 rejects explicit "" nodeName and allNodes:false; v1beta1 treats "" as unset.
  cs = await causes(emu34, 'v1', slice({ spec: { nodeName: '', allNodes: false } }));
  assert.deepEqual(cs.map((x) => [x.field, x.message]), [
    ['spec.nodeName', 'Invalid value: "": must be either unset or set to a non-empty string'],
    ['spec.allNodes', 'Invalid value: false: must be either unset or set to true'],
    ['spec', 'Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required'],
  ]);
  const ok = v1beta1Slice({ spec: { nodeName: '', allNodes: true } });
  const r = await request(emu32, 'POST', `${G}/v1beta1/resourceslices`, { body: ok });
  assert.equal(r.code, 201, r.text);
  assert.equal(r.json.spec.nodeName, undefined);
  // Driver names: upper case passes (lower-cased check), > 63 does not.
  const up = await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: slice({ metadata: { name: 'upper-driver' }, spec: { driver: 'GPU.Example.com' } }) });
  assert.equal(up.code, 201);
  cs = await causes(emu34, 'v1', slice({ spec: { driver: `${'a'.repeat(60)}.com` } }));
  assert.deepEqual(cs.map((x) => x.reason), ['FieldValueTooLong']);
});

test('1.38: names with more than one \'/\' and per-device selectors with more than one term are refused; older slices stay updatable; v1beta1 is not served', async () => {
  const e = await startEmulator({ kubeVersion: '1.37.0', nodes: ['node-1'] });
  try {
    const post = (body) => request(e, 'POST', `${G}/v1/resourceslices`, { body });
    const names = ['a/b/c', '/a/b', 'a//b'];
    const withNames = (n) => slice({ spec: { devices: [{ name: 'gpu-0', attributes: Object.fromEntries(n.map((k) => [k, { bool: true }])), capacity: { 'x/y/z': { value: '1' } } }] } });
    const term = { matchExpressions: [{ key: 'rack', operator: 'In', values: ['r1'] }] };
    const perDevice = (terms) => slice({ spec: { nodeName: undefined, perDeviceNodeSelection: true, devices: [{ name: 'gpu-0', nodeSelector: { nodeSelectorTerms: terms } }] } });
    // 1.37 takes both, and serves v1beta1.
    let r = await post(withNames(names));
    assert.equal(r.code, 201, r.text);
    const old = r.json;
    r = await post(perDevice([term, term]));
    assert.equal(r.code, 201, r.text);
    assert.ok((await request(e, 'GET', G)).json.versions.some((v) => v.version === 'v1beta1'));

    await e.restart({ kubeVersion: '1.38.0' });
    assert.deepEqual(e.versions, ['v1', 'v1beta2']);
    r = await request(e, 'GET', G);
    assert.deepEqual(r.json.versions.map((v) => v.version), ['v1', 'v1beta2']);
    r = await request(e, 'GET', `${G}/v1beta1/resourceslices`);
    assert.equal(r.code, 404);
    assert.equal(r.text, '404 page not found\n');
    assert.equal((await request(e, 'GET', '/version')).json.minor, '38');
    r = await post(withNames(names));
    assert.equal(r.code, 422, r.text);
    assert.deepEqual(r.json.details.causes.map((c) => [c.field, c.message]), [
      ...names.map((n) => [`spec.devices[0].attributes[${n}]`, `Invalid value: "${n}": a qualified name must not contain more than one '/'`]),
      ['spec.devices[0].capacity[x/y/z]', 'Invalid value: "x/y/z": a qualified name must not contain more than one \'/\''],
    ]);
    r = await post(perDevice([term, term]));
    assert.equal(r.code, 422, r.text);
    assert.deepEqual(r.json.details.causes.map((c) => c.field), ['spec.devices[0].nodeSelector.nodeSelectorTerms']);
    assert.match(r.json.details.causes[0].message, /must have exactly one node selector term/);
    r = await post(perDevice([term]));
    assert.equal(r.code, 201, r.text);
    // The slice stored under 1.37 stays updatable while spec.devices is
    // as it was; a change to its devices meets the rule.
    const upd = { ...old, spec: { ...old.spec, pool: { ...old.spec.pool, generation: 2 } } };
    r = await request(e, 'PUT', `${G}/v1/resourceslices/${old.metadata.name}`, { body: upd });
    assert.equal(r.code, 200, r.text);
    const dev = { ...r.json.spec.devices[0], attributes: { ...r.json.spec.devices[0].attributes, extra: { int: 1 } } };
    r = await request(e, 'PUT', `${G}/v1/resourceslices/${old.metadata.name}`, { body: { ...r.json, spec: { ...r.json.spec, devices: [dev] } } });
    assert.equal(r.code, 422, r.text);
    assert.ok(r.json.details.causes.some((c) => c.field === 'spec.devices[0].attributes[a/b/c]'), r.text);
  } finally {
    await e.stop();
  }
});

test('validation: requestPolicy ranges and values against default and capacity (1.37)', async () => {
  const post = (policy) => request(emu34, 'POST', `${G}/v1/resourceslices`, {
    body: slice({ spec: { devices: [{ name: 'nic-0', allowMultipleAllocations: true, capacity: { bw: { value: '100G', requestPolicy: policy } } }] } }),
  });
  const causes = async (policy) => {
    const r = await post(policy);
    assert.equal(r.code, 422, r.text);
    return r.json.details.causes.map((x) => [x.field.replace('spec.devices[0].capacity[bw].requestPolicy', 'rp'), x.message]);
  };
  assert.equal((await post({ default: '10G', validRange: { min: '10G', max: '100G', step: '10G' } })).code, 201);
  assert.equal((await post({ default: '25G', validValues: ['25G', '50G', '100G'] })).code, 201);
  assert.deepEqual(await causes({ default: '5G', validRange: { min: '10G', max: '110G', step: '30G' } }), [
    ['rp.validRange.min', 'Invalid value: "5G": default is less than min: 10G'],
    ['rp.validRange.max', 'Invalid value: "110G": max is larger than capacity value: 100G'],
    ['rp.validRange.step', 'Invalid value: "5G": value is not a multiple of a given step (30G) from (10G)'],
    ['rp.validRange.step', 'Invalid value: "110G": value is not a multiple of a given step (30G) from (10G)'],
  ]);
  assert.deepEqual(await causes({ default: '30G', validValues: ['50G', '25G', '25G', '200G'] }), [
    ['rp.validValues[1]', 'Invalid value: "25G": values must be sorted in ascending order'],
    ['rp.validValues[3]', 'Invalid value: "200G": option is larger than capacity value: 100G'],
    ['rp.validValues[2]', 'Duplicate value: "25G"'],
    ['rp.validValues', 'Invalid value: "30G": default value is not valid according to the requestPolicy'],
  ]);
  assert.deepEqual((await causes({ validRange: { min: '1G' } })).map((c) => c[0]), ['rp.default']);
  assert.deepEqual((await causes({ default: '1G', validValues: ['1G'], validRange: { min: '1G' } })).map((c) => c[0]), ['rp']);
});

test('bad quantities and wrong JSON types are decode errors (400), unknown fields a warning', async () => {
  let r = await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: slice({ spec: { devices: [{ name: 'd', capacity: { mem: { value: '1Gb' } } }] } }) });
  assert.equal(r.code, 400);
  assert.equal(r.json.reason, 'BadRequest');
  assert.equal(r.json.message, `ResourceSlice in version "v1" cannot be handled as a ResourceSlice: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  r = await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: slice({ spec: { pool: { name: 'p', generation: '1', resourceSliceCount: 1 } } }) });
  assert.equal(r.code, 400);
  assert.match(r.json.message, /cannot unmarshal string into Go struct field .* of type int64/);
  // A v1beta1-shaped device sent to v1: `basic` is unknown, dropped with a warning.
  const mixed = slice({ metadata: { name: 'mixed' } });
  mixed.spec.devices = [{ name: 'd', basic: { attributes: { a: { int: 1 } } } }];
  r = await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: mixed });
  assert.equal(r.code, 201);
  assert.equal(r.headers.warning, '299 - "unknown field \\"spec.devices[0].basic\\""');
  assert.deepEqual(r.json.spec.devices, [{ name: 'd' }]);
  r = await request(emu34, 'POST', `${G}/v1/resourceslices?fieldValidation=Strict`, { body: { ...mixed, metadata: { name: 'mixed2' } } });
  assert.equal(r.code, 400);
});

test('quantity parser and canonical forms match apimachinery', () => {
  const cases = {
    '1024Mi': '1Gi', '1Gi': '1Gi', '1.5Gi': '1536Mi', '0.5Gi': '512Mi', '1.5': '1500m', '1000': '1k', '100': '100',
    '0': '0', '0m': '0', '1e3': '1e3', '1.5e3': '1500', '+5': '+5', '1.500': '1.500', '0.5Ki': '512', '2000m': '2', '0.1n': '1n',
  };
  for (const [i, o] of Object.entries(cases)) assert.equal(quantity.normalize(i), o, i);
  for (const bad of ['', '1x', 'abc', '1Kib', '1.2.3', '1e']) assert.throws(() => quantity.parse(bad), undefined, bad);
  assert.ok(quantity.equal('1Gi', '1024Mi'));
  assert.ok(!quantity.equal('1G', '1Gi'));
});

test('list: field selectors, unsupported labels 400, items without kind', async () => {
  const e = await startEmulator({ versions: ['v1'] });
  try {
    const mk = (name, driver, nodeName) => request(e, 'POST', `${G}/v1/resourceslices`, {
      body: slice({ metadata: { name }, spec: { driver, ...(nodeName ? { nodeName } : { nodeName: undefined, allNodes: true }) } }),
    });
    for (const [n, d, node] of [['a', 'gpu.example.com', 'node-1'], ['b', 'gpu.example.com', 'node-2'], ['c', 'nic.example.com', 'node-1'], ['d', 'gpu.example.com', null]]) {
      assert.equal((await mk(n, d, node)).code, 201);
    }
    const names = async (q) => {
      const r = await request(e, 'GET', `${G}/v1/resourceslices?fieldSelector=${encodeURIComponent(q)}`);
      assert.equal(r.code, 200, r.text);
      assert.equal(r.json.kind, 'ResourceSliceList');
      assert.match(r.json.metadata.resourceVersion, /^\d+$/);
      for (const it of r.json.items) { assert.equal(it.kind, undefined); assert.equal(it.apiVersion, undefined); }
      return r.json.items.map((i) => i.metadata.name);
    };
    assert.deepEqual(await names('spec.driver=gpu.example.com,spec.nodeName=node-1'), ['a']);
    assert.deepEqual(await names('spec.driver=gpu.example.com'), ['a', 'b', 'd']);
    assert.deepEqual(await names('spec.nodeName='), ['d']);
    assert.deepEqual(await names('spec.nodeName!=node-1'), ['b', 'd']);
    assert.deepEqual(await names('metadata.name=c'), ['c']);
    const r = await request(e, 'GET', `${G}/v1/resourceslices?fieldSelector=spec.pool.name%3Dnode-1`);
    assert.equal(r.code, 400);
    assert.equal(r.json.message, 'field label not supported: spec.pool.name');
    // Paging.
    const p1 = await request(e, 'GET', `${G}/v1/resourceslices?limit=3`);
    assert.equal(p1.json.items.length, 3);
    assert.equal(p1.json.metadata.remainingItemCount, 1);
    const p2 = await request(e, 'GET', `${G}/v1/resourceslices?limit=3&continue=${encodeURIComponent(p1.json.metadata.continue)}`);
    assert.deepEqual(p2.json.items.map((i) => i.metadata.name), ['d']);
    // deletecollection returns the deleted objects; the log shows the writes.
    e.resetLog();
    const dc = await request(e, 'DELETE', `${G}/v1/resourceslices?fieldSelector=${encodeURIComponent('spec.driver=gpu.example.com')}`);
    assert.equal(dc.code, 200);
    assert.deepEqual(dc.json.items.map((i) => i.metadata.name), ['a', 'b', 'd']);
    assert.deepEqual(e.getSlices().map((s) => s.metadata.name), ['c']);
    assert.equal(e.writes().length, 1);
  } finally { await e.stop(); }
});

test('the same object in v1beta1 and v1 shapes; devices null before 1.35; deprecation warnings', async () => {
  const c = await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: slice({ metadata: { name: 'shape' } }) });
  assert.equal(c.code, 201);
  const b1 = (await request(emu34, 'GET', `${G}/v1beta1/resourceslices/shape`)).json;
  const v1 = (await request(emu34, 'GET', `${G}/v1/resourceslices/shape`)).json;
  assert.equal(b1.apiVersion, 'resource.k8s.io/v1beta1');
  assert.deepEqual(b1.spec.devices, [{ name: 'gpu-0', basic: { attributes: { driverVersion: { version: '1.2.3' }, model: { string: 'A100' } }, capacity: { memory: { value: '1Gi' } } } }]);
  assert.deepEqual(v1.spec.devices, [{ name: 'gpu-0', attributes: { driverVersion: { version: '1.2.3' }, model: { string: 'A100' } }, capacity: { memory: { value: '1Gi' } } }]);
  assert.equal(b1.metadata.resourceVersion, v1.metadata.resourceVersion);
  // Empty device list: "devices": null on 1.34 (no omitempty), omitted on 1.35.
  const empty = slice({ metadata: { name: 'empty' }, spec: { devices: [] } });
  let r = await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: empty });
  assert.ok(r.text.includes('"devices":null'));
  assert.equal(r.headers.warning, undefined);
  const e35 = await startEmulator({ kubeVersion: '1.35.0' });
  try {
    r = await request(e35, 'POST', `${G}/v1/resourceslices`, { body: empty });
    assert.equal(r.code, 201);
    assert.ok(!r.text.includes('"devices"'));
    r = await request(e35, 'GET', `${G}/v1beta1/resourceslices`);
    assert.equal(r.headers.warning, '299 - "resource.k8s.io/v1beta1 ResourceSlice is deprecated in v1.35+, unavailable in v1.38+; use resource.k8s.io/v1 ResourceSlice"');
    r = await request(e35, 'GET', `${G}/v1/resourceslices`);
    assert.equal(r.headers.warning, undefined);
  } finally { await e35.stop(); }
});

test('watch: events with kind, bookmarks, timeout, 410 after compaction', async () => {
  const list = await request(emu34, 'GET', `${G}/v1/resourceslices?fieldSelector=spec.nodeName%3Dnode-9`);
  const rv = list.json.metadata.resourceVersion;
  const w = watch(emu34, `${G}/v1/resourceslices?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&fieldSelector=${encodeURIComponent('spec.driver=gpu.example.com,spec.nodeName=node-9')}`);
  await w.until(() => w.headers);
  assert.equal(w.headers.code, 200);
  assert.equal(w.headers['content-type'], 'application/json');
  assert.equal(w.headers['transfer-encoding'], 'chunked');
  // An event for another node must not arrive.
  await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: slice() });
  const c = (await request(emu34, 'POST', `${G}/v1/resourceslices`, { body: slice({ spec: { nodeName: 'node-9' } }) })).json;
  let [ev] = await w.next();
  assert.equal(ev.type, 'ADDED');
  assert.equal(ev.object.kind, 'ResourceSlice');
  assert.equal(ev.object.apiVersion, 'resource.k8s.io/v1');
  assert.equal(ev.object.metadata.name, c.metadata.name);
  const upd = { ...c, spec: { ...c.spec, pool: { ...c.spec.pool, generation: 5 } } };
  const u = (await request(emu34, 'PUT', `${G}/v1/resourceslices/${c.metadata.name}`, { body: upd })).json;
  [ev] = await w.next();
  assert.equal(ev.type, 'MODIFIED');
  assert.equal(ev.object.metadata.resourceVersion, u.metadata.resourceVersion);
  emu34.sendBookmarks();
  [ev] = await w.next();
  assert.equal(ev.type, 'BOOKMARK');
  assert.deepEqual(ev.object.metadata, { resourceVersion: String(emu34.resourceVersion), creationTimestamp: null });
  assert.deepEqual(ev.object.spec, { driver: '', pool: { name: '', generation: 0, resourceSliceCount: 0 }, devices: null });
  const d = await request(emu34, 'DELETE', `${G}/v1/resourceslices/${c.metadata.name}`);
  [ev] = await w.next();
  assert.equal(ev.type, 'DELETED');
  assert.equal(ev.object.metadata.resourceVersion, d.json.metadata.resourceVersion);
  assert.equal(emu34.dropWatches(), 1);
  await w.until(() => w.ended);

  // resourceVersion=0: synthetic ADDED for what exists; timeoutSeconds ends the stream.
  const w0 = watch(emu34, `${G}/v1beta1/resourceslices?watch=1&resourceVersion=0&timeoutSeconds=1&fieldSelector=metadata.name%3Dshape`);
  await w0.until(() => w0.ended, 3000);
  assert.deepEqual(w0.events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name]), [['ADDED', 'resource.k8s.io/v1beta1', 'shape']]);

  // Old RV after compaction: 200 with one ERROR event (410 Expired), then close.
  const oldRV = Number(rv);
  const cur = emu34.compactHistory();
  const w2 = watch(emu34, `${G}/v1/resourceslices?watch=true&resourceVersion=${oldRV}`);
  await w2.until(() => w2.ended);
  assert.equal(w2.headers.code, 200);
  assert.deepEqual(w2.events, [{ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${oldRV} (${cur})`, reason: 'Expired', code: 410 } }]);
});

test('watch history is bounded: old resourceVersions expire without compaction', async () => {
  const e = await startEmulator({ versions: ['v1'], historySize: 3 });
  try {
    const rv0 = e.resourceVersion;
    for (let i = 0; i < 5; i++) await request(e, 'POST', `${G}/v1/resourceslices`, { body: slice() });
    const w = watch(e, `${G}/v1/resourceslices?watch=true&resourceVersion=${rv0}`);
    await w.until(() => w.ended);
    assert.equal(w.events[0].object.code, 410);
    const w2 = watch(e, `${G}/v1/resourceslices?watch=true&resourceVersion=${e.resourceVersion - 2}`);
    const evs = await w2.next(2);
    assert.deepEqual(evs.map((x) => x.type), ['ADDED', 'ADDED']);
    w2.close();
  } finally { await e.stop(); }
});

test('resourceclaims: allocated and unallocated, per-version shape, UID change', async () => {
  const alloc = {
    namespace: 'ns1', name: 'claim-1',
    allocation: {
      results: [{ request: 'gpu', driver: 'gpu.example.com', pool: 'node-1', device: 'gpu-0' }],
      config: [{ source: 'FromClaim', requests: ['gpu'], opaque: { driver: 'gpu.example.com', parameters: { mode: 'shared' } } }],
    },
  };
  const c = emu34.addClaim(alloc);
  emu34.addClaim({ namespace: 'ns1', name: 'claim-2' });
  let r = await request(emu34, 'GET', `${G}/v1/namespaces/ns1/resourceclaims/claim-1`);
  assert.equal(r.code, 200);
  assert.equal(r.json.kind, 'ResourceClaim');
  assert.equal(r.json.metadata.uid, c.metadata.uid);
  assert.deepEqual(r.json.status.allocation.devices.results, alloc.allocation.results);
  assert.deepEqual(r.json.status.allocation.devices.config, alloc.allocation.config);
  assert.ok(r.json.spec.devices.requests[0].exactly);
  const b = await request(emu34, 'GET', `${G}/v1beta1/namespaces/ns1/resourceclaims/claim-1`);
  assert.equal(b.json.spec.devices.requests[0].exactly, undefined);
  assert.equal(b.json.spec.devices.requests[0].deviceClassName, 'example.com');
  assert.deepEqual(b.json.status, r.json.status);
  r = await request(emu34, 'GET', `${G}/v1/namespaces/ns1/resourceclaims/claim-2`);
  assert.deepEqual(r.json.status, {});
  emu34.setClaimUID('ns1', 'claim-1', '11111111-2222-3333-4444-555555555555');
  r = await request(emu34, 'GET', `${G}/v1/namespaces/ns1/resourceclaims/claim-1`);
  assert.equal(r.json.metadata.uid, '11111111-2222-3333-4444-555555555555');
  r = await request(emu34, 'GET', `${G}/v1/namespaces/ns1/resourceclaims/nope`);
  assert.equal(r.code, 404);
  assert.equal(r.json.message, 'resourceclaims.resource.k8s.io "nope" not found');
});

test('resourceclaims: the kept answer follows every change of the claim, in every version', async () => {
  emu34.addClaim({ namespace: 'ns1', name: 'kept', allocation: { results: [{ request: 'gpu', driver: 'gpu.example.com', pool: 'node-1', device: 'gpu-0' }] } });
  const get = async (v = 'v1') => (await request(emu34, 'GET', `${G}/${v}/namespaces/ns1/resourceclaims/kept`)).json;
  const first = await get();
  assert.deepEqual(await get(), first);
  assert.equal((await get('v1beta1')).apiVersion, 'resource.k8s.io/v1beta1');
  emu34.updateClaim('ns1', 'kept', (c) => { c.status.reservedFor = [{ resource: 'pods', name: 'p', uid: 'u-1' }]; return c; });
  let now = await get();
  assert.deepEqual(now.status.reservedFor, [{ resource: 'pods', name: 'p', uid: 'u-1' }]);
  assert.notEqual(now.metadata.resourceVersion, first.metadata.resourceVersion);
  assert.deepEqual((await get('v1beta1')).status.reservedFor, now.status.reservedFor);
  // A function that edits its copy and returns nothing: only the
  // resourceVersion moves, and the answer shows it.
  const rv = now.metadata.resourceVersion;
  emu34.updateClaim('ns1', 'kept', (c) => { c.status = {}; });
  now = await get();
  assert.notEqual(now.metadata.resourceVersion, rv);
  assert.equal(now.status.reservedFor.length, 1);
  emu34.deallocateClaim('ns1', 'kept');
  assert.deepEqual((await get()).status, { reservedFor: [{ resource: 'pods', name: 'p', uid: 'u-1' }] });
  emu34.deleteClaim('ns1', 'kept');
  assert.equal((await request(emu34, 'GET', `${G}/v1/namespaces/ns1/resourceclaims/kept`)).code, 404);
  emu34.addClaim({ namespace: 'ns1', name: 'kept', uid: '99999999-2222-3333-4444-555555555555' });
  assert.equal((await get()).metadata.uid, '99999999-2222-3333-4444-555555555555');
});

test('request targets: the quick parse reads every target as new URL does', () => {
  const { parseTarget } = require('../apiserver-emu/server.js');
  const viaURL = (t) => { const u = new URL(t, 'https://x'); return { pathname: u.pathname, query: Object.fromEntries(u.searchParams) }; };
  const targets = [`${G}/v1/namespaces/a/resourceclaims/b`, `${G}/v1/namespaces/a/resourceclaims/b/`, '/', '//x/y', '/a//b', '/a/./b', '/a/../b',
    '/a/.', '/a/..', '/.a/..b/...', '/a/%2e%2e/b', '/a/%2E/b', '/a\\b', '/a b', '/a"b', '/a<b>', '/a{b}', '/a`b', '/a#b', '/a?b#c', '/a?', '/a?&', '/a?x',
    '/a?x=1&x=2', '/a?x=a+b', '/a?x=%20', '/a?x=%zz', '/a?x=%', '/a?%61=b', '/a?x=<y>', "/a?x='y'", '/a?x="y"', '/a?x=a%26b=c', '/a?=v', '/a?x==',
    '/a?fieldSelector=spec.nodeName%3Dn,spec.driver!%3Dd', '/a?labelSelector=a+in+(x,y)', '/a?x=\u00e9', '/\u00e9', '/a?x=\t', '/a\t', '*', 'https://h/p?q=1',
    '/a;b', '/a:b@c', '/a?x=a;b', '/%41', '/a~b_c-d.e'];
  const chars = 'ab/.%2e?=&+#\\ ~-_;:@!$()*,\'"<>{}`|^[]\u00e9';
  let seed = 17;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  for (let i = 0; i < 3000; i++) {
    let t = '/';
    for (let k = rnd(12); k > 0; k--) t += chars[rnd(chars.length)];
    targets.push(t);
  }
  // Targets URL cannot parse (such as "//[") fail the same way.
  const outcome = (f, t) => { try { return f(t); } catch (e) { return `throws ${e.code}`; } };
  for (const t of targets) assert.deepEqual(outcome(parseTarget, t), outcome(viaURL, t), `target ${JSON.stringify(t)}`);
});

test('fault injection: status codes with Retry-After, resets, delays, request log, rate check', async () => {
  emu34.resetLog();
  emu34.inject({ method: 'GET', path: `${G}/v1/resourceslices`, status: 429, retryAfter: 1, times: 2 });
  let r = await request(emu34, 'GET', `${G}/v1/resourceslices`);
  assert.equal(r.code, 429);
  assert.equal(r.headers['retry-after'], '1');
  assert.deepEqual(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Too many requests, please try again later.', reason: 'TooManyRequests', details: { retryAfterSeconds: 1 }, code: 429 });
  assert.equal((await request(emu34, 'GET', `${G}/v1/resourceslices`)).code, 429);
  assert.equal((await request(emu34, 'GET', `${G}/v1/resourceslices`)).code, 200);

  emu34.inject({ method: 'POST', path: `${G}/*/resourceslices`, action: 'reset' });
  await assert.rejects(request(emu34, 'POST', `${G}/v1/resourceslices`, { body: slice() }), /ECONNRESET|socket hang up/);
  emu34.inject({ method: 'GET', path: '/version', action: 'delay', delayMs: 300 });
  const t0 = Date.now();
  assert.equal((await request(emu34, 'GET', '/version')).code, 200);
  assert.ok(Date.now() - t0 >= 280);
  emu34.inject({ path: '/api/v1/nodes/*', status: 500 });
  r = await request(emu34, 'GET', '/api/v1/nodes/node-1');
  assert.equal(r.code, 500);
  assert.equal(r.json.reason, 'InternalError');

  const log = emu34.requests();
  assert.deepEqual(log.map((e) => [e.method, e.status]), [['GET', 429], ['GET', 429], ['GET', 200], ['POST', 0], ['GET', 200], ['GET', 500]]);
  assert.equal(log[3].body.spec.driver, 'gpu.example.com');
  assert.equal(log[0].user, 'system:serviceaccount:kube-system:dra-plugin');
  // Authentication precedes injected statuses: a bad token still gets 401.
  emu34.inject({ path: '/version', status: 429, times: 1 });
  assert.equal((await request(emu34, 'GET', '/version', { token: 'bogus' })).code, 401);
  assert.equal((await request(emu34, 'GET', '/version')).code, 429, 'the 401 did not use up the rule');
  assert.equal(emu34.writes().length, 1);
  // The rate checker flags a burst above 10 requests.
  const t = Date.now();
  const burst = Array.from({ length: 12 }, (_, i) => ({ id: i, time: t + i, method: 'GET', path: '/' }));
  assert.equal(emu34.checkRate({ qps: 5, burst: 10 }, burst).ok, false);
  assert.equal(emu34.checkRate({ qps: 5, burst: 10 }, burst.slice(0, 10)).ok, true);
});

test('external deletion, stale writes after a foreign update, and restart', async () => {
  const e = await startEmulator({ versions: ['v1beta1'], nodes: ['node-1'] });
  try {
    const c = (await request(e, 'POST', `${G}/v1beta1/resourceslices`, { body: v1beta1Slice() })).json;
    e.touchSlice(c.metadata.name);
    let r = await request(e, 'PUT', `${G}/v1beta1/resourceslices/${c.metadata.name}`, { body: c });
    assert.equal(r.code, 409);
    r = await request(e, 'DELETE', `${G}/v1beta1/resourceslices/${c.metadata.name}`, { body: { preconditions: { resourceVersion: c.metadata.resourceVersion } } });
    assert.equal(r.code, 409);
    const w = watch(e, `${G}/v1beta1/resourceslices?watch=true&resourceVersion=${e.resourceVersion}`);
    await w.until(() => w.headers);
    assert.deepEqual(e.deleteSlices({ fieldSelector: 'spec.driver=gpu.example.com,spec.nodeName=node-1' }), [c.metadata.name]);
    const [ev] = await w.next();
    assert.equal(ev.type, 'DELETED');
    // Restart: connections drop, same port and CA, store kept.
    await request(e, 'POST', `${G}/v1beta1/resourceslices`, { body: v1beta1Slice({ metadata: { name: 'kept' } }) });
    const port = e.port;
    await e.restart();
    await w.until(() => w.ended);
    assert.equal(e.port, port);
    r = await request(e, 'GET', `${G}/v1beta1/resourceslices/kept`);
    assert.equal(r.code, 200);
    await e.restart({ freshStore: true });
    r = await request(e, 'GET', `${G}/v1beta1/resourceslices/kept`);
    assert.equal(r.code, 404);
  } finally { await e.stop(); }
});

test('control endpoint over plain HTTP', async () => {
  const call = (name, args) => new Promise((resolve, reject) => {
    const req = http.request(`${emu34.controlUrl}/${name}`, { method: 'POST', agent: false }, (res) => {
      let t = '';
      res.on('data', (c) => { t += c; });
      res.on('end', () => resolve({ code: res.statusCode, json: JSON.parse(t) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(args));
  });
  const id = await call('inject', [{ method: 'GET', path: '/version', status: 503, retryAfter: 2 }]);
  assert.equal(typeof id.json, 'number');
  const r = await request(emu34, 'GET', '/version');
  assert.equal(r.code, 503);
  assert.equal(r.headers['retry-after'], '2');
  assert.equal((await call('nope', [])).code, 404);
  const n = await call('addNode', ['node-x']);
  assert.equal(n.json.name, 'node-x');
  assert.equal((await request(emu34, 'GET', '/api/v1/nodes/node-x')).json.metadata.uid, n.json.uid);
  assert.deepEqual(emu34.internalErrors(), []);
});
