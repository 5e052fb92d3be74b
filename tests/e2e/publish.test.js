'use strict';
// End-to-end tests of publishing and claim look-ups through the whole
// plugin: kp_publish_resources in the driver -> supervisor -> publisher ->
// the kube-apiserver emulator, and NodePrepareResources -> nodeserver ->
// supervisor -> publisher -> one ResourceClaim GET.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { startEmulator, kubeconfig } = require('../apiserver-emu');
const { makeRoot, TestDriver, roles, until, sleep, TESTDRIVER } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const NODE = 'node-1';
const SELECTOR = `spec.driver=${DRIVER},spec.nodeName=${NODE}`;

// An emulator, a kubeconfig for it, a running plugin and a kubelet sim.
async function setup(t, { versions = ['v1', 'v1beta1'], kubeVersion, args = [], sim = true } = {}) {
  const root = makeRoot(DRIVER);
  const tokenFile = path.join(root.dir, 'token');
  const emu = await startEmulator({ versions, kubeVersion, nodes: [NODE], tokenFile });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const drv = new TestDriver(root, ['--kubeconfig', kc, '--node-name', NODE, ...args]);
  t.after(async () => {
    drv.kill();
    await drv.exited;
    await emu.stop();
    root.cleanup();
  });
  await drv.ready();
  let kubelet = null;
  if (sim) {
    kubelet = new KubeletSim({ registryDir: root.registry }).start();
    t.after(() => kubelet.stop());
    await kubelet.waitForDriver(DRIVER);
  }
  return { root, emu, drv, kubelet, kc, tokenFile };
}

async function publish(drv, n, pools = 1, tag = 'a') {
  const l = await drv.command(`publish ${n} ${pools} ${tag}`, 'publish ');
  assert.match(l, /^publish KP_OK/, l);
}

async function pstatus(drv) {
  const l = await drv.command('publish-status', 'pstatus');
  const m = /^pstatus (\S+) sync=(\d+) pending=(\d+) creates=(\d+) updates=(\d+) deletes=(\d+) running=(\d) error=(.*)$/.exec(l);
  assert.ok(m, l);
  return {
    code: m[1], lastSync: Number(m[2]), pending: Number(m[3]), creates: Number(m[4]),
    updates: Number(m[5]), deletes: Number(m[6]), running: m[7] === '1', error: m[8],
  };
}

const slicesOf = (emu) => emu.getSlices({ fieldSelector: SELECTOR });
const devCount = (slices) => slices.reduce((n, s) => n + (s.spec.devices || []).length, 0);

test('publishing 300 devices makes 3 slices; a republish writes nothing', async (t) => {
  const { emu, drv } = await setup(t, { sim: false });
  await publish(drv, 300);
  const slices = await until(() => {
    const s = slicesOf(emu);
    return s.length === 3 && devCount(s) === 300 ? s : null;
  }, 15000, 100);
  for (const s of slices) {
    assert.equal(s.spec.pool.name, 'pool-0');
    assert.equal(s.spec.pool.resourceSliceCount, 3);
    assert.equal(s.spec.pool.generation, 1);
    assert.equal(s.spec.nodeName, NODE);
    assert.equal(s.metadata.ownerReferences[0].kind, 'Node');
    assert.equal(s.metadata.ownerReferences[0].controller, true);
    assert.match(s.metadata.name, new RegExp(`^0000[0-2]-${DRIVER.replace(/\./g, '\\.')}-${NODE}-[a-z0-9]{5}$`));
  }
  const st = await until(async () => {
    const x = await pstatus(drv);
    return x.creates === 3 && x.pending === 0 && x.lastSync > 0 ? x : null;
  }, 10000, 100);
  assert.equal(st.running, true);
  const before = emu.writes().length;
  await publish(drv, 300);
  await sleep(1500);
  assert.equal(emu.writes().length, before, 'unchanged resources: zero writes');
  const stopped = await drv.stop();
  assert.equal(stopped.code, 0);
  assert.equal(slicesOf(emu).length, 3, 'kp_stop never deletes slices');
  assert.equal(emu.writes().filter((w) => w.method === 'DELETE').length, 0);
});

