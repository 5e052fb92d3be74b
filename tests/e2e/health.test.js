'use strict';
// End-to-end tests of resource health (KEP-4680, issue 11): the
// v1.DRAResourceHealth and v1alpha1.DRAResourceHealth streams of the
// nodeserver against the kubelet simulator's health client per kubelet
// version, reports from the driver process and from hooks, the options,
// slow readers and the stale-report warning.

const test = require('node:test');
const assert = require('node:assert/strict');
const { randomUUID } = require('node:crypto');
const grpc = require('@grpc/grpc-js');
const { KubeletSim, proto } = require('../kubelet-sim');
const { makeRoot, TestDriver, until, sleep } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const DRA = ['v1.DRAPlugin', 'v1beta1.DRAPlugin'];
const HEALTH = ['v1.DRAResourceHealth', 'v1alpha1.DRAResourceHealth'];
const V1_PATH = '/v1.DRAResourceHealth/NodeWatchResources';
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });

async function setup(t, { args = [], version = '1.37', simOpts = {}, env = {} } = {}) {
  const root = makeRoot(DRIVER);
  const drv = new TestDriver(root, args, { env });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, version, retryInitialMs: 100, ...simOpts }).start();
  t.after(() => sim.stop());
  return { root, drv, sim };
}

// The latest list the simulator's kubelet holds, once pred accepts it
// (events may fire before a waiter is attached: poll the state).
async function health(sim, pred = () => true, ms = 10000) {
  const inst = await until(() => {
    const d = sim.getDriver(DRIVER);
    return d && d.health && pred({ devices: d.health, service: d.healthServiceUsed }) ? d : null;
  }, ms);
  return { devices: inst.health, service: inst.healthServiceUsed };
}

async function report(drv, args) {
  const l = await drv.command(`health ${args}`, 'health');
  return l.slice('health '.length);
}

test('supported_versions: DRA services first, then v1 and v1alpha1 health; options remove them', async (t) => {
  const cases = [
    { args: [], want: [...DRA, ...HEALTH] },
    { args: ['--no-health'], want: DRA },
    { args: ['--no-health-v1'], want: [...DRA, 'v1alpha1.DRAResourceHealth'] },
    { args: ['--no-health-v1alpha1'], want: [...DRA, 'v1.DRAResourceHealth'] },
  ];
  for (const c of cases) {
    await t.test(c.args.join(' ') || 'defaults', async (tt) => {
      const { sim } = await setup(tt, { args: c.args, simOpts: { healthStream: false } });
      const d = await sim.waitForDriver(DRIVER);
      assert.deepEqual(d.supportedVersions, c.want);
      assert.equal(d.api, 'v1');
    });
  }
});

test('kubelet 1.37 prefers v1: the complete list first, then each update, every field on the wire', async (t) => {
  const { drv, sim } = await setup(t, { args: ['--stream-interceptor'] });
  const first = await health(sim);
  assert.equal(first.service, 'v1.DRAResourceHealth');
  assert.deepEqual(first.devices, [], 'the (empty) complete list at once');
  assert.equal(await report(drv, 'pool-a dev-0 1 45 all good'), 'KP_OK ');
  const h = await health(sim, (e) => e.devices.length === 1, 10000);
  const d = h.devices[0];
  assert.deepEqual(d.device, { pool_name: 'pool-a', device_name: 'dev-0' });
  assert.equal(d.health, 'HEALTHY');
  assert.ok(Math.abs(Number(d.last_updated_time) - Date.now() / 1000) < 60);
  assert.equal(Number(d.health_check_timeout_seconds), 45);
  assert.equal(d.message, 'all good');
  // A second device, then a change of the first: always the whole list.
  await report(drv, 'pool-a dev-1 0');
  await health(sim, (e) => e.devices.length === 2, 10000);
  await report(drv, 'pool-a dev-0 2 45 fan failed');
  const h3 = await health(sim, (e) => e.devices.length === 2 &&
    e.devices[0].health === 'UNHEALTHY', 10000);
  assert.equal(h3.devices[0].message, 'fan failed');
  assert.equal(h3.devices[1].health, 'UNKNOWN');
  // Stream interceptors see the call and each message.
  await drv.stderrMatch(/stream-interceptor before \/v1\.DRAResourceHealth\/NodeWatchResources/);
  await drv.stderrMatch(/stream-interceptor send \/v1\.DRAResourceHealth\/NodeWatchResources len=[1-9]/);
  assert.equal(sim.healthErrors, 0);
});

