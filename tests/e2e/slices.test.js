'use strict';
// End-to-end tests of the ResourceSlice controller (publisher/slices*.c,
// convert.c) through build/tests/kp_slicectl, against the kube-apiserver
// emulator (tests/apiserver-emu, an independent peer). Assertions are on
// the emulator's request log and store.
// Run: KP_BUILD=build node --test tests/e2e/slices.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { startEmulator, kubeconfig } = require('../apiserver-emu');

const ROOT = path.resolve(__dirname, '..', '..');
const BUILD = path.resolve(ROOT, process.env.KP_BUILD || 'build');
const BIN = path.join(BUILD, 'tests', 'kp_slicectl');
const DRIVER = 'gpu.example.com';
const NODE = 'node-1';
const SEL = `spec.driver=${DRIVER},spec.nodeName=${NODE}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function dev(name, extra = {}) {
  return {
    name,
    attributes: { model: { string: 'a100' }, index: { int: Number(name.split('-').pop()) || 0 }, healthy: { bool: true }, driverVersion: { version: '1.2.3' } },
    capacity: { memory: '80Gi' },
    ...extra,
  };
}
function devs(prefix, n, from = 0) { return Array.from({ length: n }, (_, i) => dev(`${prefix}-${from + i}`)); }
function pool(name, slices, extra = {}) { return { name, slices: slices.map((d) => ({ devices: d })), ...extra }; }

// One emulator + one kp_slicectl. The controller's sync delay is short so
// that the tests run quickly; everything else is the production code path.
async function setup(t, { versions = ['v1', 'v1beta2', 'v1beta1'], args = [], emuOpts = {} } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-slices-'));
  const emu = await startEmulator({ versions, nodes: [NODE], tokenFile: path.join(dir, 'token'), dir: path.join(dir, 'pki'), ...emuOpts });
  const kc = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url, caFile: emu.caFile, tokenFile: path.join(dir, 'token') }));
  t.after(async () => {
    await emu.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return spawnCtl(t, emu, dir, { args, node: NODE });
}

// spawnCtl runs one kp_slicectl for `node` against the emulator.
async function spawnCtl(t, emu, dir, { args = [], node = NODE } = {}) {
  const kc = path.join(dir, 'kubeconfig');
  const proc = spawn(BIN, ['--kubeconfig', kc, '--driver', DRIVER, '--node', node, '--sync-delay-ms', '200', '-v', '3', ...args],
    { stdio: ['pipe', 'pipe', 'pipe'] });
  const ctl = { emu, dir, proc, lines: [], waiters: [], stderr: '', seq: 0 };
  proc.stderr.on('data', (d) => { ctl.stderr += d; });
  // Lines not yet taken by next(), in order.
  readline.createInterface({ input: proc.stdout }).on('line', (l) => {
    if (!ctl.waiters.some((w, i) => w(l) && ctl.waiters.splice(i, 1))) ctl.lines.push(l);
  });
  ctl.exited = new Promise((r) => proc.on('exit', (code, signal) => r({ code, signal })));
  ctl.next = (prefixes, timeoutMs = 15000) => new Promise((resolve, reject) => {
    const i = ctl.lines.findIndex((l) => prefixes.some((p) => l.startsWith(p)));
    if (i >= 0) { resolve(ctl.lines.splice(i, 1)[0]); return; }
    const timer = setTimeout(() => reject(new Error(`no ${prefixes} line; stderr:\n${ctl.stderr.slice(-4000)}`)), timeoutMs);
    ctl.waiters.push((l) => {
      if (!prefixes.some((p) => l.startsWith(p))) return false;
      clearTimeout(timer);
      resolve(l);
      return true;
    });
  });
  ctl.cmd = async (line, prefixes) => {
    const p = ctl.next(prefixes);
    proc.stdin.write(line + '\n');
    return p;
  };
  ctl.publish = async (pools) => {
    const f = path.join(dir, `publish-${node}-${++ctl.seq}.json`);
    fs.writeFileSync(f, JSON.stringify({ pools }));
    const l = await ctl.cmd(`publish ${f}`, ['published', 'error']);
    assert.equal(l, 'published');
  };
  ctl.stats = async () => {
    const l = await ctl.cmd('stats', ['stats ']);
    const m = /^stats creates=(\d+) updates=(\d+) deletes=(\d+) pending=(\d+) synced=(\d) last_error=(.*)$/.exec(l);
    assert.ok(m, l);
    return { creates: +m[1], updates: +m[2], deletes: +m[3], pending: +m[4], synced: +m[5], lastError: m[6] };
  };
  ctl.slices = (version = 'v1') => emu.getSlices({ fieldSelector: SEL, version });
  // settle: no pending pool and no write for 1 s (5 sync delays). The
  // write count is sampled every 100 ms, so the second of quiet counts
  // from the last write, not from a fixed tick (which made a settle after
  // writes cost two whole seconds).
  ctl.settle = async (timeoutMs = 30000) => {
    const end = Date.now() + timeoutMs;
    let n = emu.writes().length;
    let quiet = Date.now();
    for (;;) {
      await sleep(100);
      if (emu.writes().length !== n) {
        n = emu.writes().length;
        quiet = Date.now();
      } else if (Date.now() - quiet >= 1000) {
        const st = await ctl.stats();
        if (st.pending === 0 && emu.writes().length === n) return st;
      }
      if (Date.now() > end) {
        const st = await ctl.stats();
        throw new Error(`not settled: ${JSON.stringify(st)}; stderr:\n${ctl.stderr.slice(-4000)}`);
      }
    }
  };
  ctl.stop = async () => {
    if (ctl.stopped) return;
    ctl.stopped = true;
    proc.stdin.write('stop\n');
    const r = await ctl.exited;
    assert.deepEqual(r, { code: 0, signal: null }, `kp_slicectl exit; stderr:\n${ctl.stderr.slice(-4000)}`);
    assert.doesNotMatch(ctl.stderr, /Sanitizer|runtime error/);
  };
  t.after(async () => {
    if (!ctl.stopped) { ctl.stopped = true; proc.kill('SIGKILL'); await ctl.exited; }
  });
  const v = await ctl.next(['version', 'load-error']);
  assert.match(v, /^version /, v);
  await ctl.next(['started']);
  return ctl;
}

const SLICES = /^\/apis\/resource\.k8s\.io\/[^/]+\/resourceslices/;
const writes = (emu, method) => emu.writes({ path: SLICES }).filter((e) => !method || e.method === method);
function byPool(slices) {
  const m = {};
  for (const s of slices) (m[s.spec.pool.name] ||= []).push(s);
  return m;
}
function deviceNames(slices) { return slices.flatMap((s) => (s.spec.devices || []).map((d) => d.name)).sort(); }

test('first publish: one create per slice, owner, generation 1, then zero writes', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  await ctl.publish([pool(NODE, [devs('gpu', 2), devs('gpu', 2, 2)])]);
  await ctl.settle();
  const posts = writes(emu, 'POST');
  assert.equal(posts.length, 2, 'one POST per slice');
  assert.equal(writes(emu).length, 2, 'no other writes');
  const uid = emu.getNode(NODE).uid;
  // v0.36 names: the slice's index (5 hex digits), driver, owner.
  assert.deepEqual(posts.map((p) => p.body.metadata.generateName), [`00000-${DRIVER}-${NODE}-`, `00001-${DRIVER}-${NODE}-`]);
  for (const p of posts) {
    assert.equal(p.status, 201);
    assert.equal(p.path, '/apis/resource.k8s.io/v1/resourceslices');
    assert.equal(p.body.metadata.name, undefined);
    assert.deepEqual(p.body.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid, controller: true }]);
    assert.equal(p.body.spec.nodeName, NODE);
    assert.equal('allNodes' in p.body.spec, false);
    assert.deepEqual(p.body.spec.pool, { name: NODE, generation: 1, resourceSliceCount: 2 });
  }
  assert.equal(emu.requests({ method: 'GET', path: `/api/v1/nodes/${NODE}` }).length, 1, 'Node UID looked up once');
  const slices = ctl.slices();
  assert.equal(slices.length, 2);
  assert.deepEqual(deviceNames(slices), ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3']);
  for (const s of slices) {
    assert.match(s.metadata.name, new RegExp(`^0000[01]-${DRIVER.replace(/\./g, '\\.')}-${NODE}-[a-z0-9]{5}$`));
    assert.deepEqual(s.spec.pool, { name: NODE, generation: 1, resourceSliceCount: 2 });
  }
  // The informer: LIST then WATCH with the sorted, escaped field selector.
  const list = emu.requests({ method: 'GET', path: SLICES }).filter((e) => !e.watch);
  assert.ok(list.length >= 1);
  assert.equal(list[0].query.fieldSelector, SEL);
  const watch = emu.requests({ method: 'GET', path: SLICES }).filter((e) => e.watch);
  assert.ok(watch.length >= 1);
  assert.equal(watch[0].query.fieldSelector, SEL);
  assert.equal(watch[0].query.allowWatchBookmarks, 'true');
  assert.equal(watch[0].query.resourceVersion, list[0].status === 200 ? watch[0].query.resourceVersion : '');
  const to = Number(watch[0].query.timeoutSeconds);
  assert.ok(to >= 300 && to < 600, `timeoutSeconds ${to}`);
  // Steady state: nothing more, also after the watch events came in.
  emu.resetLog();
  await sleep(1500);
  assert.equal(writes(emu).length, 0, 'steady state makes no writes');
  const st = await ctl.stats();
  assert.equal(st.creates, 2);
  assert.equal(st.synced, 1);
  await ctl.stop();
  assert.equal(ctl.slices().length, 2, 'stop never deletes slices');
});

test('unchanged republish: zero writes, also with equal quantities spelled differently', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  const p = [pool(NODE, [devs('gpu', 3)])];
  await ctl.publish(p);
  await ctl.settle();
  emu.resetLog();
  await ctl.publish(p);
  await ctl.settle();
  assert.deepEqual(writes(emu), []);
  // 80Gi == 81920Mi; attribute order is irrelevant.
  const q = JSON.parse(JSON.stringify(p));
  for (const d of q[0].slices[0].devices) {
    d.capacity.memory = '81920Mi';
    d.attributes = Object.fromEntries(Object.entries(d.attributes).reverse());
  }
  await ctl.publish(q);
  await ctl.settle();
  assert.deepEqual(writes(emu), []);
  await ctl.stop();
});

test('one device changed: exactly one update, generation kept', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  const p = [pool(NODE, [devs('gpu', 4)])];
  await ctl.publish(p);
  await ctl.settle();
  const before = ctl.slices()[0];
  emu.resetLog();
  p[0].slices[0].devices[2].capacity.memory = '40Gi';
  await ctl.publish(p);
  await ctl.settle();
  const w = writes(emu);
  assert.equal(w.length, 1, JSON.stringify(w.map((e) => `${e.method} ${e.path} ${e.status}`)));
  assert.equal(w[0].method, 'PUT');
  assert.equal(w[0].status, 200);
  assert.equal(w[0].path, `/apis/resource.k8s.io/v1/resourceslices/${before.metadata.name}`);
  assert.equal(w[0].body.metadata.resourceVersion, before.metadata.resourceVersion, 'PUT carries the cached RV');
  const after = ctl.slices()[0];
  assert.equal(after.metadata.name, before.metadata.name);
  assert.deepEqual(after.spec.pool, { name: NODE, generation: 1, resourceSliceCount: 1 });
  assert.equal(after.spec.devices[2].capacity.memory.value, '40Gi');
  // A device added to the single slice: still one in-place update (1.34+).
  emu.resetLog();
  p[0].slices[0].devices.push(dev('gpu-9'));
  await ctl.publish(p);
  await ctl.settle();
  assert.deepEqual(writes(emu).map((e) => e.method), ['PUT']);
  assert.equal(ctl.slices()[0].spec.devices.length, 5);
  await ctl.stop();
});

test('a removed pool is deleted with preconditions; other pools untouched', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  await ctl.publish([pool('pool-a', [devs('a', 2)]), pool('pool-b', [devs('b', 2), devs('b', 2, 2)])]);
  await ctl.settle();
  const b = byPool(ctl.slices())['pool-b'];
  assert.equal(b.length, 2);
  emu.resetLog();
  await ctl.publish([pool('pool-a', [devs('a', 2)])]);
  await ctl.settle();
  const w = writes(emu);
  assert.deepEqual(w.map((e) => e.method), ['DELETE', 'DELETE']);
  for (const e of w) {
    const s = b.find((x) => e.path.endsWith(`/${x.metadata.name}`));
    assert.ok(s, e.path);
    assert.deepEqual(e.body, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: s.metadata.uid, resourceVersion: s.metadata.resourceVersion } });
    assert.equal(e.status, 200);
  }
  assert.deepEqual(Object.keys(byPool(ctl.slices())), ['pool-a']);
  assert.equal((await ctl.stats()).deletes, 2);
  await ctl.stop();
});

test('300 devices in 3 slices become 3 slices; resizing bumps generation', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  await ctl.publish([pool(NODE, [devs('d', 100), devs('d', 100, 100), devs('d', 100, 200)])]);
  await ctl.settle();
  let slices = ctl.slices();
  assert.equal(slices.length, 3);
  assert.equal(writes(emu, 'POST').length, 3);
  assert.deepEqual(slices.map((s) => s.spec.devices.length), [100, 100, 100]);
  assert.equal(deviceNames(slices).length, 300);
  for (const s of slices) assert.deepEqual(s.spec.pool, { name: NODE, generation: 1, resourceSliceCount: 3 });
  // A fourth slice: new slice -> generation 2 everywhere, count 4.
  emu.resetLog();
  await ctl.publish([pool(NODE, [devs('d', 100), devs('d', 100, 100), devs('d', 100, 200), devs('d', 10, 300)])]);
  await ctl.settle();
  slices = ctl.slices();
  assert.equal(slices.length, 4);
  for (const s of slices) assert.deepEqual(s.spec.pool, { name: NODE, generation: 2, resourceSliceCount: 4 });
  assert.deepEqual(writes(emu).map((e) => e.method).sort(), ['POST', 'PUT', 'PUT', 'PUT']);
  // Back to one slice: obsolete slices deleted first, then one update.
  emu.resetLog();
  await ctl.publish([pool(NODE, [devs('d', 100)])]);
  await ctl.settle();
  slices = ctl.slices();
  assert.equal(slices.length, 1);
  assert.deepEqual(slices[0].spec.pool, { name: NODE, generation: 2, resourceSliceCount: 1 });
  const m = writes(emu).map((e) => e.method);
  assert.deepEqual(m, ['DELETE', 'DELETE', 'DELETE', 'PUT']);
  // The driver's own higher generation wins.
  emu.resetLog();
  await ctl.publish([pool(NODE, [devs('d', 100)], { generation: 7 })]);
  await ctl.settle();
  assert.equal(ctl.slices()[0].spec.pool.generation, 7);
  await ctl.stop();
});

test('an empty pool is one empty slice; steady afterwards', async (t) => {
  const ctl = await setup(t, { versions: ['v1beta1'] });
  const { emu } = ctl;
  await ctl.publish([pool('empty', []), pool('one-empty', [[]])]);
  await ctl.settle();
  const p = byPool(ctl.slices('v1beta1'));
  assert.equal(p.empty.length, 1);
  assert.equal(p['one-empty'].length, 1);
  assert.equal(p.empty[0].spec.devices, null, '1.32 serves devices: null');
  assert.deepEqual(p.empty[0].spec.pool, { name: 'empty', generation: 1, resourceSliceCount: 1 });
  emu.resetLog();
  await sleep(1200);
  await ctl.publish([pool('empty', []), pool('one-empty', [[]])]);
  await ctl.settle();
  assert.deepEqual(writes(emu), []);
  await ctl.stop();
});

test('409 on update converges, also after a foreign write', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  const p = [pool(NODE, [devs('gpu', 2)])];
  await ctl.publish(p);
  await ctl.settle();
  emu.resetLog();
  emu.inject({ method: 'PUT', path: '/apis/resource.k8s.io/v1/resourceslices/*', status: 409, times: 1 });
  p[0].slices[0].devices[0].attributes.model = { string: 'h100' };
  await ctl.publish(p);
  await ctl.settle();
  let puts = writes(emu, 'PUT');
  assert.deepEqual(puts.map((e) => e.status), [409, 200]);
  assert.equal(writes(emu, 'POST').length, 0, 'no duplicate slice');
  assert.equal(ctl.slices().length, 1);
  assert.equal(ctl.slices()[0].spec.devices[0].attributes.model.string, 'h100');
  // A foreign write makes the cached RV stale: a real 409, then the watch
  // brings the new RV and the retry succeeds.
  const name = ctl.slices()[0].metadata.name;
  emu.resetLog();
  emu.touchSlice(name);
  p[0].slices[0].devices[1].attributes.model = { string: 'h200' };
  await ctl.publish(p);
  await ctl.settle();
  puts = writes(emu, 'PUT');
  assert.ok(puts.length >= 1 && puts[puts.length - 1].status === 200, JSON.stringify(puts.map((e) => e.status)));
  assert.equal(ctl.slices().length, 1);
  assert.equal(ctl.slices()[0].spec.devices[1].attributes.model.string, 'h200');
  await ctl.stop();
});

test('bursts of 500 and 429 with Retry-After converge without duplicates', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  emu.inject({ method: 'POST', path: '/apis/resource.k8s.io/v1/resourceslices', status: 500, times: 3 });
  emu.inject({ method: 'POST', path: '/apis/resource.k8s.io/v1/resourceslices', status: 429, retryAfter: 1, times: 2 });
  await ctl.publish([pool(NODE, [devs('a', 2), devs('b', 2)])]);
  await ctl.settle(60000);
  const posts = writes(emu, 'POST');
  assert.equal(posts.filter((e) => e.status === 201).length, 2);
  assert.equal(posts.filter((e) => e.status === 500).length, 3);
  assert.equal(posts.filter((e) => e.status === 429).length, 2);
  assert.equal(ctl.slices().length, 2);
  // 429s carried Retry-After: 1 -> the next try came at least ~1 s later.
  const i429 = posts.findIndex((e) => e.status === 429);
  assert.ok(posts[i429 + 1].time - posts[i429].time >= 900, 'Retry-After honoured');
  const st = await ctl.stats();
  assert.equal(st.creates, 2);
  assert.equal(st.lastError, '', 'the error is cleared once every pool is in sync');
  const rate = emu.checkRate({ qps: 5, burst: 10 });
  assert.ok(rate.ok, `client-side rate limit kept: ${JSON.stringify(rate.violations)}`);
  await ctl.stop();
});

test('watch 410: relist, then keep serving', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  await ctl.publish([pool(NODE, [devs('gpu', 2)])]);
  await ctl.settle();
  const lists = () => emu.requests({ method: 'GET', path: SLICES }).filter((e) => !e.watch).length;
  const n = lists();
  // The client's RV falls out of the window: its re-watch gets 410.
  emu.bumpResourceVersion(5);
  emu.compactHistory();
  emu.dropWatches({ mode: 'end' });
  await emu.waitFor(() => lists() > n, { timeoutMs: 10000 });
  const expired = emu.requests({ method: 'GET', path: SLICES }).filter((e) => e.watch);
  assert.ok(expired.length >= 2);
  // The re-watch after the relist starts from the new list RV.
  await emu.waitFor(() => emu.activeWatches() === 1, { timeoutMs: 10000 });
  emu.resetLog();
  emu.deleteSlices({ fieldSelector: SEL });
  await emu.waitFor(() => ctl.slices().length === 1, { timeoutMs: 10000 });
  await ctl.settle();
  assert.equal(ctl.slices().length, 1);
  assert.deepEqual(writes(emu).map((e) => e.method), ['POST']);
  await ctl.stop();
});

test('an HTTP 410 on the watch and a LIST error back off and recover', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  await ctl.publish([pool(NODE, [devs('gpu', 1)])]);
  await ctl.settle();
  emu.inject({ method: 'GET', path: '/apis/resource.k8s.io/v1/resourceslices', query: { watch: 'true' }, status: 410, times: 1 });
  emu.inject({ method: 'GET', path: '/apis/resource.k8s.io/v1/resourceslices', query: { limit: '500' }, status: 503, times: 1 });
  emu.dropWatches({ mode: 'reset' });
  await emu.waitFor(() => emu.faults().length === 0, { timeoutMs: 15000 });
  await emu.waitFor(() => emu.activeWatches() === 1, { timeoutMs: 15000 });
  emu.resetLog();
  emu.deleteSlices({ fieldSelector: SEL });
  await emu.waitFor(() => ctl.slices().length === 1, { timeoutMs: 10000 });
  await ctl.stop();
});

test('slices deleted by someone else (kubelet wipe) are recreated', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  await ctl.publish([pool(NODE, [devs('gpu', 2)]), pool('other', [devs('o', 1)])]);
  await ctl.settle();
  emu.resetLog();
  const gone = emu.deleteSlices({ fieldSelector: `spec.nodeName=${NODE}` });
  assert.equal(gone.length, 2);
  await ctl.settle();
  const slices = ctl.slices();
  assert.equal(slices.length, 2);
  assert.deepEqual(writes(emu).map((e) => e.method), ['POST', 'POST']);
  // No slice was left: the pool starts over at generation 1, as upstream.
  for (const s of slices) assert.equal(s.spec.pool.generation, 1);
  // A wipe while the controller is busy converging: still one slice per pool.
  emu.resetLog();
  emu.deleteSlices({ fieldSelector: `spec.nodeName=${NODE}` });
  await sleep(100);
  emu.deleteSlices({ fieldSelector: `spec.nodeName=${NODE}` });
  await ctl.settle();
  assert.equal(ctl.slices().length, 2);
  await ctl.stop();
});

test('emulator restart: the controller reconnects and keeps syncing', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  const p = [pool(NODE, [devs('gpu', 2)])];
  await ctl.publish(p);
  await ctl.settle();
  await emu.restart({ downMs: 1500 });
  p[0].slices[0].devices[0].capacity.memory = '1Gi';
  await ctl.publish(p);
  await ctl.settle(60000);
  assert.equal(ctl.slices().length, 1);
  assert.equal(ctl.slices()[0].spec.devices[0].capacity.memory.value, '1Gi');
  // A wiped store (RVs start over): everything is recreated.
  await emu.restart({ freshStore: true, downMs: 500 });
  await emu.waitFor(() => ctl.slices().length === 1, { timeoutMs: 30000 });
  await ctl.settle(60000);
  assert.equal(ctl.slices().length, 1);
  await ctl.stop();
});

for (const version of ['v1beta1', 'v1']) {
  test(`${version}-only server gets ${version} JSON`, async (t) => {
    const ctl = await setup(t, { versions: [version] });
    const { emu } = ctl;
    await ctl.publish([pool(NODE, [devs('gpu', 2)])]);
    await ctl.settle();
    const posts = writes(emu, 'POST');
    assert.equal(posts.length, 1);
    assert.equal(posts[0].path, `/apis/resource.k8s.io/${version}/resourceslices`);
    const body = posts[0].body;
    assert.equal(body.apiVersion, `resource.k8s.io/${version}`);
    assert.equal(body.spec.nodeName, NODE);
    assert.equal('allNodes' in body.spec, false);
    const d0 = body.spec.devices[0];
    if (version === 'v1beta1') {
      assert.deepEqual(Object.keys(d0), ['name', 'basic']);
      assert.deepEqual(d0.basic.capacity, { memory: { value: '80Gi' } });
      assert.deepEqual(d0.basic.attributes.model, { string: 'a100' });
    } else {
      assert.deepEqual(Object.keys(d0).sort(), ['attributes', 'capacity', 'name']);
      assert.deepEqual(d0.capacity, { memory: { value: '80Gi' } });
    }
    assert.equal(emu.emu.log.filter((e) => e.status === 400 || e.status === 422).length, 0);
    // What the emulator stored, read back in the same version.
    const s = ctl.slices(version)[0];
    const sd = version === 'v1beta1' ? s.spec.devices[0].basic : s.spec.devices[0];
    assert.deepEqual(sd.attributes, { driverVersion: { version: '1.2.3' }, healthy: { bool: true }, index: { int: 0 }, model: { string: 'a100' } });
    emu.resetLog();
    await sleep(1200);
    assert.deepEqual(writes(emu), []);
    await ctl.stop();
  });
}

test('node UID given: no Node lookup', async (t) => {
  const ctl = await setup(t, { args: ['--node-uid', 'given-uid'] });
  const { emu } = ctl;
  await ctl.publish([pool(NODE, [devs('gpu', 1)])]);
  await ctl.settle();
  assert.equal(emu.requests({ path: '/api/v1/nodes' }).length, 0);
  assert.equal(ctl.slices()[0].metadata.ownerReferences[0].uid, 'given-uid');
  await ctl.stop();
});

test('nothing is deleted before the first publish', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  await ctl.publish([pool(NODE, [devs('gpu', 1)])]);
  await ctl.settle();
  await ctl.stop();
  // A second controller run with no desired state yet leaves the slice.
  const dir = ctl.dir;
  const kc = path.join(dir, 'kubeconfig');
  const proc = spawn(BIN, ['--kubeconfig', kc, '--driver', DRIVER, '--node', NODE, '--sync-delay-ms', '200'], { stdio: ['pipe', 'pipe', 'pipe'] });
  emu.resetLog();
  await sleep(1500);
  proc.stdin.end('stop\n');
  const code = await new Promise((r) => proc.on('exit', r));
  assert.equal(code, 0);
  assert.equal(writes(emu).length, 0);
  assert.equal(ctl.slices().length, 1);
});

test('a pool with a node selector: no nodeName, its own watch, other nodes left alone', async (t) => {
  const ctl = await setup(t, { emuOpts: { nodes: [NODE, 'node-2'] } });
  const { emu } = ctl;
  const sel = { matchExpressions: [{ key: 'topology.example.com/rack', operator: 'In', values: ['r1'] }] };
  const noNode = `spec.driver=${DRIVER},spec.nodeName=`;
  const other = await spawnCtl(t, emu, ctl.dir, { node: 'node-2' });
  await other.publish([pool('rack-r2', [devs('n', 1)], { nodeSelector: sel })]);
  await ctl.publish([pool(NODE, [devs('gpu', 1)]), pool('rack-r1', [devs('s', 2)], { nodeSelector: sel })]);
  await Promise.all([ctl.settle(), other.settle()]);
  const shared = emu.getSlices({ fieldSelector: noNode });
  assert.deepEqual(shared.map((s) => s.spec.pool.name).sort(), ['rack-r1', 'rack-r2']);
  const mine = shared.find((s) => s.spec.pool.name === 'rack-r1');
  assert.equal('nodeName' in mine.spec, false);
  assert.equal('allNodes' in mine.spec, false);
  assert.deepEqual(mine.spec.nodeSelector, { nodeSelectorTerms: [sel] });
  assert.equal(mine.metadata.ownerReferences[0].name, NODE);
  assert.equal(ctl.slices().length, 1, 'the node-local pool');
  const lists = emu.requests({ method: 'GET', path: SLICES }).filter((e) => !e.watch).map((e) => e.query.fieldSelector);
  assert.ok(lists.includes(noNode), JSON.stringify(lists));
  // Steady: nobody deletes or rewrites the other node's pool.
  emu.resetLog();
  await ctl.publish([pool(NODE, [devs('gpu', 1)]), pool('rack-r1', [devs('s', 2)], { nodeSelector: sel })]);
  await sleep(1500);
  assert.deepEqual(writes(emu), []);
  // Wiped: recreated once.
  emu.deleteSlices({ fieldSelector: noNode });
  await Promise.all([ctl.settle(), other.settle()]);
  assert.equal(emu.getSlices({ fieldSelector: noNode }).length, 2);
  assert.equal(writes(emu, 'POST').length, 2);
  // Dropped from the desired state: deleted.
  emu.resetLog();
  await ctl.publish([pool(NODE, [devs('gpu', 1)])]);
  await ctl.settle();
  assert.deepEqual(emu.getSlices({ fieldSelector: noNode }).map((s) => s.spec.pool.name), ['rack-r2']);
  assert.deepEqual(writes(emu).map((e) => e.method), ['DELETE']);
  await other.stop();
  await ctl.stop();
});

// A GPU-like pool (1.37): a counter set of memory counters in a slice of
// its own, partitions consuming them, a tainted device, a device with
// binding conditions, a list attribute, consumable capacity.
function gpuPool({ lists = true } = {}) {
  const part = (name, mem, sm) => ({
    name,
    attributes: { model: { string: 'a100' } },
    consumesCounters: [{ counterSet: 'gpu-0-counters', counters: { memory: mem, sm } }],
  });
  const whole = {
    ...part('gpu-0', '80Gi', '108'),
    taints: [{ key: 'example.com/ecc', value: 'degraded', effect: 'NoSchedule', timeAdded: 1767225600 }],
  };
  const fabric = {
    name: 'fabric-0',
    bindsToNode: true,
    bindingConditions: ['example.com/attached'],
    bindingFailureConditions: ['example.com/failed'],
    allowMultipleAllocations: true,
    capacity: { bandwidth: { value: '100G', requestPolicy: { default: '10G', validRange: { min: '10G', max: '100G', step: '10G' } } } },
  };
  if (lists) fabric.attributes = { ports: { ints: [1, 2, 3] } };
  return {
    name: NODE,
    slices: [
      { sharedCounters: [{ name: 'gpu-0-counters', counters: { memory: '80Gi', sm: '108' } }] },
      { devices: [whole, part('gpu-0-half-0', '40Gi', '54'), part('gpu-0-half-1', '40960Mi', '54'), fabric] },
    ],
  };
}

const strip = (d) => JSON.parse(JSON.stringify(d));

// What v1 stores for gpuPool()'s slice i: the input in v1 JSON, with
// quantities in the server's canonical form.
function gpuExpected(i, { lists = true } = {}) {
  const canon = (q) => (q === '40960Mi' ? '40Gi' : q);
  const qmap = (m) => Object.fromEntries(Object.entries(m).map(([k, q]) => [k, { value: canon(q) }]));
  const rfc = (t) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');
  const spec = { driver: DRIVER, nodeName: NODE, pool: { name: NODE, generation: 1, resourceSliceCount: 2 } };
  const src = gpuPool({ lists }).slices[i];
  if (src.sharedCounters) spec.sharedCounters = src.sharedCounters.map((c) => ({ name: c.name, counters: qmap(c.counters) }));
  if (src.devices) {
    spec.devices = src.devices.map((d) => {
      const o = { ...d };
      if (d.capacity) o.capacity = Object.fromEntries(Object.entries(d.capacity).map(([k, c]) => [k, typeof c === 'string' ? { value: c } : c]));
      if (d.consumesCounters) o.consumesCounters = d.consumesCounters.map((c) => ({ counterSet: c.counterSet, counters: qmap(c.counters) }));
      if (d.taints) o.taints = d.taints.map((t) => ({ ...t, timeAdded: rfc(t.timeAdded) }));
      return o;
    });
  }
  return spec;
}

for (const version of ['v1', 'v1beta2', 'v1beta1']) {
  test(`a GPU-like pool round-trips field for field through ${version}`, async (t) => {
    const ctl = await setup(t, { versions: [version], args: ['--version', version], emuOpts: { kubeVersion: '1.37.0' } });
    const { emu } = ctl;
    await ctl.publish([gpuPool({ lists: version === 'v1' })]);
    await ctl.settle();
    assert.equal(writes(emu).length, 2, 'one create per slice, then steady');
    const st = await ctl.stats();
    assert.equal(st.lastError, '');
    const slices = ctl.slices('v1').sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    assert.deepEqual(slices.map((x) => x.metadata.name.slice(0, 6)), ['00000-', '00001-'], 'index names, in the order given');
    // Field for field: every field the driver set, nothing else.
    for (let i = 0; i < 2; i++) assert.deepEqual(strip(slices[i].spec), gpuExpected(i, { lists: version === 'v1' }), `slice ${i}`);
    assert.deepEqual(slices[0].spec.sharedCounters, [{ name: 'gpu-0-counters', counters: { memory: { value: '80Gi' }, sm: { value: '108' } } }]);
    assert.equal(slices[0].spec.devices, undefined, 'counter sets in their own slice');
    const d = Object.fromEntries(slices[1].spec.devices.map((x) => [x.name, strip(x)]));
    assert.deepEqual(d['gpu-0'].taints, [{ key: 'example.com/ecc', value: 'degraded', effect: 'NoSchedule', timeAdded: '2026-01-01T00:00:00Z' }]);
    assert.deepEqual(d['gpu-0'].consumesCounters, [{ counterSet: 'gpu-0-counters', counters: { memory: { value: '80Gi' }, sm: { value: '108' } } }]);
    assert.deepEqual(d['gpu-0-half-1'].consumesCounters[0].counters.memory, { value: '40Gi' }, 'canonical on the server');
    assert.equal(d['fabric-0'].bindsToNode, true);
    assert.deepEqual(d['fabric-0'].bindingConditions, ['example.com/attached']);
    assert.deepEqual(d['fabric-0'].bindingFailureConditions, ['example.com/failed']);
    assert.equal(d['fabric-0'].allowMultipleAllocations, true);
    assert.deepEqual(d['fabric-0'].capacity.bandwidth.requestPolicy, { default: '10G', validRange: { min: '10G', max: '100G', step: '10G' } });
    if (version === 'v1') assert.deepEqual(d['fabric-0'].attributes, { ports: { ints: [1, 2, 3] } });
    // Republishing the same resources writes nothing (taint time kept,
    // "40960Mi" == "40Gi").
    await ctl.publish([gpuPool({ lists: version === 'v1' })]);
    await ctl.settle();
    assert.equal(writes(emu).length, 2);
    await ctl.stop();
  });
}

test('a field the served version lacks is an error naming field and version, nothing is written', async (t) => {
  const ctl = await setup(t, { versions: ['v1beta2'], args: ['--version', 'v1beta2'], emuOpts: { kubeVersion: '1.37.0' } });
  const { emu } = ctl;
  await ctl.publish([gpuPool({ lists: true })]);
  await ctl.settle();
  assert.equal(writes(emu).length, 0);
  const st = await ctl.stats();
  assert.match(st.lastError, /slices\[1\]\.devices\[3\]\.attributes \(list types\): not in resource\.k8s\.io\/v1beta2/);
  await ctl.stop();
});

test('fields dropped by a disabled feature gate: one report, the stored slice adopted, bounded writes', async (t) => {
  const ctl = await setup(t, { versions: ['v1'], emuOpts: { kubeVersion: '1.37.0', featureGates: { DRADeviceTaints: false, DRADeviceBindingConditions: false } } });
  const { emu } = ctl;
  await ctl.publish([gpuPool()]);
  await ctl.settle();
  const n = writes(emu).length;
  assert.ok(n <= 3, `at most one create per slice and one retry, got ${n}`);
  const stored = ctl.slices('v1').flatMap((s) => s.spec.devices || []);
  assert.equal(stored.find((x) => x.name === 'gpu-0').taints, undefined, 'the server dropped the taints');
  const st = await ctl.stats();
  assert.match(st.lastError, /some fields were dropped by the apiserver, probably because these features are disabled: .*DRADeviceTaints/);
  assert.match(st.lastError, /DRADeviceBindingConditions/);
  // Several sync delays later: still no write (upstream's loop wrote once a second).
  await sleep(2500);
  assert.equal(writes(emu).length, n, 'no update loop');
  // Republishing the same resources (a rescan) writes and reports nothing.
  await ctl.publish([gpuPool()]);
  await ctl.settle();
  assert.equal(writes(emu).length, n, 'no write after a republish');
  assert.match((await ctl.stats()).lastError, /DRADeviceTaints/, 'still shown');
  assert.equal(ctl.stderr.match(/some fields were dropped/g).length, 1, 'reported once');
  // A real change is still published.
  const p = gpuPool();
  p.slices[1].devices[1].attributes.model = { string: 'h100' };
  await ctl.publish([p]);
  await ctl.settle();
  assert.ok(writes(emu).length > n);
  assert.ok(ctl.slices('v1').flatMap((s) => s.spec.devices || []).some((x) => x.attributes && x.attributes.model && x.attributes.model.string === 'h100'));
  await ctl.stop();
});

// A device of kp_slicectl's JSON as v1 has it (capacity {value}).
const v1dev = (d) => ({ ...d, capacity: Object.fromEntries(Object.entries(d.capacity || {}).map(([k, q]) => [k, { value: q }])) });
// Slices written by a plugin before v0.36: random names "<node>-<driver>-xxxxx".
function oldSlice(emu, poolName, devices, { generation = 1, count = 1, node = NODE } = {}) {
  return emu.createSlice({
    metadata: { generateName: `${node}-${DRIVER}-`, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node, uid: emu.getNode(node).uid, controller: true }] },
    spec: { driver: DRIVER, nodeName: node, pool: { name: poolName, generation, resourceSliceCount: count }, devices: devices.map(v1dev) },
  });
}
const reqLine = (e) => `${e.method} ${e.path.replace(/^\/apis\/resource\.k8s\.io\/v1\/resourceslices/, '')}`;

test('randomly named slices of an older version are replaced once, deletes first', async (t) => {
  const first = await setup(t);
  const { emu } = first;
  await first.stop();
  const a = oldSlice(emu, NODE, devs('gpu', 2), { count: 2 });
  const b = oldSlice(emu, NODE, devs('gpu', 2, 2), { count: 2 });
  assert.match(a.metadata.name, new RegExp(`^${NODE}-`));
  // Started after they exist: its first LIST has them.
  const ctl = await spawnCtl(t, emu, first.dir);
  emu.resetLog();
  await ctl.publish([pool(NODE, [devs('gpu', 2), devs('gpu', 2, 2)])]);
  await ctl.settle();
  // The same devices, but no index in the old names: both obsolete. The
  // emulator saw the two deletes before anything was created.
  assert.deepEqual(writes(emu).map(reqLine), [
    ...[a, b].map((s) => `DELETE /${s.metadata.name}`).sort(), 'POST ', 'POST ']);
  const slices = ctl.slices().sort((x, y) => x.metadata.name.localeCompare(y.metadata.name));
  assert.deepEqual(slices.map((s) => s.metadata.name.slice(0, 6 + DRIVER.length + NODE.length + 2)),
    [`00000-${DRIVER}-${NODE}-`, `00001-${DRIVER}-${NODE}-`]);
  assert.deepEqual(slices.map((s) => s.spec.devices.map((d) => d.name)), [['gpu-0', 'gpu-1'], ['gpu-2', 'gpu-3']], 'slice order = name order');
  for (const s of slices) assert.deepEqual(s.spec.pool, { name: NODE, generation: 2, resourceSliceCount: 2 }, 'new slices: generation bumped');
  // Once: a republish and a restarted controller write nothing.
  emu.resetLog();
  await ctl.publish([pool(NODE, [devs('gpu', 2), devs('gpu', 2, 2)])]);
  await ctl.settle();
  await ctl.stop();
  const again = await spawnCtl(t, emu, ctl.dir);
  await again.publish([pool(NODE, [devs('gpu', 2), devs('gpu', 2, 2)])]);
  await again.settle();
  assert.deepEqual(writes(emu), []);
  await again.stop();
});

test('generation: kept for one changed slice, bumped (all slices rewritten) for two', async (t) => {
  const ctl = await setup(t);
  const { emu } = ctl;
  const p = [pool(NODE, [devs('d', 3), devs('d', 3, 3), devs('d', 3, 6)])];
  await ctl.publish(p);
  await ctl.settle();
  const names = ctl.slices().map((s) => s.metadata.name).sort();
  assert.deepEqual(names.map((n) => n.slice(0, 5)), ['00000', '00001', '00002']);
  // One slice changes: one PUT of that slice, generation 1 kept.
  emu.resetLog();
  p[0].slices[1].devices[0].capacity.memory = '40Gi';
  await ctl.publish(p);
  await ctl.settle();
  assert.deepEqual(writes(emu).map(reqLine), [`PUT /${names[1]}`]);
  assert.equal(writes(emu)[0].body.spec.pool.generation, 1);
  // Two slices change: generation 2, and every slice of the pool is
  // rewritten with it, in index order.
  emu.resetLog();
  p[0].slices[0].devices[0].capacity.memory = '40Gi';
  p[0].slices[2].devices[0].capacity.memory = '40Gi';
  await ctl.publish(p);
  await ctl.settle();
  assert.deepEqual(writes(emu).map(reqLine), names.map((n) => `PUT /${n}`));
  for (const w of writes(emu)) assert.deepEqual(w.body.spec.pool, { name: NODE, generation: 2, resourceSliceCount: 3 });
  // A slice removed from the middle: its index goes to the next slice's
  // devices; the last name is obsolete and deleted before the updates.
  emu.resetLog();
  p[0].slices.splice(1, 1);
  await ctl.publish(p);
  await ctl.settle();
  assert.deepEqual(writes(emu).map(reqLine), [`DELETE /${names[2]}`, `PUT /${names[0]}`, `PUT /${names[1]}`]);
  const after = ctl.slices().sort((x, y) => x.metadata.name.localeCompare(y.metadata.name));
  assert.deepEqual(after.map((s) => s.spec.devices[0].name), ['d-0', 'd-6']);
  for (const s of after) assert.deepEqual(s.spec.pool, { name: NODE, generation: 3, resourceSliceCount: 2 });
  await ctl.stop();
});

test('ReconcilePoolWithName: node-less informer filtered by pool, no nodeName, other nodes\' slices untouched', async (t) => {
  const ctl = await setup(t, { emuOpts: { nodes: [NODE, 'node-2'] }, args: ['--reconcile-pool', 'pool-n1'] });
  const { emu } = ctl;
  const noNode = `spec.driver=${DRIVER},spec.nodeName=`;
  // Its informer: LIST and WATCH of the node-less slices only, never
  // nodeName=node-1 (before node-2's controller starts its own).
  await emu.waitFor(() => emu.requests({ method: 'GET', path: SLICES }).some((e) => e.watch));
  const gets = emu.requests({ method: 'GET', path: SLICES });
  assert.ok(gets.some((e) => !e.watch));
  assert.deepEqual([...new Set(gets.map((e) => e.query.fieldSelector))], [noNode]);
  const sel = { matchFields: [{ key: 'metadata.name', operator: 'In', values: [NODE] }] };
  // node-2: a node-local pool, a node-less pool of its own, and a
  // node-less slice of another reconciled pool.
  const other = await spawnCtl(t, emu, ctl.dir, { node: 'node-2' });
  await other.publish([pool('node-2', [devs('x', 1)]), pool('rack-r2', [devs('r', 1)], { nodeSelector: sel })]);
  await other.settle();
  const foreign = emu.createSlice({
    metadata: { generateName: `00000-${DRIVER}-node-2-` },
    spec: { driver: DRIVER, allNodes: true, pool: { name: 'pool-n2', generation: 1, resourceSliceCount: 1 }, devices: devs('f', 1).map(v1dev) },
  });
  emu.resetLog();
  await ctl.publish([pool('pool-n1', [devs('n', 2)], { nodeSelector: sel })]);
  await ctl.settle();
  const w = writes(emu);
  assert.deepEqual(w.map((e) => e.method), ['POST'], JSON.stringify(w.map(reqLine)));
  assert.equal(w[0].body.metadata.generateName, `00000-${DRIVER}-${NODE}-`);
  assert.equal('nodeName' in w[0].body.spec, false, 'no nodeName even though the Node owns it');
  assert.deepEqual(w[0].body.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: emu.getNode(NODE).uid, controller: true }]);
  assert.deepEqual(w[0].body.spec.nodeSelector, { nodeSelectorTerms: [sel] });
  assert.equal(emu.requests({ method: 'GET', path: SLICES }).filter((e) => e.query.fieldSelector === SEL).length, 0);
  // Steady, and the other node's slices are left alone, also when the pool
  // goes away.
  emu.resetLog();
  await sleep(1200);
  assert.deepEqual(writes(emu), []);
  const mine = emu.getSlices({ fieldSelector: noNode }).filter((s) => s.spec.pool.name === 'pool-n1');
  assert.equal(mine.length, 1);
  // Another pool set is refused and the old state kept (upstream Update()).
  const f = path.join(ctl.dir, 'other-pools.json');
  fs.writeFileSync(f, JSON.stringify({ pools: [pool('pool-n1', [devs('n', 1)], { nodeSelector: sel }), pool('pool-x', [devs('x', 1)], { allNodes: true })] }));
  assert.equal(await ctl.cmd(`publish ${f}`, ['published', 'error']), 'error invalid argument');
  assert.match((await ctl.stats()).lastError, /ReconcilePoolWithName="pool-n1", but found 2 pools; expected exactly one pool with this name/);
  await sleep(600);
  assert.deepEqual(writes(emu), []);
  await ctl.publish([]);
  await ctl.settle();
  assert.deepEqual(writes(emu).map(reqLine), [`DELETE /${mine[0].metadata.name}`]);
  assert.deepEqual(emu.getSlices({ fieldSelector: noNode }).map((s) => s.spec.pool.name).sort(), ['pool-n2', 'rack-r2']);
  assert.ok(emu.getSlices().some((s) => s.metadata.name === foreign.metadata.name));
  assert.equal(emu.getSlices({ fieldSelector: `spec.driver=${DRIVER},spec.nodeName=node-2` }).length, 1);
  await other.stop();
  await ctl.stop();
});
