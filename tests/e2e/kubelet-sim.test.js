'use strict';
// Self-test of the kubelet simulator (tests/kubelet-sim) against fake DRA
// plugins written with grpc-js in this file. If the simulator drifts from
// kubelet's behaviour (upstream-api.md §3) these tests should catch it
// before the simulator is used to judge the C library.

const nodeTest = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { EventEmitter } = require('node:events');
const { execFile } = require('node:child_process');
const grpc = require('@grpc/grpc-js');
const { RegistryWatcher } = require('../kubelet-sim/watcher');
const { KubeletSim, proto, callRaw, validateSupportedVersions } = require('../kubelet-sim');

// Every test gets a timeout so a hang is a failure, not a stuck run.
const test = (name, fn) => nodeTest(name, { timeout: 15000 }, fn);
const FAST = { reconcileMs: 50, rescanMs: 100, retryInitialMs: 50 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(fn, ms = 5000) {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms: ${fn}`);
    await sleep(20);
  }
}

// ---- fixtures -----------------------------------------------------------------

function tempDir(t, prefix = 'ksim-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function startSim(t, options) {
  const sim = new KubeletSim({ ...FAST, ...options });
  sim.start();
  t.after(() => sim.stop());
  return sim;
}

const claim = (ns, name, uid) => ({ namespace: ns, name, uid });

function defaultPrepare(request) {
  const claims = {};
  for (const c of request.claims) {
    claims[c.uid] = {
      devices: [{ request_names: ['req'], pool_name: 'pool', device_name: `dev-${c.name}`, cdi_device_ids: ['example.com/gpu=0'] }],
    };
  }
  return { claims };
}

function defaultUnprepare(request) {
  return { claims: Object.fromEntries(request.claims.map((c) => [c.uid, {}])) };
}

// A DRA service whose handlers may answer with raw bytes (Buffer) or with
// an object, or fail with a { code, details } error.
function draService(api, plugin) {
  const def = proto.serviceDefinition(proto.APIS[api].service);
  const service = {};
  const impl = {};
  for (const method of ['NodePrepareResources', 'NodeUnprepareResources']) {
    const m = def[method];
    service[method] = {
      ...m,
      responseSerialize: (v) => (Buffer.isBuffer(v) ? v : m.responseSerialize(v)),
    };
    impl[method] = (call, callback) => {
      plugin.calls.push({ api, method, path: m.path, request: call.request });
      const handler = method === 'NodePrepareResources' ? plugin.prepare : plugin.unprepare;
      let result;
      try {
        result = handler(call.request, api);
      } catch (err) {
        callback(err);
        return;
      }
      callback(null, result);
    };
  }
  return { service, impl };
}

function bind(server, socketPath) {
  return new Promise((resolve, reject) => {
    server.bindAsync(`unix:${socketPath}`, grpc.ServerCredentials.createInsecure(),
      (err) => (err ? reject(err) : resolve()));
  });
}

// Fake plugin: registration server at regSocket; DRA services on the same
// socket (endpoint '') or on a separate draSocket.
async function startFakePlugin(t, options) {
  const plugin = Object.assign(new EventEmitter(), {
    name: 'gpu.example.com',
    type: 'DRAPlugin',
    supportedVersions: ['v1.DRAPlugin', 'v1beta1.DRAPlugin'],
    draSocket: null, // null: serve DRA on the registration socket
    endpoint: undefined, // reported in GetInfo; default draSocket or ''
    apis: ['v1alpha4', 'v1beta1', 'v1'],
    prepare: defaultPrepare,
    unprepare: defaultUnprepare,
    getInfoFailures: 0, // fail this many GetInfo calls with UNAVAILABLE first
    getInfoCalls: 0,
    notifications: [],
    calls: [],
    servers: [],
  }, options);

  const reg = new grpc.Server();
  reg.addService(proto.serviceDefinition(proto.REGISTRATION_SERVICE), {
    GetInfo: (_call, callback) => {
      plugin.getInfoCalls++;
      if (plugin.getInfoCalls <= plugin.getInfoFailures) {
        callback({ code: grpc.status.UNAVAILABLE, details: 'not yet' });
        return;
      }
      callback(null, {
        type: plugin.type,
        name: plugin.name,
        endpoint: plugin.endpoint ?? (plugin.draSocket || ''),
        supported_versions: plugin.supportedVersions,
      });
    },
    NotifyRegistrationStatus: (call, callback) => {
      plugin.notifications.push(call.request);
      plugin.emit('notify', call.request);
      callback(null, {});
    },
  });
  const dra = plugin.draSocket ? new grpc.Server() : reg;
  for (const api of plugin.apis) {
    const { service, impl } = draService(api, plugin);
    dra.addService(service, impl);
  }
  if (dra !== reg) {
    await bind(dra, plugin.draSocket);
    plugin.servers.push(dra);
  }
  await bind(reg, plugin.regSocket);
  plugin.servers.push(reg);

  plugin.close = () => {
    for (const s of plugin.servers) s.forceShutdown();
    for (const p of [plugin.regSocket, plugin.draSocket]) if (p) fs.rmSync(p, { force: true });
  };
  t.after(() => plugin.close());
  return plugin;
}

// ---- validation table (no sockets) -------------------------------------------

test('supported_versions are judged like each kubelet version', () => {
  const cases = [
    // versions, kubelet version, expected API or error pattern
    [['v1.DRAPlugin', 'v1beta1.DRAPlugin'], '1.34', 'v1'],
    [['v1beta1.DRAPlugin', 'v1.DRAPlugin'], '1.34', 'v1beta1'], // the plugin's order wins
    [['v1.DRAPlugin', 'v1beta1.DRAPlugin'], '1.32', 'v1beta1'],
    [['v1.DRAPlugin', 'v1beta1.DRAPlugin'], '1.31', /None of the versions specified \["v1.DRAPlugin" "v1beta1.DRAPlugin"\] are supported/],
    [['1.0.0', 'v1alpha3.NodeService'], '1.31', 'v1alpha4'],
    [['1.0.0', 'v1alpha3.NodeService'], '1.32', 'v1alpha4'],
    [['1.0.0', 'v1alpha3.NodeService'], '1.34', /none of services supported by the plugin \(\["1.0.0" "v1alpha3.NodeService"\]\) are supported by the kubelet \(\["v1.DRAPlugin" "v1beta1.DRAPlugin"\]\)/],
    [['v1alpha3.NodeService', 'v1beta1.DRAPlugin'], '1.32', 'v1beta1'], // kubelet's order wins
    [['1.0.0'], '1.32', 'v1alpha4'], // fallback
    [['something.Else'], '1.32', 'v1alpha4'], // fallback, too
    [['v1.0'], '1.31', 'v1alpha4'],
    [['2.0.0'], '1.31', /could not find a highest supported version/],
    [['0.9'], '1.31', /highest supported version reported is 0.9, must be v1.x/],
    [['01.0'], '1.31', /illegal zero-prefixed version component/],
    [[], '1.31', /Plugin returned an empty list for supported versions/],
    [[], '1.32', /invalid versions of plugin d: empty list of supported gRPC services \(aka supported versions\)/],
    [[], '1.34', /invalid supported gRPC versions of DRA driver plugin d at endpoint \/e: empty list of supported gRPC services/],
  ];
  for (const [versions, kubelet, expected] of cases) {
    const run = () => validateSupportedVersions(kubelet, { name: 'd', endpoint: '/e', versions });
    const label = `${kubelet} ${JSON.stringify(versions)}`;
    if (typeof expected === 'string') assert.equal(run().api, expected, label);
    else assert.throws(run, expected, label);
  }
});

test('1.31 rejects a second instance unless its version is strictly higher', () => {
  const existingHighest = validateSupportedVersions('1.31', { name: 'd', endpoint: '/a', versions: ['1.0.0'] }).highestVersion;
  assert.throws(
    () => validateSupportedVersions('1.31', { name: 'd', endpoint: '/b', versions: ['1.0'], existingHighest }),
    /Another plugin with the same name is already registered with a higher supported version: "1.0.0"/,
  );
  assert.equal(validateSupportedVersions('1.31', { name: 'd', endpoint: '/b', versions: ['1.1'], existingHighest }).api, 'v1alpha4');
});

// ---- registration end to end --------------------------------------------------

const REGISTRATION_CASES = [
  { kubelet: '1.34', versions: ['v1.DRAPlugin', 'v1beta1.DRAPlugin'], api: 'v1', prefix: '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/' },
  { kubelet: '1.32', versions: ['v1.DRAPlugin', 'v1beta1.DRAPlugin'], api: 'v1beta1', prefix: '/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/' },
  { kubelet: '1.31', versions: ['1.0.0', 'v1alpha3.NodeService'], api: 'v1alpha4', prefix: '/v1alpha3.Node/' },
  { kubelet: '1.32', versions: ['1.0.0'], api: 'v1alpha4', prefix: '/v1alpha3.Node/' },
  { kubelet: '1.34', versions: ['v1beta1.DRAPlugin', 'v1.DRAPlugin'], api: 'v1beta1', prefix: '/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/' },
];

for (const c of REGISTRATION_CASES) {
  test(`kubelet ${c.kubelet} registers ${JSON.stringify(c.versions)} and calls ${c.api}`, async (t) => {
    const dir = tempDir(t);
    const sim = startSim(t, { registryDir: dir, version: c.kubelet });
    const plugin = await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock'), supportedVersions: c.versions });
    const inst = await sim.waitForDriver('gpu.example.com', 5000);
    assert.equal(inst.api, c.api);
    assert.equal(inst.endpoint, plugin.regSocket, 'empty endpoint means the registration socket');
    assert.deepEqual(inst.supportedVersions, c.versions);
    assert.ok(inst.registeredAt instanceof Date);
    assert.deepEqual(plugin.notifications.at(-1), { plugin_registered: true, error: '' });

    const claims = [claim('ns1', 'claim-a', 'uid-a')];
    const res = await sim.nodePrepareResources('gpu.example.com', claims);
    assert.deepEqual(res.claims['uid-a'].devices[0].device_name, 'dev-claim-a');
    await sim.nodeUnprepareResources('gpu.example.com', claims);
    assert.deepEqual(plugin.calls.map((x) => x.path), [`${c.prefix}NodePrepareResources`, `${c.prefix}NodeUnprepareResources`]);
    assert.deepEqual(plugin.calls[0].request.claims, [{ namespace: 'ns1', uid: 'uid-a', name: 'claim-a' }]);
  });
}

const REJECTION_CASES = [
  { kubelet: '1.31', versions: ['v1.DRAPlugin', 'v1beta1.DRAPlugin'], error: /^RegisterPlugin error -- plugin validation failed with err: validation failed for DRA plugin gpu.example.com at endpoint .*None of the versions specified/ },
  { kubelet: '1.34', versions: ['1.0.0', 'v1alpha3.NodeService'], error: /^RegisterPlugin error -- plugin validation failed with err: invalid supported gRPC versions of DRA driver plugin gpu.example.com at endpoint .*: none of services supported by the plugin/ },
  { kubelet: '1.32', versions: [], error: /^RegisterPlugin error -- plugin validation failed with err: invalid versions of plugin gpu.example.com: empty list of supported gRPC services \(aka supported versions\)$/ },
];

for (const c of REJECTION_CASES) {
  test(`kubelet ${c.kubelet} rejects ${JSON.stringify(c.versions)} and retries`, async (t) => {
    const dir = tempDir(t);
    const sim = startSim(t, { registryDir: dir, version: c.kubelet });
    const failed = sim.waitFor('registrationFailed', () => true, 5000);
    const plugin = await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock'), supportedVersions: c.versions });
    const ev = await failed;
    assert.equal(ev.stage, 'validation');
    assert.equal(ev.retry, true);
    assert.match(ev.error, c.error);
    assert.equal(plugin.notifications[0].plugin_registered, false);
    assert.equal(plugin.notifications[0].error, ev.error, 'the plugin is told the same text');
    // Validation failures are retried with backoff: a second attempt comes.
    await sim.waitFor('registrationFailed', () => true, 5000);
    assert.ok(plugin.getInfoCalls >= 2);
    assert.equal(sim.drivers().length, 0);
  });
}

test('a non-DRA plugin type gets kubelet\'s no-handler error', async (t) => {
  const dir = tempDir(t);
  const sim = startSim(t, { registryDir: dir });
  const failed = sim.waitFor('registrationFailed', () => true, 5000);
  const regSocket = path.join(dir, 'csi.sock');
  const plugin = await startFakePlugin(t, { regSocket, type: 'CSIPlugin' });
  const ev = await failed;
  assert.equal(ev.stage, 'type');
  assert.equal(plugin.notifications[0].error,
    `RegisterPlugin error -- no handler registered for plugin type: CSIPlugin at socket ${regSocket}`);
  assert.equal(plugin.notifications[0].plugin_registered, false);
});

test('a failing GetInfo is retried with backoff until it works', async (t) => {
  const dir = tempDir(t);
  const sim = startSim(t, { registryDir: dir });
  const plugin = await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock'), getInfoFailures: 2 });
  const inst = await sim.waitForDriver('gpu.example.com', 5000);
  assert.equal(inst.api, 'v1');
  assert.equal(plugin.getInfoCalls, 3);
  const failures = sim.registrationErrors.filter((e) => e.stage === 'getInfo');
  assert.equal(failures.length, 2);
  assert.match(failures[0].error, /failed to get plugin info using RPC GetInfo at socket .*rpc error: code = Unavailable desc = not yet/);
  assert.ok(failures[1].retryInMs > failures[0].retryInMs, 'backoff doubles');
});

test('rejectWith makes the plugin see plugin_registered=false', async (t) => {
  const dir = tempDir(t);
  const sim = startSim(t, { registryDir: dir, rejectWith: 'simulated rejection' });
  const failed = sim.waitFor('registrationFailed', () => true, 5000);
  const plugin = await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock') });
  const ev = await failed;
  assert.equal(ev.retry, false, 'handler failures are not retried');
  assert.deepEqual(plugin.notifications, [{
    plugin_registered: false,
    error: 'RegisterPlugin error -- plugin registration failed with err: simulated rejection',
  }]);
  assert.equal(sim.getDriver('gpu.example.com'), undefined);
  await assert.rejects(sim.nodePrepareResources('gpu.example.com', [claim('a', 'b', 'c')]),
    /DRA driver gpu.example.com is not registered/);
});

// ---- plugin watcher --------------------------------------------------------------

test('dot-files and non-sockets are ignored, subdirectories are watched', async (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'plain.sock'), 'not a socket');
  const hiddenBefore = await startFakePlugin(t, { regSocket: path.join(dir, '.early.sock'), name: 'early.example.com' });
  const sim = startSim(t, { registryDir: dir });
  const hiddenAfter = await startFakePlugin(t, { regSocket: path.join(dir, '.late.sock'), name: 'late.example.com' });
  fs.mkdirSync(path.join(dir, 'sub'));
  await sleep(150); // let the watcher pick up the new directory first
  await startFakePlugin(t, { regSocket: path.join(dir, 'sub', 'nested.sock'), name: 'nested.example.com' });
  await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock') });
  await sim.waitForDriver('gpu.example.com', 5000);
  await sim.waitForDriver('nested.example.com', 5000);
  await sleep(300); // several reconcile and rescan periods
  assert.deepEqual(sim.drivers().map((d) => d.name).sort(), ['gpu.example.com', 'nested.example.com']);
  assert.equal(hiddenBefore.getInfoCalls, 0);
  assert.equal(hiddenAfter.getInfoCalls, 0);
  assert.equal(sim.registrationErrors.length, 0, 'the regular file is not even dialed');
});

test('a socket existing before start is registered', async (t) => {
  const dir = tempDir(t);
  await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock') });
  const sim = startSim(t, { registryDir: dir });
  assert.equal((await sim.waitForDriver('gpu.example.com', 5000)).api, 'v1');
});

test('a re-created socket is deregistered and registered again', async (t) => {
  const dir = tempDir(t);
  const regSocket = path.join(dir, 'gpu.sock');
  const sim = startSim(t, { registryDir: dir });
  const first = await startFakePlugin(t, { regSocket, supportedVersions: ['v1beta1.DRAPlugin'] });
  assert.equal((await sim.waitForDriver('gpu.example.com', 5000)).api, 'v1beta1');

  const events = [];
  sim.on('deregistered', (e) => events.push(['deregistered', e.name]));
  sim.on('registered', (e) => events.push(['registered', e.api]));
  const again = sim.waitFor('registered', () => true, 5000);
  first.close();
  const second = await startFakePlugin(t, { regSocket, supportedVersions: ['v1.DRAPlugin'] });
  const inst = await again;
  assert.equal(inst.api, 'v1');
  assert.deepEqual(events, [['deregistered', 'gpu.example.com'], ['registered', 'v1']]);
  assert.equal(sim.drivers().length, 1);
  await sim.nodePrepareResources('gpu.example.com', [claim('ns', 'c', 'u1')]);
  assert.equal(second.calls[0].api, 'v1');

  // Removing the socket deregisters the driver.
  const gone = sim.waitFor('deregistered', () => true, 5000);
  second.close();
  await gone;
  await assert.rejects(sim.nodePrepareResources('gpu.example.com', [claim('ns', 'c', 'u1')]),
    /^Error: failed to get gRPC client for driver gpu.example.com: DRA driver gpu.example.com is not registered$/);
});

test('re-creation is noticed without fs events even when the inode is reused', async (t) => {
  const dir = tempDir(t);
  const sock = path.join(dir, 'x.sock');
  const watcher = new RegistryWatcher({ dir }); // not started: no fs.watch, no rescan
  const listen = () => new Promise((resolve) => { const s = net.createServer().listen(sock, () => resolve(s)); });
  const first = await listen();
  watcher.examine(sock, false);
  const gen = watcher.desired.get(sock).generation;
  watcher.examine(sock, false);
  assert.equal(watcher.desired.get(sock).generation, gen, 'same socket, same generation');
  await new Promise((r) => first.close(r)); // unlinks the socket
  const second = await listen();
  t.after(() => second.close());
  watcher.examine(sock, false);
  assert.ok(watcher.desired.get(sock).generation > gen, 'new socket, new generation');
});

// ---- instances of one driver ---------------------------------------------------------

test('1.34 keeps instances per endpoint and calls the newest; 1.32 drops by name', async (t) => {
  for (const kubelet of ['1.34', '1.32']) {
    const dir = tempDir(t);
    const sim = startSim(t, { registryDir: dir, version: kubelet });
    const a = await startFakePlugin(t, { regSocket: path.join(dir, 'a.sock') });
    await sim.waitForDriver('gpu.example.com', 5000);
    const second = sim.waitFor('registered', () => true, 5000);
    const b = await startFakePlugin(t, { regSocket: path.join(dir, 'b.sock') });
    await second;
    await sim.nodePrepareResources('gpu.example.com', [claim('ns', 'c', 'u1')]);
    assert.equal(b.calls.length, 1, `${kubelet}: newest instance gets the call`);
    assert.equal(a.calls.length, 0);

    const gone = sim.waitFor('deregistered', () => true, 5000);
    a.close(); // the OLD instance goes away
    await gone;
    if (kubelet === '1.34') {
      await sim.nodePrepareResources('gpu.example.com', [claim('ns', 'c', 'u1')]);
      assert.equal(b.calls.length, 2, '1.34: the remaining instance still serves');
    } else {
      assert.equal(sim.getDriver('gpu.example.com'), undefined, '1.32: DeRegisterPlugin(name) removed it');
    }
  }
});

// ---- connection behaviour ------------------------------------------------------------

async function countingEndpoint(t, socketPath) {
  const counter = { connections: 0 };
  const server = net.createServer((s) => {
    counter.connections++;
    s.on('error', () => {});
    s.destroy();
  });
  await new Promise((r) => server.listen(socketPath, r));
  t.after(() => server.close());
  return counter;
}

test('1.34 connects at registration, 1.32 only on the first call', async (t) => {
  for (const kubelet of ['1.34', '1.32']) {
    const dir = tempDir(t);
    const draDir = tempDir(t, 'ksim-dra-');
    const draSocket = path.join(draDir, 'dra.sock');
    const counter = await countingEndpoint(t, draSocket);
    const sim = startSim(t, { registryDir: dir, version: kubelet, connectTimeoutMs: 300 });
    // Registration server only; the endpoint is a plain socket that counts.
    await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock'), endpoint: draSocket, apis: [] });
    const inst = await sim.waitForDriver('gpu.example.com', 5000);
    assert.equal(inst.endpoint, draSocket);
    await sleep(400);
    if (kubelet === '1.34') {
      assert.ok(counter.connections >= 1, '1.34 dials right after registration');
    } else {
      assert.equal(counter.connections, 0, '1.32 does not dial before the first call');
      await assert.rejects(sim.nodePrepareResources('gpu.example.com', [claim('ns', 'c', 'u')], { timeoutMs: 500 }),
        /^Error: NodePrepareResources failed: /);
      assert.ok(counter.connections >= 1);
    }
  }
});

// ---- response checks -------------------------------------------------------------------

test('kubelet\'s response checks for Prepare and Unprepare', async (t) => {
  const dir = tempDir(t);
  const sim = startSim(t, { registryDir: dir });
  const plugin = await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock') });
  await sim.waitForDriver('gpu.example.com', 5000);
  const two = [claim('ns1', 'claim-a', 'uid-a'), claim('ns1', 'claim-b', 'uid-b')];
  const prepare = () => sim.nodePrepareResources('gpu.example.com', two);
  const unprepare = () => sim.nodeUnprepareResources('gpu.example.com', two);

  plugin.prepare = () => ({ claims: { 'uid-a': {} } });
  await assert.rejects(prepare(), { message: 'NodePrepareResources left out 1 claims' });

  plugin.prepare = () => ({ claims: { 'uid-a': {}, bogus: {} } });
  await assert.rejects(prepare(), { message: 'NodePrepareResources returned result for unknown claim UID bogus' });

  plugin.prepare = () => ({ claims: { 'uid-a': {}, 'uid-b': { error: 'boom', devices: [{ pool_name: 'p', device_name: 'd' }] } } });
  await assert.rejects(prepare(), { message: 'NodePrepareResources failed for claim ns1/claim-b: boom' });

  plugin.prepare = () => { throw Object.assign(new Error('nope'), { code: grpc.status.FAILED_PRECONDITION, details: 'nope' }); };
  await assert.rejects(prepare(), { message: 'NodePrepareResources failed: rpc error: code = FailedPrecondition desc = nope', code: grpc.status.FAILED_PRECONDITION });

  plugin.prepare = () => Buffer.from([0x0a, 0xff]); // truncated map entry
  await assert.rejects(prepare(), /^Error: NodePrepareResources failed: rpc error: code = Internal desc = grpc: failed to unmarshal/);

  plugin.unprepare = () => ({ claims: { 'uid-b': {} } });
  await assert.rejects(unprepare(), { message: 'NodeUnprepareResources left out 1 claims' });
  plugin.unprepare = () => ({ claims: { 'uid-a': {}, 'uid-x': {} } });
  await assert.rejects(unprepare(), { message: 'NodeUnprepareResources returned result for unknown claim UID uid-x' });
  plugin.unprepare = () => ({ claims: { 'uid-a': { error: 'busy' }, 'uid-b': {} } });
  await assert.rejects(unprepare(), { message: 'NodeUnprepareResources failed for claim ns1/claim-a: busy' });

  // Errors are recorded per driver.
  assert.ok(sim.getDriver('gpu.example.com').errors.some((e) => e.message.includes('left out')));
});

test('successful responses: share_id presence and value-less map entries', async (t) => {
  const dir = tempDir(t);
  const sim = startSim(t, { registryDir: dir });
  const plugin = await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock') });
  await sim.waitForDriver('gpu.example.com', 5000);

  plugin.prepare = () => ({
    claims: {
      'uid-a': {
        devices: [
          { request_names: ['r1'], pool_name: 'p', device_name: 'd0', cdi_device_ids: ['x/y=0'], share_id: '' },
          { pool_name: 'p', device_name: 'd1' },
          { pool_name: 'p', device_name: 'd2', share_id: 'abc' },
        ],
      },
    },
  });
  const res = await sim.nodePrepareResources('gpu.example.com', [claim('ns', 'a', 'uid-a')]);
  const [d0, d1, d2] = res.claims['uid-a'].devices;
  assert.equal(d0.share_id, '', 'present but empty');
  assert.equal(d1.share_id, undefined, 'absent');
  assert.equal(d2.share_id, 'abc');
  assert.deepEqual(d0.request_names, ['r1']);
  assert.deepEqual(d0.cdi_device_ids, ['x/y=0']);

  // Map entry with a key and no value: Go decodes an empty message, which
  // kubelet counts as prepared without devices.
  const key = Buffer.from('uid-a');
  const entry = Buffer.concat([Buffer.from([0x0a, key.length]), key]);
  plugin.prepare = () => Buffer.concat([Buffer.from([0x0a, entry.length]), entry]);
  const bare = await sim.nodePrepareResources('gpu.example.com', [claim('ns', 'a', 'uid-a')]);
  assert.deepEqual(bare.claims['uid-a'], { devices: [], error: '' });
});

test('callRaw reaches arbitrary methods with arbitrary bytes', async (t) => {
  const dir = tempDir(t);
  const plugin = await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock') });
  const unknown = await callRaw(plugin.regSocket, '/no.Such/Method', Buffer.alloc(0), 2000);
  assert.equal(unknown.code, grpc.status.UNIMPLEMENTED);

  const req = proto.encode(proto.typeName('v1', 'NodePrepareResourcesRequest'), { claims: [claim('ns', 'n', 'u')] });
  const ok = await callRaw(plugin.regSocket, `${proto.APIS.v1.prefix}NodePrepareResources`, req, 2000);
  assert.equal(ok.code, grpc.status.OK);
  const decoded = proto.decode(proto.typeName('v1', 'NodePrepareResourcesResponse'), ok.buffer);
  assert.equal(decoded.claims.u.devices[0].device_name, 'dev-n');

  const bad = await callRaw(plugin.regSocket, `${proto.APIS.v1.prefix}NodePrepareResources`, Buffer.from([0xff, 0xff, 0xff]), 2000);
  assert.notEqual(bad.code, grpc.status.OK);
});

test('1.34 with healthStream opens NodeWatchResources after registration', async (t) => {
  const dir = tempDir(t);
  const sim = startSim(t, { registryDir: dir, healthStream: true });
  const plugin = await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock') });
  plugin.servers[0].addService(proto.serviceDefinition(proto.HEALTH_SERVICE), {
    NodeWatchResources: (call) => {
      call.write({ devices: [{ device: { pool_name: 'p', device_name: 'd0' }, health: 'HEALTHY', last_updated_time: '1700000000' }] });
    },
  });
  const health = await sim.waitFor('health', () => true, 5000);
  assert.equal(health.name, 'gpu.example.com');
  assert.deepEqual(health.devices[0].device, { pool_name: 'p', device_name: 'd0' });
  assert.equal(health.devices[0].health, 'HEALTHY');
});

// ---- CLI -----------------------------------------------------------------------------------

const CLI = path.join(__dirname, '..', 'kubelet-sim', 'cli.js');

function runCli(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 10000 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, stdout, stderr });
    });
  });
}

test('cli: prints the registration, runs calls, reports failures by exit code', async (t) => {
  const dir = tempDir(t);
  const plugin = await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock') });

  const ok = await runCli(['--registry', dir, '--version', '1.32', '--prepare', 'ns1/claim-a/uid-a', 'ns1/claim-b/uid-b']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /registered DRA driver "gpu.example.com" \(kubelet 1.32\)/);
  assert.match(ok.stdout, /chosen API: +v1beta1 /);
  assert.match(ok.stdout, /supported versions: +v1.DRAPlugin, v1beta1.DRAPlugin/);
  const json = JSON.parse(ok.stdout.slice(ok.stdout.indexOf('\n{') + 1));
  assert.deepEqual(Object.keys(json.NodePrepareResources.claims).sort(), ['uid-a', 'uid-b']);
  assert.deepEqual(plugin.calls.at(-1).request.claims.map((c) => c.uid), ['uid-a', 'uid-b'], 'one call for all claims');

  plugin.unprepare = () => ({ claims: {} });
  const bad = await runCli(['--registry', dir, '--unprepare', 'ns1/claim-a/uid-a']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /error: NodeUnprepareResources left out 1 claims/);

  const none = await runCli(['--registry', tempDir(t), '--wait-ms', '300']);
  assert.equal(none.code, 3);
  assert.match(none.stderr, /no DRA driver registered/);

  const usage = await runCli(['--registry', dir, '--prepare', 'not-a-claim']);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /expected namespace\/name\/uid/);
});

// ---- per-version behaviour added for the compatibility matrix -------------------------------

test('1.33 picks by the kubelet\'s order like 1.32, keeps instances per endpoint and dials lazily', async (t) => {
  assert.equal(validateSupportedVersions('1.33', { name: 'd', endpoint: '/e', versions: ['v1.DRAPlugin', 'v1beta1.DRAPlugin'] }).api, 'v1beta1');
  assert.equal(validateSupportedVersions('1.33', { name: 'd', endpoint: '/e', versions: ['1.0.0', 'v1alpha3.NodeService'] }).api, 'v1alpha4');
  const dir = tempDir(t);
  const sim = startSim(t, { registryDir: dir, kubeletVersion: '1.33' });
  assert.equal(sim.version, '1.33');
  const a = await startFakePlugin(t, { regSocket: path.join(dir, 'a.sock') });
  await sim.waitForDriver('gpu.example.com', 5000);
  const b = await startFakePlugin(t, { regSocket: path.join(dir, 'b.sock') });
  await until(() => sim.drivers().length === 2);
  assert.equal(sim.getDriver('gpu.example.com').socketPath, path.join(dir, 'b.sock'), 'the newest registered instance');
  assert.equal(sim.getDriver('gpu.example.com').client, null, 'not dialled before the first call');
  await sim.nodePrepareResources('gpu.example.com', [claim('ns', 'c', 'u')]);
  assert.equal(b.calls.length, 1);
  assert.equal(a.calls.length, 0);
  b.close();
  await until(() => sim.drivers().length === 1);
  await sim.nodePrepareResources('gpu.example.com', [claim('ns', 'c', 'u')]);
  assert.equal(a.calls.length, 1, 'removing one endpoint keeps the other instance');
});

test('1.37 and 1.38 refuse an endpoint outside their root directory and a bad driver name; 1.36 does not', async (t) => {
  for (const kubelet of ['1.38', '1.37', '1.36']) {
    const root = tempDir(t);
    const dir = path.join(root, 'plugins_registry');
    fs.mkdirSync(dir);
    const outside = tempDir(t, 'ksim-out-');
    const sim = startSim(t, { registryDir: dir, version: kubelet, healthStream: false });
    const plugin = await startFakePlugin(t, { regSocket: path.join(dir, 'a.sock'), draSocket: path.join(outside, 'dra.sock') });
    if (kubelet !== '1.36') {
      const ev = await sim.waitFor('registrationFailed', () => true, 5000);
      assert.equal(ev.stage, 'validation');
      assert.match(ev.error, /endpoint ".*dra\.sock" is not inside the kubelet root directory/);
      await until(() => plugin.notifications.length > 0);
      assert.equal(plugin.notifications[0].plugin_registered, false);
    } else {
      await sim.waitForDriver('gpu.example.com', 5000);
    }
  }
  assert.throws(() => require('../kubelet-sim/validate').validateEndpoint137('Bad_Name-', '/r/x', '/r'), /invalid DRA driver name/);
  assert.throws(() => require('../kubelet-sim/validate').validateEndpoint137('d', '/r/../x', '/r'), /is not inside/);
  assert.throws(() => require('../kubelet-sim/validate').validateEndpoint137('d', `/r/${'x'.repeat(110)}`, '/r'), /must be less than 108/);
});

test('1.36 retries a registration the handler refused; 1.35 does not until the socket is re-created', async (t) => {
  for (const kubelet of ['1.36', '1.35']) {
    const dir = tempDir(t);
    let refuse = true;
    const sim = startSim(t, { registryDir: dir, version: kubelet, healthStream: false, rejectWith: () => (refuse ? 'not now' : null) });
    await startFakePlugin(t, { regSocket: path.join(dir, 'a.sock') });
    const ev = await sim.waitFor('registrationFailed', () => true, 5000);
    assert.equal(ev.stage, 'register');
    refuse = false;
    if (kubelet === '1.36') {
      assert.equal(ev.retry, true);
      await sim.waitForDriver('gpu.example.com', 5000);
    } else {
      assert.equal(ev.retry, false);
      await sleep(400);
      assert.equal(sim.getDriver('gpu.example.com'), undefined);
    }
  }
});

test('cli: --kubelet-version selects the version', async (t) => {
  const dir = tempDir(t);
  await startFakePlugin(t, { regSocket: path.join(dir, 'gpu.sock') });
  const ok = await runCli(['--registry', dir, '--kubelet-version', '1.33']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /\(kubelet 1.33\)/);
  assert.match(ok.stdout, /chosen API: +v1beta1 /);
  const bad = await runCli(['--registry', dir, '--kubelet-version', '1.30']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--kubelet-version must be one of 1.31, 1.32, 1.33, 1.34, 1.35, 1.36, 1.37, 1.38/);
});