test('split_slices: 300 devices and 10 counter sets become slices of the allowed sizes', async (t) => {
  const { emu, drv } = await setup(t, { sim: false });
  const l = await drv.command('publish-split 300 10', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  // 10 sets: 8 + 2 in slices of their own; 300 partitions (consumesCounters:
  // 64 per slice): 64, 64, 64, 64, 44; named in that order.
  const slices = await until(() => {
    const s = slicesOf(emu);
    return s.length === 7 && devCount(s) === 300 ? s : null;
  }, 15000, 100);
  slices.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  assert.deepEqual(slices.map((s) => s.metadata.name.slice(0, 5)), ['00000', '00001', '00002', '00003', '00004', '00005', '00006']);
  assert.deepEqual(slices.map((s) => (s.spec.sharedCounters || []).length), [8, 2, 0, 0, 0, 0, 0]);
  assert.deepEqual(slices.map((s) => (s.spec.devices || []).length), [0, 0, 64, 64, 64, 64, 44]);
  assert.deepEqual(slices.flatMap((s) => (s.spec.devices || []).map((d) => d.name)), Array.from({ length: 300 }, (_, i) => `dev-${i}`));
  assert.equal(slices[1].spec.sharedCounters[1].name, 'set-9');
  assert.deepEqual(slices[6].spec.devices[43].consumesCounters, [{ counterSet: 'set-9', counters: { memory: { value: '1Gi' } } }]);
  for (const s of slices) assert.deepEqual(s.spec.pool, { name: 'pool-0', generation: 1, resourceSliceCount: 7 });
  assert.equal(emu.writes().filter((w) => w.method === 'POST').length, 7);
  await drv.stop();
});

test('kp_reconcile_pool_with_name (1.38): that pool replaces the desired state, each other pool is reported and not published', async (t) => {
  const { emu, drv } = await setup(t, { sim: false, args: ['--reconcile-pool', 'pool-1', '--channels'] });
  const noNode = `spec.driver=${DRIVER},spec.nodeName=`;
  const l = await drv.command('publish 2 3', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  const errs = await until(() => {
    const e = drv.lines.filter((x) => x.startsWith('errcb '));
    return e.length === 2 ? e : null;
  }, 10000, 50);
  assert.deepEqual(errs, [0, 2].map((i) => `errcb KP_EINVAL rec=1 kp_publish_resources: pools[${i}] "pool-${i}": ` +
    'not published: ReconcilePoolWithName="pool-1" publishes only that pool'));
  const s = await until(() => {
    const x = emu.getSlices({ fieldSelector: noNode });
    return x.length === 1 ? x : null;
  }, 15000, 100);
  assert.equal(s[0].spec.pool.name, 'pool-1');
  assert.equal(s[0].spec.allNodes, true);
  assert.equal(s[0].spec.nodeName, undefined);
  assert.equal(s[0].spec.devices.length, 2);
  assert.equal(s[0].metadata.ownerReferences[0].name, NODE);
  assert.equal(slicesOf(emu).length, 0, 'nothing node-local');
  const sels = new Set(emu.requests({ method: 'GET', path: '/resourceslices' }).map((e) => e.query.fieldSelector));
  assert.deepEqual([...sels], [noNode]);
  // Only other pools: nothing desired, the pool's slice goes; reported.
  await publish(drv, 2, 1);
  await until(() => emu.getSlices({ fieldSelector: noNode }).length === 0, 15000, 100);
  assert.equal(drv.lines.filter((x) => x.startsWith('errcb ')).length, 3);
  await drv.stop();
});

test('ValidateQualifiedNames (1.38): a pool with a name of the driver\'s own domain is reported once, not published, not retried', async (t) => {
  const { emu, drv } = await setup(t, { sim: false, args: ['--channels'] });
  const errcb = () => drv.lines.filter((x) => x.startsWith('errcb '));
  const tagOf = (s) => s.spec.devices[0].attributes['example.com/tag'].string;
  const pool = (name) => slicesOf(emu).filter((s) => s.spec.pool.name === name);
  let l = await drv.command('publish 2 2 a 0 1', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  await until(() => errcb().length === 1, 10000, 50);
  assert.equal(errcb()[0], 'errcb KP_EINVAL rec=1 kp_publish_resources: pools[1] "pool-1": ' +
    `slices[0].devices[0].attributes["${DRIVER}/model"]: qualified with the driver's own domain: ` +
    'use the short name "model" (ValidateQualifiedNames); the pool is not published (its slices stay as they are)');
  await until(() => pool('pool-0').length === 1, 15000, 100);
  // Not retried: no second report, no write for pool-1.
  await sleep(1500);
  assert.equal(errcb().length, 1);
  assert.equal(pool('pool-1').length, 0);
  assert.equal(emu.writes({ path: '/resourceslices' }).length, 1, 'one create (pool-0)');
  // Corrected: published.
  await publish(drv, 2, 2, 'a');
  await until(() => pool('pool-1').length === 1, 15000, 100);
  const rv = pool('pool-1')[0].metadata.resourceVersion;
  // The name again, with another tag: pool-0 changes, pool-1 keeps what
  // was published last (neither updated nor deleted).
  l = await drv.command('publish 2 2 b 0 1', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  await until(() => errcb().length === 2, 10000, 50);
  assert.match(errcb()[1], /pools\[1\] "pool-1": .*the pool is not published \(its slices stay as they are\)$/);
  await until(() => tagOf(pool('pool-0')[0]) === 'b', 15000, 100);
  await sleep(500);
  assert.equal(pool('pool-1').length, 1);
  assert.equal(tagOf(pool('pool-1')[0]), 'a');
  assert.equal(pool('pool-1')[0].metadata.resourceVersion, rv);
  assert.equal(emu.writes({ method: 'DELETE', path: '/resourceslices' }).length, 0);
  await drv.stop();
});

test('kp_validate_qualified_names(opts, 0): such names are published as given', async (t) => {
  const { emu, drv } = await setup(t, { sim: false, args: ['--channels', '--no-qualified-names-check'] });
  const l = await drv.command('publish 1 1 a 0 0', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  const s = await until(() => {
    const x = slicesOf(emu);
    return x.length === 1 ? x : null;
  }, 15000, 100);
  assert.deepEqual(s[0].spec.devices[0].attributes[`${DRIVER}/model`], { string: 'x' });
  assert.equal(drv.lines.filter((x) => x.startsWith('errcb ')).length, 0);
  await drv.stop();
});

test('the error function may call kp_publish_resources, also while kp_stop runs (1.38)', async (t) => {
  const { emu, drv } = await setup(t, { sim: false, args: ['--channels', '--error-republish', '20000'] });
  const l = await drv.command('publish 1 2 a 0 1', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  await drv.line(['errcb KP_EINVAL']);
  // The function's own calls go through: pool-0 as it publishes it (one
  // attribute, "index"), pool-1 never.
  const s = await until(() => {
    const x = slicesOf(emu);
    return x.length === 1 && !x[0].spec.devices[0].attributes['example.com/tag'] ? x : null;
  }, 15000, 100);
  assert.deepEqual(s[0].spec.devices[0].attributes, { index: { int: 0 } });
  // kp_stop while the function still calls: they fail at once, it
  // returns, kp_stop ends in time and leaves no fd behind.
  const t0 = Date.now();
  const st = await drv.stop();
  const took = Date.now() - t0;
  assert.equal(st.code, 0);
  assert.equal(st.fdsAfter, st.fdsBefore, 'no fd left behind');
  assert.ok(took < 10000, `kp_stop took ${took} ms`);
  const r = drv.lines.find((x) => x.startsWith('errcb-republish '));
  const m = /^errcb-republish (\S+) n=(\d+) ms=(\d+)$/.exec(r || '');
  assert.ok(m, r);
  assert.equal(m[1], 'KP_EPIPE');
  assert.ok(Number(m[2]) >= 2, r);
  assert.ok(Number(m[3]) < 20000, r);
});

test('a node name with no Node object: the error names the 404 and where the name came from', async (t) => {
  // The later --node-name wins: a name the emulator has no Node for.
  const { emu, drv } = await setup(t, { sim: false, args: ['--node-name', 'node-2'] });
  await publish(drv, 1);
  const st = await until(async () => {
    const p = await pstatus(drv);
    return p.error ? p : null;
  }, 15000, 100);
  assert.match(st.error, /^get node node-2: nodes "node-2" not found \(no Node of that name: check kp_node_name\(\), e\.g\. the NODE_NAME the driver passes\)$/, st.error);
  assert.equal(emu.getSlices({}).length, 0);
});

test('changed devices are updated, a removed pool is deleted', async (t) => {
  const { emu, drv } = await setup(t, { sim: false });
  await publish(drv, 10, 2, 'a');
  await until(() => slicesOf(emu).length === 2, 15000, 100);
  emu.resetLog();
  await publish(drv, 10, 2, 'b');
  await until(() => slicesOf(emu).every((s) => JSON.stringify(s.spec.devices).includes('"b"')), 15000, 100);
  const puts = emu.writes().filter((w) => w.method === 'PUT');
  assert.equal(puts.length, 2, 'one update per changed slice');
  await publish(drv, 10, 1, 'b');
  await until(() => slicesOf(emu).length === 1, 15000, 100);
  assert.equal(slicesOf(emu)[0].spec.pool.name, 'pool-0');
});

test('slices deleted by someone else (kubelet start) are recreated', async (t) => {
  const { emu, drv } = await setup(t, { sim: false });
  await publish(drv, 5);
  await until(() => slicesOf(emu).length === 1, 15000, 100);
  emu.deleteSlices({ fieldSelector: `spec.nodeName=${NODE}` });
  assert.equal(slicesOf(emu).length, 0);
  await until(() => slicesOf(emu).length === 1, 20000, 100);
});

test('a v1beta1-only (1.32-like) server gets v1beta1 JSON', async (t) => {
  const { emu, drv } = await setup(t, { versions: ['v1beta1'], sim: false });
  await publish(drv, 3);
  await until(() => slicesOf(emu).length === 1, 15000, 100);
  const posts = emu.writes().filter((w) => w.method === 'POST');
  assert.ok(posts.length >= 1);
  assert.match(posts[0].path, /\/apis\/resource\.k8s\.io\/v1beta1\/resourceslices/);
  const body = typeof posts[0].body === 'string' ? JSON.parse(posts[0].body) : posts[0].body;
  assert.ok(body.spec.devices[0].basic, 'v1beta1 devices are nested under basic');
});

test('a 1.38 server (v1 and v1beta2, v1beta1 no longer served): slices and claim look-ups in v1', async (t) => {
  const { emu, drv, kubelet } = await setup(t, { versions: ['v1', 'v1beta2', 'v1beta1'], kubeVersion: '1.38.0' });
  assert.deepEqual(emu.versions, ['v1', 'v1beta2']);
  await publish(drv, 3);
  const s = await until(() => {
    const x = slicesOf(emu);
    return x.length === 1 ? x : null;
  }, 15000, 100);
  assert.equal(s[0].spec.devices.length, 3);
  const c = { namespace: 'default', name: 'c138', uid: randomUUID() };
  emu.addClaim({ ...c, allocation: { results: [{ request: 'gpu', driver: DRIVER, pool: NODE, device: 'dev-1' }] } });
  const res = await kubelet.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].devices.length, 1);
  await until(() => /ALLOC default\/c138 results=1 gpu:node-1\/dev-1/.test(drv.stderr));
  const api = emu.requests().filter((r) => /^\/apis\/resource\.k8s\.io\/v/.test(r.path));
  assert.ok(api.some((r) => /\/resourceclaims\/c138$/.test(r.path)));
  for (const r of api) assert.match(r.path, /^\/apis\/resource\.k8s\.io\/v1\//, `${r.method} ${r.path}`);
  await drv.stop();
});

test('a 1.38 server without v1 serves v1beta2 only: published in v1beta2', async (t) => {
  const { emu, drv } = await setup(t, { versions: ['v1beta2', 'v1beta1'], kubeVersion: '1.38.0', sim: false });
  assert.deepEqual(emu.versions, ['v1beta2']);
  await publish(drv, 2);
  await until(() => slicesOf(emu).length === 1, 15000, 100);
  const posts = emu.writes({ method: 'POST', path: '/resourceslices' });
  assert.equal(posts.length, 1);
  assert.match(posts[0].path, /^\/apis\/resource\.k8s\.io\/v1beta2\/resourceslices/);
  await drv.stop();
});

test('the publisher restarts and keeps publishing', async (t) => {
  const { emu, drv } = await setup(t, { sim: false });
  await publish(drv, 4);
  await until(() => slicesOf(emu).length === 1, 15000, 100);
  const before = roles(drv.proc.pid);
  assert.ok(before.publisher);
  process.kill(before.publisher, 'SIGKILL');
  await until(() => {
    const now = roles(drv.proc.pid);
    return now.publisher && now.publisher !== before.publisher;
  });
  // The restarted publisher has the desired state again: it repairs.
  emu.deleteSlices({ fieldSelector: `spec.nodeName=${NODE}` });
  await until(() => slicesOf(emu).length === 1, 20000, 100);
});

test('claim look-ups: allocation and config reach the hook; errors per claim', async (t) => {
  const { emu, drv, kubelet } = await setup(t);
  const ok = { namespace: 'default', name: 'ok-claim', uid: randomUUID() };
  emu.addClaim({
    ...ok,
    allocation: {
      results: [
        { request: 'gpu', driver: DRIVER, pool: NODE, device: 'dev-1' },
        { request: 'other', driver: 'other.example.com', pool: NODE, device: 'x' },
      ],
      config: [{ source: 'FromClaim', requests: ['gpu'], opaque: { driver: DRIVER, parameters: { mode: 'fast' } } }],
    },
  });
  const unalloc = { namespace: 'default', name: 'unalloc', uid: randomUUID() };
  emu.addClaim({ ...unalloc });
  const replaced = { namespace: 'default', name: 'replaced', uid: randomUUID() };
  emu.addClaim({ ...replaced, uid: randomUUID(), allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-2' }] } });
  const missing = { namespace: 'default', name: 'missing', uid: randomUUID() };

  const res = await kubelet.nodePrepareResources(DRIVER, [ok]);
  assert.equal(res.claims[ok.uid].devices.length, 1);
  await until(() => /ALLOC default\/ok-claim results=1 gpu:node-1\/dev-1 config=.*fast/.test(drv.stderr));
  for (const [c, why] of [[unalloc, /not allocated/], [replaced, /got replaced/], [missing, /not found/]]) {
    await assert.rejects(kubelet.nodePrepareResources(DRIVER, [c]), why);
  }
  const gets = emu.requests().filter((r) => r.method === 'GET' && /resourceclaims\/ok-claim/.test(r.path));
  assert.equal(gets.length, 1, 'exactly one GET per look-up');
  await kubelet.nodeUnprepareResources(DRIVER, [ok]);
  const after = emu.requests().filter((r) => r.method === 'GET' && /resourceclaims\/ok-claim/.test(r.path));
  assert.equal(after.length, 1, 'unprepare never reads the API server');
});

test('a missing kubeconfig fails kp_start with the publisher error', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const drv = new TestDriver(root, ['--kubeconfig', path.join(root.dir, 'nope.yaml'), '--node-name', NODE]);
  const l = await drv.line(['ready', 'error']);
  await drv.exited;
  assert.match(l, /^error KP_ECHILD publisher: kubeconfig .*nope\.yaml.*no such file/i);
  assert.ok(!fs.existsSync(root.regSock));
});

test('publishing without Kubernetes access or node name fails at once', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const drv = new TestDriver(root);
  t.after(async () => { drv.kill(); await drv.exited; });
  await drv.ready();
  const l = await drv.command('publish 1 1', 'publish ');
  assert.match(l, /^publish KP_ENOCLIENT .*no KubeClient found to publish resources/);
});

// Thread-group leaders and process names from an strace -f log of
// clone/clone3/prctl: which process each task belonged to.
function taskOwners(log) {
  const leader = new Map();
  const name = new Map();
  const pending = new Map();
  const lead = (tid) => leader.get(tid) || tid;
  for (const line of log.split('\n')) {
    // strace pads short pids: "1525  openat(...)".
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const tid = Number(m[1]);
    let call = m[2];
    if (/^(clone3?|fork|vfork)\(/.test(call) && call.includes('<unfinished')) {
      pending.set(tid, call);
      continue;
    }
    if (/^<\.\.\. (clone3?|fork|vfork) resumed>/.test(call)) call = (pending.get(tid) || '') + call;
    const c = /^(clone3?|fork|vfork)\(.*= (\d+)$/.exec(call);
    if (c) {
      const child = Number(c[2]);
      leader.set(child, /CLONE_THREAD/.test(call) ? lead(tid) : child);
      continue;
    }
    const p = /^prctl\(PR_SET_NAME, "([^"]+)"/.exec(call);
    if (p) name.set(lead(tid), p[1]);
  }
  return (tid) => name.get(lead(tid)) || `pid ${lead(tid)}`;
}

test('only the publisher ever opens the token file', async (t) => {
  const root = makeRoot(DRIVER);
  const tokenFile = path.join(root.dir, 'token');
  const emu = await startEmulator({ versions: ['v1'], nodes: [NODE], tokenFile });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const trace = path.join(root.dir, 'trace');
  t.after(async () => { await emu.stop(); root.cleanup(); });
  // strace follows every process and thread of the plugin's tree.
  const drv = new TestDriver(root, ['--kubeconfig', kc, '--node-name', NODE], {
    binary: 'strace',
    prefixArgs: ['-f', '-qq', '-e', 'trace=open,openat,openat2,clone,clone3,fork,vfork,prctl', '-o', trace, TESTDRIVER],
  });
  t.after(async () => { drv.kill('SIGTERM'); await drv.exited; });
  await drv.ready();
  await publish(drv, 2);
  await until(() => slicesOf(emu).length === 1, 20000, 100);
  await drv.stop();
  const log = fs.readFileSync(trace, 'utf8');
  const owner = taskOwners(log);
  const opens = log.split('\n').filter((l) => l.includes(`"${tokenFile}"`) && /open/.test(l));
  assert.ok(opens.length >= 1, 'the token was read');
  for (const l of opens) {
    const tid = Number(l.split(' ')[0]);
    assert.equal(owner(tid), 'kp-publisher', `token opened outside the publisher: ${l}`);
  }
});

test('a slow claim look-up does not hold up another call', async (t) => {
  const { emu, kubelet } = await setup(t);
  const slow = { namespace: 'default', name: 'slow', uid: randomUUID() };
  const fast = { namespace: 'default', name: 'fast', uid: randomUUID() };
  for (const c of [slow, fast]) {
    emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: `dev-${c.name}` }] } });
  }
  emu.inject({ method: 'GET', path: '*/resourceclaims/slow', action: 'delay', delayMs: 3000 });
  const order = [];
  const a = kubelet.nodePrepareResources(DRIVER, [slow]).then(() => order.push('slow'));
  await sleep(300);
  const b = kubelet.nodePrepareResources(DRIVER, [fast]).then(() => order.push('fast'));
  await Promise.all([a, b]);
  assert.deepEqual(order, ['fast', 'slow'], 'the second call was answered first');
});

// Issue 17: the claims of one call are looked up at once, so a call of
// n claims costs about one look-up, not n. Each GET is held 4 s at the
// API server: one after the other, the second GET could only come 4 s
// after the first; here all three are at the server while the call waits.
test('the claims of one call are looked up in parallel', async (t) => {
  const { emu, kubelet } = await setup(t);
  const claims = [0, 1, 2].map((i) => ({ namespace: 'default', name: `par-${i}`, uid: randomUUID() }));
  for (const [i, c] of claims.entries()) {
    emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: `dev-${i}` }] } });
  }
  emu.inject({ method: 'GET', path: '*/resourceclaims/par-*', action: 'delay', delayMs: 4000 });
  let answered = false;
  const call = kubelet.nodePrepareResources(DRIVER, claims, { timeoutMs: 45000 }).finally(() => { answered = true; });
  const gets = () => emu.requests().filter((r) => r.method === 'GET' && /resourceclaims\/par-/.test(r.path));
  await until(() => gets().length === 3, 3500, 20);
  assert.equal(answered, false, 'all three GETs arrived while the call waited');
  const res = await call;
  claims.forEach((c) => assert.equal(res.claims[c.uid].devices.length, 1));
  assert.equal(gets().length, 3, 'one GET per claim');
});

