'use strict';
// The example driver (build/examples/pci-driver): discovery against a fake
// sysfs tree and this machine's /sys, publishing through the kube-apiserver
// emulator, CDI spec files, idempotent prepare, the library's journal
// across restarts, unprepare of unknown claims, and rescans.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn, execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { startEmulator, kubeconfig } = require('../apiserver-emu');
const { PCI_DRIVER, makeRoot, roles, until, sleep, giveToNodeserver } = require('./lib/plugin');
const { addFakeDevice, removeFakeDevice, fakeSysfs: fakeTree } = require('./lib/fake-sysfs');

const DRIVER = 'pci.example.com';
const NODE = 'node-1';
const SEL = `spec.driver=${DRIVER},spec.nodeName=${NODE}`;
const JOURNAL = 'kubeletplugin-journal.json';
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

const ODD = [
  { addr: '0000:00:00.0', vendor: '0x8086', device: '0x0d57', cls: '0x060000', numa: 0 },
  { addr: '0000:00:01.0', vendor: '0x1af4', device: '0x1041', cls: '0x020000', numa: 1, driver: 'virtio-pci', bars: [[0x40000000, 512 * 1024]] },
  { addr: '0000:00:02.0', vendor: '0x10de', device: '0x2330', cls: '0x030200', driver: 'vfio-pci', iommu: 7, bars: [[0x80000000, 16 << 20], [0x90000000, 16 << 20]] },
  { addr: '0000:3b:00.1', vendor: '0x15b3', device: '0x101d', cls: '0x020000', numa: -1 },
];

const fakeSysfs = (dir, devices = ODD) => fakeTree(dir, devices);

const list = (args) => execFileSync(PCI_DRIVER, ['--list', ...args]).toString().trim().split('\n').filter(Boolean).map(JSON.parse);

test('discovery of a fake sysfs tree: odd devices, filters', () => {
  const root = makeRoot(DRIVER);
  try {
    const sys = fakeSysfs(root.dir);
    const devs = list(['--sysfs-root', sys]);
    assert.deepEqual(devs.map((d) => d.name), ['pci-0000-00-00-0', 'pci-0000-00-01-0', 'pci-0000-00-02-0', 'pci-0000-3b-00-1']);
    const [bridge, nic, gpu, mlx] = devs;
    assert.equal(bridge.driver, '', 'unbound: no driver');
    assert.equal(bridge.numaNode, 0);
    assert.equal(bridge.barBytes, 0);
    assert.equal(nic.driver, 'virtio-pci');
    assert.equal(nic.numaNode, 1);
    assert.equal(nic.barBytes, 512 * 1024);
    assert.equal(nic.pcieRoot, 'pci0000:00');
    assert.equal(gpu.numaNode, -1, 'no numa_node file');
    assert.equal(gpu.iommuGroup, 7);
    assert.equal(gpu.driver, 'vfio-pci');
    assert.equal(gpu.barBytes, 32 << 20);
    assert.equal(mlx.numaNode, -1);
    assert.equal(mlx.iommuGroup, -1);
    for (const d of devs) assert.match(d.name, DNS_LABEL);
    assert.deepEqual(list(['--sysfs-root', sys, '--class', '0x02']).map((d) => d.address), ['0000:00:01.0', '0000:3b:00.1']);
    assert.deepEqual(list(['--sysfs-root', sys, '--vendor', '0x10de']).map((d) => d.address), ['0000:00:02.0']);
    assert.deepEqual(list(['--sysfs-root', sys, '--class', '0x03', '--vendor', '0x8086']), []);
    const bad = spawnSync(PCI_DRIVER, ['--list', '--sysfs-root', path.join(root.dir, 'nope')]);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr.toString(), /nope\/bus\/pci\/devices: No such file/);
  } finally {
    root.cleanup();
  }
});