test('a stream opened later gets the current list at once', async (t) => {
  const { drv, sim, root } = await setup(t);
  await health(sim);
  await report(drv, 'pool-b dev-7 1');
  await health(sim, (e) => e.devices.length === 1, 10000);
  const client = new grpc.Client(`unix:${root.draSock}`, grpc.credentials.createInsecure());
  t.after(() => client.close());
  const call = client.makeServerStreamRequest(V1_PATH, (b) => b, (b) => b, Buffer.alloc(0), new grpc.Metadata(), {});
  const msg = await new Promise((resolve, reject) => {
    call.on('data', resolve);
    call.on('error', reject);
  });
  call.cancel();
  const m = proto.decode('v1.NodeWatchResourcesResponse', msg);
  assert.equal(m.devices.length, 1);
  assert.equal(m.devices[0].device.device_name, 'dev-7');
});

test('kubelet 1.36 uses v1alpha1; with health off the stream stays open and idle (no 5 s retries)', async (t) => {
  await t.test('health on', async (tt) => {
    const { drv, sim } = await setup(tt, { version: '1.36' });
    const first = await health(sim);
    assert.equal(first.service, 'v1alpha1.DRAResourceHealth');
    await report(drv, 'pool-a dev-0 2');
    const h = await health(sim, (e) => e.devices.length === 1, 10000);
    assert.equal(h.devices[0].health, 'UNHEALTHY');
  });
  await t.test('health off', async (tt) => {
    const { drv, sim } = await setup(tt, { version: '1.36', args: ['--no-health'] });
    const d = await sim.waitForDriver(DRIVER);
    assert.deepEqual(d.supportedVersions, DRA);
    await until(() => sim.getDriver(DRIVER).healthStreams === 1);
    let messages = 0;
    sim.on('health', () => { messages++; });
    await report(drv, 'pool-a dev-0 1');
    await sleep(6500); // longer than kubelet's 5 s retry period
    assert.equal(sim.healthErrors, 0, 'no ERROR lines: the stream never failed');
    assert.equal(messages, 0, 'an idle stream gets no message');
    assert.equal(sim.getDriver(DRIVER).healthStreams, 1, 'opened once, never re-opened');
    const res = await sim.nodePrepareResources(DRIVER, [claim('c1')]);
    assert.equal(Object.keys(res.claims).length, 1);
  });
});

test('kubelet 1.37: no stream when health is off; v1alpha1 when only it is on', async (t) => {
  await t.test('off', async (tt) => {
    const { sim } = await setup(tt, { args: ['--no-health'] });
    await sim.waitForDriver(DRIVER);
    let opened = 0;
    sim.on('healthOpen', () => { opened++; });
    await sleep(1500);
    assert.equal(opened, 0);
    assert.equal(sim.getDriver(DRIVER).healthService, null);
  });
  await t.test('v1alpha1 only', async (tt) => {
    const { sim } = await setup(tt, { args: ['--no-health-v1'] });
    const h = await health(sim);
    assert.equal(h.service, 'v1alpha1.DRAResourceHealth');
  });
  await t.test('v1 not served: UNIMPLEMENTED', async (tt) => {
    const { root } = await setup(tt, { args: ['--no-health-v1'], simOpts: { healthStream: false } });
    const client = new grpc.Client(`unix:${root.draSock}`, grpc.credentials.createInsecure());
    tt.after(() => client.close());
    const call = client.makeServerStreamRequest(V1_PATH, (b) => b, (b) => b, Buffer.alloc(0), new grpc.Metadata(), {});
    const err = await new Promise((resolve) => { call.on('error', resolve); call.on('data', () => {}); });
    assert.equal(err.code, grpc.status.UNIMPLEMENTED);
  });
});

test('hooks report health inside the nodeserver', async (t) => {
  const { sim } = await setup(t, { args: ['--hook-health'] });
  await health(sim);
  await sim.waitForDriver(DRIVER);
  await sim.nodePrepareResources(DRIVER, [claim('gpu-3')]);
  const h = await health(sim, (e) => e.devices.some((d) => d.device.pool_name === 'hook-pool'), 10000);
  const d = h.devices.find((x) => x.device.pool_name === 'hook-pool');
  assert.equal(d.device.device_name, 'gpu-3');
  assert.equal(d.health, 'UNHEALTHY');
  assert.equal(Number(d.last_updated_time), 1700000000);
  assert.equal(d.message, 'reported by the prepare hook');
});