// Issue 15: a publisher crash is invisible to kubelet. A look-up that
// arrives while the publisher is down, or that the dead publisher had in
// flight, waits for the next publisher instead of failing.
test('claim look-ups during a publisher restart wait and succeed', async (t) => {
  const { emu, drv, kubelet } = await setup(t);
  const claims = [];
  for (let i = 0; i < 6; i++) {
    const c = { namespace: 'default', name: `during-${i}`, uid: randomUUID() };
    emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: `dev-${i}` }] } });
    claims.push(c);
  }
  // The first look-up is held at the API server, then the publisher dies
  // with it in flight; the others arrive while it is down.
  emu.inject({ method: 'GET', path: '*/resourceclaims/during-0', action: 'delay', delayMs: 1500, times: 1 });
  const before = roles(drv.proc.pid).publisher;
  const first = kubelet.nodePrepareResources(DRIVER, [claims[0]], { timeoutMs: 45000 });
  await sleep(300);
  process.kill(before, 'SIGKILL');
  const rest = claims.slice(1).map((c) => kubelet.nodePrepareResources(DRIVER, [c], { timeoutMs: 45000 }));
  const all = await Promise.all([first, ...rest]);
  all.forEach((res, i) => assert.equal(res.claims[claims[i].uid].devices.length, 1));
  for (let i = 0; i < claims.length; i++) {
    await until(() => new RegExp(`ALLOC default/during-${i} results=1 r:node-1/dev-${i}`).test(drv.stderr));
  }
  const now = roles(drv.proc.pid).publisher;
  assert.ok(now && now !== before, 'the publisher was restarted');
  assert.doesNotMatch(drv.stderr, /publisher not running|restarted during the look-up/);
});