test('discovery on this machine\'s /sys: devices found, names are DNS labels', () => {
  const devs = list([]);
  assert.ok(devs.length >= 1, 'at least one PCI device');
  const names = new Set();
  for (const d of devs) {
    assert.match(d.name, DNS_LABEL);
    assert.match(d.address, /^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/);
    assert.match(d.vendor, /^0x[0-9a-f]{4}$/);
    assert.ok(!names.has(d.name));
    names.add(d.name);
  }
});

// A running pci-driver with an emulator and a kubelet simulator.
async function setup(t, { devices = ODD, extra = [], sim = true, sysfs } = {}) {
  const root = makeRoot(DRIVER);
  const sys = sysfs || fakeSysfs(root.dir, devices);
  const emu = await startEmulator({ versions: ['v1', 'v1beta1'], nodes: [NODE], tokenFile: path.join(root.dir, 'token') });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const env = {
    root, sys, emu, kc,
    cdi: path.join(root.dir, 'cdi'),
    state: path.join(root.dir, 'state'),
    args: ['--driver-name', DRIVER, '--node-name', NODE, '--registrar-socket', root.regSock,
      '--plugin-socket', root.draSock, '--kubeconfig', kc, '--cdi-dir', path.join(root.dir, 'cdi'),
      '--state-dir', path.join(root.dir, 'state'),
      '--sysfs-root', sys, '-v', '1', ...extra],
    procs: [],
  };
  // The nodeserver runs as its own uid: its journal directory must be
  // its own. The CDI directory stays root's, as /var/run/cdi on a node:
  // the supervisor writes the specs without CAP_DAC_OVERRIDE.
  giveToNodeserver(env.state);
  fs.mkdirSync(env.cdi, { recursive: true });
  t.after(async () => {
    for (const p of env.procs) await p.kill();
    if (env.kubelet) await env.kubelet.stop();
    await emu.stop();
    root.cleanup();
  });
  env.start = () => startDriver(env);
  env.drv = await env.start();
  if (sim) {
    env.kubelet = new KubeletSim({ registryDir: root.registry }).start();
    await env.kubelet.waitForDriver(DRIVER);
  }
  return env;
}