test('invalid reports are refused naming the field and the rule', async (t) => {
  const { drv } = await setup(t, { simOpts: { healthStream: false } });
  assert.match(await report(drv, 'pool-a dev-0 7'), /^KP_EINVAL .*devices\[0\]\.status 7/);
  assert.match(await report(drv, 'Pool_A dev-0 1'), /^KP_EINVAL .*devices\[0\]\.pool/);
  assert.match(await report(drv, 'pool-a Dev.0 1'), /^KP_EINVAL .*devices\[0\]\.device/);
  assert.match(await report(drv, 'pool-a dev-0 1 -1'), /^KP_EINVAL .*devices\[0\]\.timeout_s -1/);
  assert.match(await report(drv, `pool-a dev-0 1 0 ${'x'.repeat(1025)}`), /^KP_EINVAL .*message: longer than 1024/);
  assert.equal(await report(drv, `pool-a dev-0 1 0 ${'x'.repeat(1024)}`), 'KP_OK ');
});

test('stuck stream readers block neither prepare calls nor other streams', async (t) => {
  // Call logging off: 20 streams x 40 updates would hit the log rate limit.
  // 20 readers on their own connections: above the default cap of 8.
  const { drv, sim, root } = await setup(t, { args: ['--grpc-verbosity', '10', '--max-connections', '32'] });
  await health(sim);
  await sim.waitForDriver(DRIVER);
  // 20 readers that do not read: their HTTP/2 windows fill up.
  const readers = [];
  for (let i = 0; i < 20; i++) {
    const c = new grpc.Client(`unix:${root.draSock}`, grpc.credentials.createInsecure(),
      { 'grpc.use_local_subchannel_pool': 1 });
    const call = c.makeServerStreamRequest(V1_PATH, (b) => b, (b) => b, Buffer.alloc(0), new grpc.Metadata(), {});
    const r = { c, call, got: [] };
    call.on('error', () => {});
    call.on('data', (b) => r.got.push(b));
    call.pause();
    readers.push(r);
  }
  t.after(() => readers.forEach(({ c, call }) => { call.cancel(); c.close(); }));
  // Big lists: every report is ~1 KiB per device, 40 reports.
  const big = 'm'.repeat(1000);
  for (let i = 0; i < 40; i++) {
    assert.equal(await report(drv, `pool-s dev-${i} 1 0 ${big}`), 'KP_OK ');
  }
  const t0 = Date.now();
  const res = await sim.nodePrepareResources(DRIVER, [claim('c-busy')]);
  assert.equal(Object.keys(res.claims).length, 1);
  assert.ok(Date.now() - t0 < 5000, 'prepare answered promptly');
  // The reading stream still gets the newest list.
  await report(drv, 'pool-s dev-0 2 0 last');
  const h = await health(sim, (e) => e.devices.length === 40 &&
    e.devices[0].health === 'UNHEALTHY');
  assert.equal(h.devices[0].message, 'last');
  // Readers that catch up get the newest list, not a queue of 41 lists:
  // what the stuck streams missed was dropped, not buffered.
  readers.forEach((r) => r.call.resume());
  await until(() => readers.every((r) => r.got.length > 0 &&
    proto.decode('v1.NodeWatchResourcesResponse', r.got[r.got.length - 1]).devices[0]?.message === 'last'), 15000);
  const counts = readers.map((r) => r.got.length);
  t.diagnostic(`messages per stuck reader: ${counts}`);
  assert.ok(Math.max(...counts) < 41, `coalesced: ${counts}`);
  assert.ok(counts.some((n) => n < 30), `some reader skipped lists: ${counts}`);
  // And the plugin stops cleanly with the readers still connected.
  const st = await drv.stop();
  assert.equal(st.code, 0);
});

test('no report within the smallest timeout: a stale warning, once', async (t) => {
  const { drv, sim } = await setup(t);
  await health(sim);
  await report(drv, 'pool-a dev-0 1 1');
  const re = /^W.* nodeserver\] device health reports are stale: none for \d+ s, more than the smallest health check timeout \(1 s\)/gm;
  await drv.stderrMatch(re, 25000);
  await sleep(10500); // one more check: still one warning per stale period
  assert.equal((drv.stderr.match(re) || []).length, 1);
  // A new report ends the period; the next staleness warns again.
  await report(drv, 'pool-a dev-0 1 1');
  await until(() => (drv.stderr.match(re) || []).length === 2, 25000);
});