function startDriver(env, { expectFail = false } = {}) {
  const proc = spawn(PCI_DRIVER, env.args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const d = { proc, stderr: '' };
  proc.stderr.on('data', (b) => { d.stderr += b.toString(); });
  d.exited = new Promise((resolve) => proc.on('close', (code, signal) => resolve({ code, signal })));
  d.kill = async (sig = 'SIGKILL') => { try { proc.kill(sig); } catch { /* gone */ } return d.exited; };
  env.procs.push(d);
  if (expectFail) return d;
  return until(() => {
    if (/pci-driver: serving/.test(d.stderr)) return d;
    if (proc.exitCode !== null) throw new Error(`pci-driver exited ${proc.exitCode}:\n${d.stderr}`);
    return null;
  }, 15000, 20);
}

const slicesOf = (emu) => emu.getSlices({ fieldSelector: SEL });
const devicesOf = (slices) => slices.flatMap((s) => s.spec.devices || []);

function claimFor(env, device, name = 'c1') {
  const c = { namespace: 'default', name, uid: randomUUID() };
  env.emu.addClaim({ ...c, allocation: { results: [{ request: 'pci', driver: DRIVER, pool: NODE, device }] } });
  return c;
}

test('a bad flag value names the flag and its range; a fractional --kube-api-qps is accepted by the library', async (t) => {
  for (const [args, msg] of [
    [['--kube-api-qps', '0'], /bad value for --kube-api-qps: "0" \(a number > 0 and at most 1000/],
    [['--kube-api-qps=1001'], /bad value for --kube-api-qps: "1001" \(a number > 0 and at most 1000/],
    [['--kube-api-burst', '10001'], /bad value for --kube-api-burst: "10001" \(a whole number from 1 to 10000\)/],
    [['--max-connections', '0'], /bad value for --max-connections: "0" \(a whole number from 1 to 1024\)/],
    [['--rescan', 'x'], /bad value for --rescan: "x" \(seconds, a whole number from 0 to 86400\)/],
    [['-v', '11'], /bad value for -v: "11" \(a whole number from 0 to 10\)/],
  ]) {
    const r = spawnSync(PCI_DRIVER, ['--list', '--sysfs-root', '/nonexistent', ...args], { encoding: 'utf8' });
    assert.notEqual(r.status, 0, args.join(' '));
    assert.match(r.stderr, msg, args.join(' '));
  }
  // 0.5 requests per second: the option is set (kp_kube_api_qps takes a
  // double) and the driver publishes within its burst.
  const env = await setup(t, { sim: false, extra: ['--kube-api-qps', '0.5', '--kube-api-burst', '10'] });
  await until(() => devicesOf(slicesOf(env.emu)).length === 4, 15000, 100);
  assert.doesNotMatch(env.drv.stderr, /bad value|kp_kube_api_qps/);
});

test('300 devices publish as slices of at most 128 with qualified attributes', async (t) => {
  const many = [];
  for (let i = 0; i < 300; i++) {
    many.push({ addr: `0000:${(i >> 3).toString(16).padStart(2, '0')}:${(i & 7).toString(16).padStart(2, '0')}.0`, numa: i % 2, driver: i % 3 ? 'e1000e' : undefined, bars: [[0x1000000 * (i + 1), 4096]] });
  }
  const env = await setup(t, { devices: many, sim: false });
  const slices = await until(() => {
    const s = slicesOf(env.emu);
    return devicesOf(s).length === 300 ? s : null;
  }, 20000, 100);
  assert.deepEqual(slices.map((s) => s.spec.devices.length).sort((a, b) => a - b), [44, 128, 128]);
  for (const s of slices) {
    assert.equal(s.spec.pool.name, NODE);
    assert.equal(s.spec.pool.resourceSliceCount, 3);
    assert.equal(s.spec.nodeName, NODE);
  }
  const d = devicesOf(slices).find((x) => x.name === 'pci-0000-00-01-0');
  assert.deepEqual(d.attributes.pciAddress, { string: '0000:00:01.0' });
  assert.deepEqual(d.attributes.numaNode, { int: 1 });
  assert.deepEqual(d.attributes.driver, { string: 'e1000e' });
  assert.deepEqual(d.attributes.vendor, { string: '0x8086' });
  assert.deepEqual(d.attributes.class, { string: '0x020000' });
  assert.deepEqual(d.attributes['resource.kubernetes.io/pcieRoot'], { string: 'pci0000:00' });
  assert.equal(d.capacity.barMemory.value, '4Ki');
  const unbound = devicesOf(slices).find((x) => x.name === 'pci-0000-00-00-0');
  assert.equal(unbound.attributes.driver, undefined, 'unbound: no driver attribute');
  for (const x of devicesOf(slices)) {
    assert.match(x.name, DNS_LABEL);
    for (const k of Object.keys(x.attributes)) assert.match(k, /^([a-z0-9.-]+\/)?[A-Za-z_][A-Za-z0-9_]*$/);
    for (const k of Object.keys(x.attributes)) assert.ok(!k.startsWith(`${DRIVER}/`), `${k}: short names in the driver's own domain (ValidateQualifiedNames)`);
  }
});

test('SR-IOV: a PF and its VFs are partitions of one counter set', async (t) => {
  const sriov = [
    { addr: '0000:5e:00.0', vendor: '0x8086', device: '0x1593', driver: 'ice' },
    { addr: '0000:5e:01.0', vendor: '0x8086', device: '0x1889', driver: 'iavf', physfn: '0000:5e:00.0' },
    { addr: '0000:5e:01.1', vendor: '0x8086', device: '0x1889', driver: 'vfio-pci', physfn: '0000:5e:00.0' },
    { addr: '0000:5e:01.2', vendor: '0x8086', device: '0x1889', physfn: '0000:5e:00.0' },
    { addr: '0000:00:03.0', vendor: '0x1af4', device: '0x1041' },
  ];
  const root = makeRoot(DRIVER);
  try {
    const listed = list(['--sysfs-root', fakeSysfs(root.dir, sriov)]);
    assert.deepEqual(listed.map((d) => d.physfn), ['', '', '0000:5e:00.0', '0000:5e:00.0', '0000:5e:00.0']);
  } finally { root.cleanup(); }
  const env = await setup(t, { devices: sriov, sim: false });
  const slices = await until(() => {
    const s = slicesOf(env.emu);
    return devicesOf(s).length === 5 ? s : null;
  }, 15000, 100);
  // The counter set in a slice of its own (1.35), the devices in another.
  const sets = slices.filter((s) => s.spec.sharedCounters);
  assert.equal(sets.length, 1);
  assert.equal((sets[0].spec.devices || []).length, 0);
  assert.deepEqual(sets[0].spec.sharedCounters, [{ name: 'pci-0000-5e-00-0', counters: { vfs: { value: '3' } } }]);
  assert.equal(slices.length, 2);
  for (const s of slices) assert.deepEqual(s.spec.pool, { name: NODE, generation: 1, resourceSliceCount: 2 });
  const d = Object.fromEntries(devicesOf(slices).map((x) => [x.name, x]));
  const use = (n) => [{ counterSet: 'pci-0000-5e-00-0', counters: { vfs: { value: String(n) } } }];
  assert.deepEqual(d['pci-0000-5e-00-0'].consumesCounters, use(3), 'the PF takes every VF\'s share');
  for (const vf of ['pci-0000-5e-01-0', 'pci-0000-5e-01-1', 'pci-0000-5e-01-2']) {
    assert.deepEqual(d[vf].consumesCounters, use(1));
    assert.deepEqual(d[vf].attributes.physfn, { string: '0000:5e:00.0' });
  }
  assert.equal(d['pci-0000-00-03-0'].consumesCounters, undefined, 'not SR-IOV: no counters');
  assert.equal(d['pci-0000-5e-00-0'].attributes.physfn, undefined);
  // Steady: nothing is rewritten.
  const n = env.emu.writes().length;
  await sleep(1500);
  assert.equal(env.emu.writes().length, n);
});

test('prepare writes a CDI spec, is idempotent, recreates a lost spec; unprepare', async (t) => {
  const env = await setup(t);
  await until(() => devicesOf(slicesOf(env.emu)).length === 4, 15000, 100);
  const c = claimFor(env, 'pci-0000-00-02-0');
  const res = await env.kubelet.nodePrepareResources(DRIVER, [c]);
  const r = res.claims[c.uid];
  assert.ok(!r.error, r.error);
  assert.equal(r.devices.length, 1);
  const id = `${DRIVER}/pci=pci-0000-00-02-0-${c.uid}`;
  assert.deepEqual(r.devices[0].cdiDeviceIds || r.devices[0].cdi_device_ids, [id]);
  const spec = path.join(env.cdi, `${DRIVER}_claim-${c.uid}.json`);
  const json = JSON.parse(fs.readFileSync(spec, 'utf8'));
  assert.equal(json.kind, `${DRIVER}/pci`);
  assert.equal(json.cdiVersion, '0.3.0', 'the lowest its fields need');
  assert.equal(json.devices.length, 1);
  assert.equal(json.devices[0].name, `pci-0000-00-02-0-${c.uid}`);
  assert.deepEqual(json.devices[0].containerEdits.env, ['PCI_ADDRESS_0000_00_02_0=0000:00:02.0']);
  assert.deepEqual(json.devices[0].containerEdits.deviceNodes, [{ path: '/dev/vfio/vfio' }, { path: '/dev/vfio/7' }]);
  assert.deepEqual(fs.readdirSync(env.cdi), [path.basename(spec)], 'no temporary files left');
  const cpFile = path.join(env.state, JOURNAL);
  const st1 = [fs.statSync(spec), fs.statSync(cpFile)];
  await sleep(20);
  for (let i = 0; i < 2; i++) {
    const again = await env.kubelet.nodePrepareResources(DRIVER, [c]);
    assert.deepEqual(again.claims[c.uid], r, 'the same result');
  }
  const st2 = [fs.statSync(spec), fs.statSync(cpFile)];
  for (let i = 0; i < 2; i++) {
    assert.equal(st2[i].ino, st1[i].ino, 'not rewritten');
    assert.equal(st2[i].mtimeMs, st1[i].mtimeMs, 'not rewritten');
  }
  // The CDI dir is a tmpfs that a reboot empties (the start writes the
  // specs again) and that someone may clean by hand: a repeated prepare
  // writes a removed spec again once the supervisor's watch has seen the
  // removal (a moment after it; supervisor/cdi_watch.c).
  fs.rmSync(spec);
  let again;
  await until(async () => {
    again = await env.kubelet.nodePrepareResources(DRIVER, [c]);
    return fs.existsSync(spec);
  }, 10000, 20);
  assert.deepEqual(again.claims[c.uid], r);
  assert.deepEqual(JSON.parse(fs.readFileSync(spec, 'utf8')), json, 'spec recreated');
  // A device of another node, and a device that is not here.
  const other = { namespace: 'default', name: 'other', uid: randomUUID() };
  env.emu.addClaim({ ...other, allocation: { results: [{ request: 'pci', driver: DRIVER, pool: 'node-2', device: 'pci-0000-00-01-0' }] } });
  const gone = claimFor(env, 'pci-0000-99-00-0', 'gone');
  const bad = await env.kubelet.nodePrepareResources(DRIVER, [other, gone]).catch((e) => e);
  assert.match(String(bad.message || JSON.stringify(bad)), /node-2|not on this node/);
  // Unprepare removes the spec and the journal entry.
  const un = await env.kubelet.nodeUnprepareResources(DRIVER, [c]);
  assert.ok(!un.claims[c.uid].error);
  assert.ok(!fs.existsSync(spec));
  assert.deepEqual(JSON.parse(fs.readFileSync(cpFile, 'utf8')).claims, {});
  // Unknown claims and a second unprepare are not errors.
  const unknown = { namespace: 'default', name: 'unknown', uid: randomUUID() };
  const un2 = await env.kubelet.nodeUnprepareResources(DRIVER, [c, unknown]);
  assert.ok(!un2.claims[c.uid].error);
  assert.ok(!un2.claims[unknown.uid].error);
});

// kubelet prepares all of a pod's claims, or a node's burst of pods, in
// one call: 128 new claims are 128 spec writes, past the CDI budget's
// burst of 100 (supervisor/cdi_queue.c). The rest wait for their tokens;
// none fails. The same claims again (the journal answers) cost no write.
test('128 new claims in one call all prepare past the CDI budget\'s burst; again, no spec is rewritten', async (t) => {
  const env = await setup(t, { extra: ['--kube-api-qps', '1000', '--kube-api-burst', '1000'] });
  await until(() => devicesOf(slicesOf(env.emu)).length === 4, 15000, 100);
  const devs = ['pci-0000-00-02-0', 'pci-0000-00-01-0'];
  const claims = Array.from({ length: 128 }, (_, i) => claimFor(env, devs[i % 2], `burst-${i}`));
  const res = await env.kubelet.nodePrepareResources(DRIVER, claims, { timeoutMs: 30000 });
  const failed = claims.filter((c) => !res.claims[c.uid] || res.claims[c.uid].error);
  assert.deepEqual(failed.map((c) => res.claims[c.uid] && res.claims[c.uid].error), [], `${failed.length} of 128 failed`);
  const specs = claims.map((c) => path.join(env.cdi, `${DRIVER}_claim-${c.uid}.json`));
  const st1 = specs.map((f) => fs.statSync(f));
  await sleep(20);
  const again = await env.kubelet.nodePrepareResources(DRIVER, claims, { timeoutMs: 30000 });
  for (const c of claims) assert.deepEqual(again.claims[c.uid], res.claims[c.uid]);
  specs.forEach((f, i) => {
    const st = fs.statSync(f);
    assert.equal(st.ino, st1[i].ino, 'not rewritten');
    assert.equal(st.mtimeMs, st1[i].mtimeMs, 'not rewritten');
  });
  assert.doesNotMatch(env.drv.stderr, /rate-limited|KP_EBUSY|waited 8 s/);
});

test('the journal survives nodeserver and driver restarts; a corrupt one is moved aside', async (t) => {
  const env = await setup(t);
  await until(() => devicesOf(slicesOf(env.emu)).length === 4, 15000, 100);
  const c = claimFor(env, 'pci-0000-00-01-0');
  const first = await env.kubelet.nodePrepareResources(DRIVER, [c]);
  assert.ok(!first.claims[c.uid].error);
  // A restarted nodeserver reads the journal at its start.
  const before = roles(env.drv.proc.pid);
  process.kill(before.nodeserver, 'SIGKILL');
  await until(() => {
    const now = roles(env.drv.proc.pid);
    return now.nodeserver && now.nodeserver !== before.nodeserver;
  }, 15000, 50);
  const afterNs = await until(() => env.kubelet.nodePrepareResources(DRIVER, [c]).catch(() => null), 15000, 200);
  assert.deepEqual(afterNs.claims[c.uid], first.claims[c.uid]);
  // The whole driver restarts after a "reboot" that emptied the CDI dir:
  // the library's start rewrites the spec through the driver's
  // write_spec. Then the claim goes from the API server (unprepare must
  // not need it).
  await env.drv.kill('SIGTERM');
  const spec = path.join(env.cdi, `${DRIVER}_claim-${c.uid}.json`);
  const want = fs.readFileSync(spec, 'utf8');
  fs.rmSync(spec);
  env.drv = await env.start();
  await until(() => fs.existsSync(spec), 5000, 20);
  assert.equal(fs.readFileSync(spec, 'utf8'), want, 'the same spec');
  assert.match(env.drv.stderr, /CDI spec \S+ was missing, written again from the journal/);
  assert.match(env.drv.stderr, /journal \S+: 1 prepared claims/);
  await until(() => env.kubelet.getDriver(DRIVER) && env.kubelet.getDriver(DRIVER).socketPath, 15000, 50);
  const again = await until(() => env.kubelet.nodePrepareResources(DRIVER, [c]).catch(() => null), 15000, 200);
  assert.deepEqual(again.claims[c.uid], first.claims[c.uid], 'the same answer after a restart');
  env.emu.deleteClaim('default', c.name);
  const un = await env.kubelet.nodeUnprepareResources(DRIVER, [c]);
  assert.ok(!un.claims[c.uid].error);
  assert.ok(!fs.existsSync(spec));
  await env.drv.kill('SIGTERM');

  // Corrupt: moved aside, reported, and the driver serves (no crash
  // loop); the evidence is kept for a person.
  const file = path.join(env.state, JOURNAL);
  fs.writeFileSync(file, '{"schema": 1, "claims": {');
  env.drv = await env.start();
  assert.match(env.drv.stderr, /journal kubeletplugin-journal\.json: not JSON: .*moved aside to kubeletplugin-journal\.json\.corrupt-\d+/);
  const aside = fs.readdirSync(env.state).filter((f) => f.startsWith(`${JOURNAL}.corrupt-`));
  assert.equal(aside.length, 1);
  assert.equal(fs.readFileSync(path.join(env.state, aside[0]), 'utf8'), '{"schema": 1, "claims": {', 'never overwritten');
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')).claims, {});
});

// A function replaced by another at its address, as sysfs shows it: a
// new directory, with an inode of its own (kernfs numbers its nodes
// without reuse; this ext4 or tmpfs tree could give the freed inode
// straight back, so the old directory is moved away, not removed).
function swapFakeDevice(sys, dev) {
  const real = path.join(sys, 'devices', 'pci0000:00', dev.addr);
  fs.renameSync(real, path.join(sys, 'devices', `.gone-${randomUUID()}`));
  removeFakeDevice(sys, dev.addr);
  addFakeDevice(sys, dev);
}

// ATTACK: the cache holds what the last scan read. A function removed and
// another one added at the same address (hot-plug; a VF re-created by
// sriov_numvfs) is "still there" to a check of the address alone, but it
// is another device: another IOMMU group. Its spec must name the vfio
// node of the group the device has now, never the old device's group
// (which the kernel may have given to a device of another container).
test('ATTACK: a different vfio-pci function at a held address gets its own IOMMU group, not the cached one', async (t) => {
  const env = await setup(t, { extra: ['--rescan', '0'] });
  await until(() => devicesOf(slicesOf(env.emu)).length === 4, 15000, 100);
  const nodesOf = (c) => JSON.parse(fs.readFileSync(path.join(env.cdi, `${DRIVER}_claim-${c.uid}.json`), 'utf8'))
    .devices[0].containerEdits.deviceNodes || [];
  const first = claimFor(env, 'pci-0000-00-02-0', 'first');
  assert.ok(!(await env.kubelet.nodePrepareResources(DRIVER, [first])).claims[first.uid].error);
  assert.deepEqual(nodesOf(first), [{ path: '/dev/vfio/vfio' }, { path: '/dev/vfio/7' }]);
  swapFakeDevice(env.sys, { addr: '0000:00:02.0', vendor: '0x10de', device: '0x2330', cls: '0x030200', driver: 'vfio-pci', iommu: 9 });
  const second = claimFor(env, 'pci-0000-00-02-0', 'second');
  assert.ok(!(await env.kubelet.nodePrepareResources(DRIVER, [second])).claims[second.uid].error);
  assert.deepEqual(nodesOf(second), [{ path: '/dev/vfio/vfio' }, { path: '/dev/vfio/9' }]);
});

// The same swap to a function the driver does not manage (--vendor
// 0x10de; an Intel NIC now at the address, bound to vfio-pci): a scan
// would not list it, so the held entry must not hand it out either.
test('ATTACK: a function of a filtered-out vendor at a held address is not prepared from the cache', async (t) => {
  const env = await setup(t, { extra: ['--rescan', '0', '--vendor', '0x10de'] });
  await until(() => devicesOf(slicesOf(env.emu)).length === 1, 15000, 100);
  const first = claimFor(env, 'pci-0000-00-02-0', 'first');
  assert.ok(!(await env.kubelet.nodePrepareResources(DRIVER, [first])).claims[first.uid].error);
  swapFakeDevice(env.sys, { addr: '0000:00:02.0', vendor: '0x8086', device: '0x1889', cls: '0x020000', driver: 'vfio-pci', iommu: 9 });
  const other = claimFor(env, 'pci-0000-00-02-0', 'other');
  const bad = await env.kubelet.nodePrepareResources(DRIVER, [other]).catch((e) => e);
  assert.match(String(bad.message || JSON.stringify(bad)), /claim default\/other: device pci-0000-00-02-0 is not on this node \(any more\)/);
  assert.ok(!fs.existsSync(path.join(env.cdi, `${DRIVER}_claim-${other.uid}.json`)));
});

test('rescan republishes devices that appear and vanish', async (t) => {
  const env = await setup(t, { extra: ['--rescan', '1'], sim: false });
  await until(() => devicesOf(slicesOf(env.emu)).length === 4, 15000, 100);
  addFakeDevice(env.sys, { addr: '0000:af:00.0', vendor: '0x8086', cls: '0x120000', numa: 1, driver: 'idxd' });
  await until(() => devicesOf(slicesOf(env.emu)).some((d) => d.name === 'pci-0000-af-00-0'), 10000, 100);
  removeFakeDevice(env.sys, '0000:00:01.0');
  await until(() => {
    const names = devicesOf(slicesOf(env.emu)).map((d) => d.name);
    return names.length === 4 && !names.includes('pci-0000-00-01-0');
  }, 10000, 100);
  assert.match(env.drv.stderr, /rescan: 5 device\(s\) now \(1 new, 0 gone/);
  assert.match(env.drv.stderr, /rescan: 4 device\(s\) now \(0 new, 1 gone/);
});

// The nodeserver keeps the device list of its last scan (cache.c): with
// --rescan 0 it never scans again on its own, so only a miss (a claim
// naming a device it does not hold) finds a device added since, and
// only the per-use check of a held device sees one removed or rebound.
test('prepare finds a device added after start, sees a rebinding, fails cleanly on a removed one', async (t) => {
  const env = await setup(t, { extra: ['--rescan', '0'] });
  await until(() => devicesOf(slicesOf(env.emu)).length === 4, 15000, 100);
  const prep = async (c) => (await env.kubelet.nodePrepareResources(DRIVER, [c])).claims[c.uid];
  const nodesOf = (c) => {
    const spec = JSON.parse(fs.readFileSync(path.join(env.cdi, `${DRIVER}_claim-${c.uid}.json`), 'utf8'));
    return spec.devices[0].containerEdits.deviceNodes || [];
  };
  // The first prepare fills the list from sysfs.
  const first = claimFor(env, 'pci-0000-00-01-0', 'first');
  assert.ok(!(await prep(first)).error);
  // Added after that scan, unbound: found through the miss path.
  addFakeDevice(env.sys, { addr: '0000:af:00.0', vendor: '0x10de', cls: '0x030200', iommu: 5 });
  const added = claimFor(env, 'pci-0000-af-00-0', 'added');
  const r = await prep(added);
  assert.ok(!r.error, r.error);
  assert.deepEqual(r.devices[0].cdiDeviceIds || r.devices[0].cdi_device_ids, [`${DRIVER}/pci=pci-0000-af-00-0-${added.uid}`]);
  assert.deepEqual(nodesOf(added), [], 'not bound to vfio-pci: no nodes');
  // Bound to vfio-pci since: the held entry's driver is read again.
  fs.symlinkSync('../../../bus/pci/drivers/vfio-pci', path.join(env.sys, 'devices', 'pci0000:00', '0000:af:00.0', 'driver'));
  const bound = claimFor(env, 'pci-0000-af-00-0', 'bound');
  assert.ok(!(await prep(bound)).error);
  assert.deepEqual(nodesOf(bound), [{ path: '/dev/vfio/vfio' }, { path: '/dev/vfio/5' }]);
  // Removed: a held device that is gone is an error naming it, nothing
  // is written, and the driver goes on preparing others.
  removeFakeDevice(env.sys, '0000:00:02.0');
  const gone = claimFor(env, 'pci-0000-00-02-0', 'gone');
  const bad = await env.kubelet.nodePrepareResources(DRIVER, [gone]).catch((e) => e);
  assert.match(String(bad.message || JSON.stringify(bad)), /claim default\/gone: device pci-0000-00-02-0 is not on this node \(any more\)/);
  assert.ok(!fs.existsSync(path.join(env.cdi, `${DRIVER}_claim-${gone.uid}.json`)));
  assert.ok(!Object.keys(JSON.parse(fs.readFileSync(path.join(env.state, JOURNAL), 'utf8')).claims).includes(gone.uid));
  const after = claimFor(env, 'pci-0000-3b-00-1', 'after');
  assert.ok(!(await prep(after)).error);
  // Never scanned on a timer: the driver process published no change.
  assert.doesNotMatch(env.drv.stderr, /rescan:/);
});
