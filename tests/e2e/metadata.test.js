'use strict';
// End-to-end tests of device metadata (KEP-5304, issue 11): with
// kp_device_metadata() on, every request of a prepared claim gets the
// metadata file under <plugin data dir>/dra-device-metadata and a CDI spec
// mounting it read-only, with upstream v0.36's names and JSON; its CDI ID
// is appended to the request's first device; unprepare removes both, and
// a removal failure is the claim's error. Off by default. The expected
// bytes are built here with JSON.stringify(obj, null, 2), which prints
// what Go's json.MarshalIndent(obj, "", "  ") does for these values.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { startEmulator, kubeconfig } = require('../apiserver-emu');
const { BUILD, makeRoot, TestDriver, IDS, roles, until, attackProbes } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const V1A1 = 'metadata.resource.k8s.io/v1alpha1';
const V1B1 = 'metadata.resource.k8s.io/v1beta1';
const CONTAINER_DIR = '/var/run/kubernetes.io/dra-device-attributes';

async function setup(t, { args = [], env = () => ({}) } = {}) {
  const root = makeRoot(DRIVER);
  const mdDir = path.join(path.dirname(root.draSock), 'dra-device-metadata');
  const cdiDir = path.join(root.dir, 'cdi');
  const drv = new TestDriver(root, ['--cdi-dir', cdiDir, ...args], { env: env(mdDir) });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, version: '1.37', retryInitialMs: 100, healthStream: false }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  return { root, drv, sim, cdiDir, mdDir };
}

const claim = (name, ns = 'default') => ({ namespace: ns, name, uid: randomUUID() });

// What upstream writes for one request: one object per version, in order.
// attrs: device name -> attributes (keys sorted, as Go writes a map).
function expectedFile(c, request, devices, versions, attrs = {}) {
  return versions.map((v) => `${JSON.stringify({
    kind: 'DeviceMetadata',
    apiVersion: v,
    metadata: { name: c.name, namespace: c.namespace, uid: c.uid, generation: 1 },
    requests: [{
      name: request,
      devices: devices.map((d) => ({
        driver: DRIVER,
        pool: 'pool-a',
        name: d,
        ...(attrs[d] ? { attributes: attrs[d] } : {}),
        ...(NETS[d] && Object.keys(attrs).length ? { networkData: NETS[d] } : {}),
      })),
    }],
  }, null, 2).replace(/[<>&]/g, (ch) => `\\u00${ch.charCodeAt(0).toString(16)}`)}\n`).join('');
}

// What kp_testdriver gives for its "multi-" claims: attributes, and
// network data (members left out when unset, as omitempty).
const NETS = {
  'dev-b': { interfaceName: 'eth1', ips: ['10.0.0.2/24', 'fd00::2/64'], hardwareAddress: '02:00:00:00:00:01' },
  'dev-c': { hardwareAddress: '02:00:00:00:00:02' },
};
// What kp_testdriver gives for its "multi-" claims.
const MULTI_ATTRS = {
  'dev-a': { healthy: { bool: true }, index: { int: 7 }, 'resource.kubernetes.io/pciBusID': { string: '0000:03:00.0' } },
  'dev-b': { caps: { strings: ['<fast>', 'a&b'] }, driverVersion: { version: '1.2.3' }, numa: { ints: [3, 1] } },
};

function expectedSpec(c, request, hostPath, podClaimName) {
  return JSON.stringify({
    cdiVersion: '0.5.0',
    kind: `${DRIVER}/metadata`,
    devices: [{
      name: `${c.uid}_${request}`,
      containerEdits: {
        mounts: [{
          hostPath,
          containerPath: podClaimName
            ? `${CONTAINER_DIR}/resourceclaimtemplates/${podClaimName}/${request}/${DRIVER}-metadata.json`
            : `${CONTAINER_DIR}/resourceclaims/${c.name}/${request}/${DRIVER}-metadata.json`,
          options: ['ro', 'bind'],
        }],
      },
    }],
  }, null, 2);
}

const mdFile = (mdDir, c, req) => path.join(mdDir, `${c.namespace}_${c.name}`, req, 'metadata.json');
const specFile = (cdiDir, c, req) => path.join(cdiDir, `${DRIVER}_metadata_${c.uid}_${req}.json`);

test('off by default: no metadata file, no spec, the hook\'s CDI IDs only', async (t) => {
  const { sim, cdiDir, mdDir } = await setup(t);
  const c = claim('gpu-0');
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.deepEqual(res.claims[c.uid].devices[0].cdi_device_ids, [`${DRIVER}/test=gpu-0`]);
  assert.equal(fs.existsSync(mdDir), false);
  assert.deepEqual(fs.existsSync(cdiDir) ? fs.readdirSync(cdiDir) : [], []);
});

test('one request: file and spec as upstream, read-only mount, CDI ID on the device; unprepare removes both', async (t) => {
  const { sim, cdiDir, mdDir } = await setup(t, { args: ['--device-metadata', `${V1B1},${V1A1}`] });
  const st = fs.statSync(mdDir);
  // The broker's (it alone writes there), not the nodeserver's.
  assert.equal(st.uid, process.getuid() === 0 ? IDS.broker : process.getuid());
  assert.equal(st.mode & 0o777, 0o755);
  const c = claim('gpu-1');
  const keep = claim('gpu-2', 'other');
  const res = await sim.nodePrepareResources(DRIVER, [c, keep]);
  assert.deepEqual(res.claims[c.uid].devices[0].cdi_device_ids,
    [`${DRIVER}/test=gpu-1`, `${DRIVER}/metadata=${c.uid}_req-0`]);
  const file = mdFile(mdDir, c, 'req-0');
  assert.equal(fs.readFileSync(file, 'utf8'), expectedFile(c, 'req-0', ['gpu-1'], [V1B1, V1A1]));
  const fst = fs.statSync(file);
  assert.equal(fst.mode & 0o777, 0o644);
  assert.equal(fst.uid, process.getuid() === 0 ? IDS.broker : process.getuid());
  assert.notEqual(fst.uid, IDS.nodeserver);
  const spec = fs.readFileSync(specFile(cdiDir, c, 'req-0'), 'utf8');
  assert.equal(spec, expectedSpec(c, 'req-0', file));
  assert.deepEqual(JSON.parse(spec).devices[0].containerEdits.mounts[0].options, ['ro', 'bind']);
  // Written atomically: no temporary file left; a retried prepare
  // replaces the file by rename (a new inode), not in place.
  assert.deepEqual(fs.readdirSync(path.dirname(file)), ['metadata.json']);
  assert.deepEqual(fs.readdirSync(cdiDir).filter((n) => n.startsWith('.')), []);
  await sim.nodePrepareResources(DRIVER, [c]);
  assert.notEqual(fs.statSync(file).ino, fst.ino);

  await sim.nodeUnprepareResources(DRIVER, [c]);
  assert.equal(fs.existsSync(path.join(mdDir, `${c.namespace}_${c.name}`)), false);
  assert.equal(fs.existsSync(specFile(cdiDir, c, 'req-0')), false);
  assert.ok(fs.existsSync(mdFile(mdDir, keep, 'req-0')), 'another claim\'s files stay');
  assert.ok(fs.existsSync(specFile(cdiDir, keep, 'req-0')));
  // Unpreparing again: nothing left to remove is no error.
  await sim.nodeUnprepareResources(DRIVER, [c]);
});

test('several requests: one file per request with its devices, the ID on each request\'s first device', async (t) => {
  const { sim, cdiDir, mdDir } = await setup(t, { args: ['--device-metadata', V1A1] });
  const c = claim('multi-1');
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  const ids = Object.fromEntries(res.claims[c.uid].devices.map((d) => [d.device_name, d.cdi_device_ids]));
  assert.deepEqual(ids, {
    'dev-a': [`${DRIVER}/test=dev-a`, `${DRIVER}/metadata=${c.uid}_req-0`],
    'dev-b': [`${DRIVER}/test=dev-b`, `${DRIVER}/metadata=${c.uid}_req-1`],
    'dev-c': [`${DRIVER}/test=dev-c`],
  });
  // Attributes as Go writes them: keys sorted, <, > and & escaped.
  assert.equal(fs.readFileSync(mdFile(mdDir, c, 'req-0'), 'utf8'),
    expectedFile(c, 'req-0', ['dev-a', 'dev-b'], [V1A1], MULTI_ATTRS));
  assert.equal(fs.readFileSync(mdFile(mdDir, c, 'req-1'), 'utf8'),
    expectedFile(c, 'req-1', ['dev-b', 'dev-c'], [V1A1], MULTI_ATTRS));
  assert.match(fs.readFileSync(mdFile(mdDir, c, 'req-1'), 'utf8'), /"\\u003cfast\\u003e",\n/);
  assert.deepEqual(fs.readdirSync(cdiDir).sort(), [
    `${DRIVER}_metadata_${c.uid}_req-0.json`, `${DRIVER}_metadata_${c.uid}_req-1.json`].sort());
  await sim.nodeUnprepareResources(DRIVER, [c]);
  assert.deepEqual(fs.readdirSync(cdiDir), []);
  assert.deepEqual(fs.readdirSync(mdDir), []);
});

test('a claim made from a template: podClaimName in the file, mounted under resourceclaimtemplates/<pod claim name>', async (t) => {
  const root = makeRoot(DRIVER);
  const NODE = 'node-1';
  const emu = await startEmulator({ versions: ['v1'], nodes: [NODE], tokenFile: path.join(root.dir, 'token') });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const cdiDir = path.join(root.dir, 'cdi');
  const drv = new TestDriver(root, ['--kubeconfig', kc, '--node-name', NODE, '--cdi-dir', cdiDir, '--device-metadata', V1A1]);
  t.after(async () => {
    drv.kill();
    await drv.exited;
    await emu.stop();
    root.cleanup();
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, version: '1.37', healthStream: false }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  const mdDir = path.join(path.dirname(root.draSock), 'dra-device-metadata');
  const c = claim('pod-x-gpu-7k2lq');
  emu.addClaim({
    ...c,
    metadata: { annotations: { 'resource.kubernetes.io/pod-claim-name': 'gpu' } },
    allocation: { results: [{ request: 'req-0', driver: DRIVER, pool: 'pool-a', device: 'dev-0' }] },
  });
  const plain = claim('direct');
  emu.addClaim({ ...plain, allocation: { results: [{ request: 'req-0', driver: DRIVER, pool: 'pool-a', device: 'dev-1' }] } });
  await sim.nodePrepareResources(DRIVER, [c, plain]);
  const file = mdFile(mdDir, c, 'req-0');
  const want = JSON.parse(expectedFile(c, 'req-0', [c.name], [V1A1]));
  assert.deepEqual(Object.keys(JSON.parse(fs.readFileSync(file, 'utf8'))),
    ['kind', 'apiVersion', 'metadata', 'podClaimName', 'requests'], 'podClaimName after metadata, as Go orders it');
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { ...want, podClaimName: 'gpu' });
  assert.equal(fs.readFileSync(specFile(cdiDir, c, 'req-0'), 'utf8'), expectedSpec(c, 'req-0', file, 'gpu'));
  assert.equal(fs.readFileSync(specFile(cdiDir, plain, 'req-0'), 'utf8'),
    expectedSpec(plain, 'req-0', mdFile(mdDir, plain, 'req-0')));
});

test('a removal failure is that claim\'s error; a request name that is no DNS label fails the prepare', async (t) => {
  const { sim, mdDir } = await setup(t, { args: ['--device-metadata', V1A1] });
  const c = claim('gpu-3');
  const ok = claim('gpu-4');
  await sim.nodePrepareResources(DRIVER, [c, ok]);
  // Something the library did not write blocks the removal.
  const blocker = path.join(path.dirname(mdFile(mdDir, c, 'req-0')), 'stuck');
  fs.mkdirSync(blocker);
  await assert.rejects(sim.nodeUnprepareResources(DRIVER, [ok, c]),
    new RegExp(`NodeUnprepareResources failed for claim default/gpu-3: clean up device metadata: remove metadata directory .*default_gpu-3: req-0: Directory not empty`));
  assert.equal(fs.existsSync(path.join(mdDir, 'default_gpu-4')), false, 'the other claim was cleaned up');
  fs.rmdirSync(blocker);
  await sim.nodeUnprepareResources(DRIVER, [c]);
  assert.equal(fs.existsSync(path.join(mdDir, 'default_gpu-3')), false);

  const bad = claim('badreq-1');
  await assert.rejects(sim.nodePrepareResources(DRIVER, [bad]),
    /failed for claim default\/badreq-1: write device metadata for request "Not_A_Label": the request name is not a DNS label/);
});

test('the hooks cannot change the metadata files or plant one', async (t) => {
  const file = (mdDir) => path.join(mdDir, 'default_gpu-5', 'req-0', 'metadata.json');
  const { sim, mdDir } = await setup(t, {
    args: ['--device-metadata', V1A1],
    env: (md) => ({
      KP_TEST_PROBE_1: `unlink:${file(md)}`,
      KP_TEST_PROBE_2: `write:${path.dirname(file(md))}/planted`,
      KP_TEST_PROBE_3: `rename:${file(md)}:${file(md)}.x`,
      KP_TEST_PROBE_4: `write:${file(md)}`,
    }),
  });
  const c = claim('gpu-5');
  await sim.nodePrepareResources(DRIVER, [c]);
  const before = fs.readFileSync(file(mdDir), 'utf8');
  for (const n of [1, 2, 3, 4]) {
    const err = await sim.nodePrepareResources(DRIVER, [claim(`probe-${n}`)]).then(() => null, (e) => e);
    assert.ok(err, `probe ${n} fails its claim with the outcome`);
    assert.doesNotMatch(err.message, /: ok$/, `probe ${n}: ${err.message}`);
    assert.match(err.message, /Permission denied|No such file|Operation not permitted|Read-only/);
    if (process.env.KP_VERBOSE) console.log(err.message);
  }
  assert.equal(fs.readFileSync(file(mdDir), 'utf8'), before);
  assert.deepEqual(fs.readdirSync(path.dirname(file(mdDir))), ['metadata.json']);
});

test('ATTACK: a MetadataWrite frame naming a path outside the metadata directory kills the nodeserver; nothing is written', async (t) => {
  const { root, drv, sim, mdDir } = await setup(t, {
    args: ['--device-metadata', V1A1],
    env: () => ({ KP_TEST_PROBE_1: 'raw-md:default:../../../escaped', KP_TEST_PROBE_2: 'raw-md:../..:req-0' }),
  });
  for (const [n, re] of [[1, /metadata_write\.request "\.\.\/\.\.\/\.\.\/escaped": not a DNS label/],
    [2, /metadata_write\.namespace "\.\.\/\.\.": not a DNS label/]]) {
    const before = roles(drv.proc.pid).nodeserver;
    await sim.nodePrepareResources(DRIVER, [claim(`probe-${n}`)], { timeoutMs: 3000 }).catch(() => null);
    await drv.stderrMatch(new RegExp(`nodeserver: protocol violation: ${re.source}; killing it`));
    await until(() => {
      const now = roles(drv.proc.pid).nodeserver;
      return now && now !== before;
    }, 15000);
  }
  assert.deepEqual(fs.existsSync(mdDir) ? fs.readdirSync(mdDir) : [], []);
  const found = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name === 'escaped' || e.name.endsWith('_req-0.json')) found.push(path.join(d, e.name));
      if (e.isDirectory()) walk(path.join(d, e.name));
    }
  };
  walk(root.dir);
  assert.deepEqual(found, []);
});

test('option errors name the rule; the metadata directory may not overlap a state directory', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const start = (args) => {
    const drv = new TestDriver(root, args);
    t.after(async () => { drv.kill(); await drv.exited; });
    return drv.line(['ready', 'error']);
  };
  assert.match(await start(['--device-metadata', 'none']),
    /^error KP_EINVAL kp_device_metadata \(EnableDeviceMetadata\): metadata versions must be explicitly selected, none chosen/);
  assert.match(await start(['--device-metadata', 'metadata.resource.k8s.io/v2']),
    /metadata version "metadata.resource.k8s.io\/v2" is not supported/);
  assert.match(await start(['--device-metadata', `${V1A1},${V1A1}`]), /listed twice/);
  assert.match(await start(['--device-metadata', V1A1, '--state-dir',
    path.join(path.dirname(root.draSock), 'dra-device-metadata')]),
    /^error .*the metadata directory .*dra-device-metadata and the state directory .* overlap/);
});

// kp_update_request_metadata (upstream Helper.UpdateRequestMetadata,
// v0.36): the prepare hook left the device's metadata out; the driver
// process writes it later (as after CNI), generation + 1.
test('kp_update_request_metadata: the prepared request\'s file gets the metadata with generation 2, the spec still mounts it; refusals name the rule', async (t) => {
  const { drv, sim, cdiDir, mdDir } = await setup(t, { args: ['--device-metadata', `${V1B1},${V1A1}`] });
  const c = claim('gpu-5');
  await sim.nodePrepareResources(DRIVER, [c]);
  const file = mdFile(mdDir, c, 'req-0');
  const spec = fs.readFileSync(specFile(cdiDir, c, 'req-0'), 'utf8');
  assert.equal(fs.readFileSync(file, 'utf8'), expectedFile(c, 'req-0', ['gpu-5'], [V1B1, V1A1]));

  const up = (args) => drv.command(`md-update ${args}`, 'md-update ');
  assert.match(await up(`${c.namespace} ${c.name} ${c.uid} req-0 gpu-5`), /^md-update KP_OK/);
  const want = (gen, request) => [V1B1, V1A1].map((v) => `${JSON.stringify({
    kind: 'DeviceMetadata',
    apiVersion: v,
    metadata: { name: c.name, namespace: c.namespace, uid: c.uid, generation: gen },
    requests: [{
      name: request,
      devices: [{
        driver: DRIVER,
        pool: 'pool-a',
        name: 'gpu-5',
        attributes: { ifName: { string: 'net1' }, vlan: { int: 42 } },
        networkData: { interfaceName: 'net1', ips: ['10.1.0.5/24'], hardwareAddress: '02:00:00:00:01:05' },
      }],
    }],
  }, null, 2)}\n`).join('');
  assert.equal(fs.readFileSync(file, 'utf8'), want(2, 'req-0'));
  assert.equal(fs.statSync(file).uid, process.getuid() === 0 ? IDS.broker : process.getuid());
  assert.deepEqual(fs.readdirSync(path.dirname(file)), ['metadata.json'], 'written atomically');
  assert.equal(fs.readFileSync(specFile(cdiDir, c, 'req-0'), 'utf8'), spec, 'the spec is not touched');
  assert.equal(JSON.parse(spec).devices[0].containerEdits.mounts[0].hostPath, file);
  // A subrequest: the base request's file, the name as given; generation 3.
  assert.match(await up(`${c.namespace} ${c.name} ${c.uid} req-0/fast gpu-5`), /^md-update KP_OK/);
  assert.equal(fs.readFileSync(file, 'utf8'), want(3, 'req-0/fast'));

  // Refused, naming the field and the rule; the file stays as it was.
  const before = fs.readFileSync(file, 'utf8');
  let l = await up(`${c.namespace} ${c.name} ${c.uid} req-0 gpu-5 dup`);
  assert.match(l, /^md-update KP_EINVAL kp_update_request_metadata: devices\[0\]\.attributes: name: repeated/);
  l = await up(`${c.namespace} ${c.name} ${c.uid} Req_0 gpu-5`);
  assert.match(l, /^md-update KP_EINVAL kp_update_request_metadata: request "Req_0": a DNS label/);
  l = await up(`Bad_NS ${c.name} ${c.uid} req-0 gpu-5`);
  assert.match(l, /^md-update KP_EINVAL kp_update_request_metadata: claim_namespace: required, a DNS label/);
  l = await up(`${c.namespace} ${c.name} ${c.uid} req-0 Dev_5`);
  assert.match(l, /^md-update KP_EINVAL kp_update_request_metadata: devices\[0\]\.device: required, a DNS label/);
  // As upstream: a request or claim not prepared is "not found"; and
  // (beyond upstream) so is the right name with another UID.
  l = await up(`${c.namespace} ${c.name} ${c.uid} req-9 gpu-5`);
  assert.match(l, new RegExp(`^md-update KP_ENOENT kp_update_request_metadata: request "req-9" not found in prepared claim ${c.namespace}/${c.name}`));
  l = await up(`${c.namespace} never-prepared ${randomUUID()} req-0 gpu-5`);
  assert.match(l, /^md-update KP_ENOENT .*request "req-0" not found in prepared claim default\/never-prepared/);
  l = await up(`${c.namespace} ${c.name} ${randomUUID()} req-0 gpu-5`);
  assert.match(l, /^md-update KP_ENOENT .*prepared with UID/);
  assert.equal(fs.readFileSync(file, 'utf8'), before);

  // Unprepare removes the updated file too; an update after it is refused.
  await sim.nodeUnprepareResources(DRIVER, [c]);
  assert.equal(fs.existsSync(path.join(mdDir, `${c.namespace}_${c.name}`)), false);
  assert.equal(fs.existsSync(specFile(cdiDir, c, 'req-0')), false);
  l = await up(`${c.namespace} ${c.name} ${c.uid} req-0 gpu-5`);
  assert.match(l, /^md-update KP_ENOENT .*not found in prepared claim/);
});

test('kp_update_request_metadata with metadata off: "device metadata is not enabled"', async (t) => {
  const { drv } = await setup(t);
  const l = await drv.command(`md-update default gpu-6 ${randomUUID()} req-0 -`, 'md-update ');
  assert.match(l, /^md-update KP_ENOTSUP kp_update_request_metadata: device metadata is not enabled/);
});

test('ATTACK: a nodeserver sending MetadataUpdate (the driver process\'s message) is killed; the file stays as prepared', async (t) => {
  const c = claim('gpu-7');
  const { drv, sim, mdDir } = await setup(t, {
    args: ['--device-metadata', V1A1],
    env: () => ({ KP_TEST_PROBE_1: `raw-mdup:${c.name}:${c.uid}` }),
  });
  await sim.nodePrepareResources(DRIVER, [c]);
  const file = mdFile(mdDir, c, 'req-0');
  const before = fs.readFileSync(file, 'utf8');
  const pid = roles(drv.proc.pid).nodeserver;
  await sim.nodePrepareResources(DRIVER, [claim('probe-1')], { timeoutMs: 3000 }).catch(() => null);
  await drv.stderrMatch(/nodeserver: protocol violation: .*metadata_update.*; killing it/);
  await until(() => {
    const now = roles(drv.proc.pid).nodeserver;
    return now && now !== pid;
  }, 15000);
  assert.equal(fs.readFileSync(file, 'utf8'), before);
  assert.match(before, /"generation": 1\n/);
});

// The quota covers the metadata (issue 24, finding 3): a compromised
// nodeserver (tests/e2e/bin/kp_attack.c, whose unprepare hook writes raw
// MetadataWrite frames) without Kubernetes access, so no claim look-up
// bounds the names: only the quota does (with access, hostile.test.js).
const ATTACK = path.join(BUILD, 'tests', 'kp_attack');
const MIB16 = 16 * 1048576;

async function attackSetup(t, prep) {
  const root = makeRoot(DRIVER);
  const mdDir = path.join(path.dirname(root.draSock), 'dra-device-metadata');
  const cdiDir = path.join(root.dir, 'cdi');
  const probes = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-mdq-'));
  fs.chmodSync(probes, 0o755);
  fs.mkdirSync(cdiDir, { recursive: true });
  prep({ mdDir, cdiDir });
  const drv = new TestDriver(root, ['--cdi-dir', cdiDir, '--device-metadata', V1A1, '--read-path', probes],
    { binary: ATTACK, env: { KP_ATTACK_DIR: probes } });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    assert.doesNotMatch(drv.stderr, /Sanitizer|runtime error:/);
    fs.rmSync(probes, { recursive: true, force: true });
    root.cleanup();
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100, healthStream: false }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  const run = attackProbes(sim, DRIVER, probes, 15000);
  return { drv, mdDir, cdiDir, run };
}

// What the quota counts on disk: this driver's specs (their bytes), and
// every entry of the metadata tree (a directory 4096 bytes, a file its
// size); and the metadata files whose spec is missing.
function onDisk(mdDir, cdiDir) {
  const d = { files: 0, dirs: 0, bytes: 0, mdFiles: 0, unpaired: [], emptyDirs: [] };
  const walk = (dir, depth) => {
    const ents = fs.readdirSync(dir, { withFileTypes: true });
    if (ents.length === 0 && dir !== mdDir) d.emptyDirs.push(dir);
    for (const e of ents) {
      const p = path.join(dir, e.name);
      d.files++;
      if (e.isDirectory()) {
        d.dirs++;
        d.bytes += 4096;
        if (depth > 1) walk(p, depth - 1);
      } else if (e.isFile()) d.bytes += fs.statSync(p).size;
      if (e.name === 'metadata.json') d.mdFiles++;
    }
  };
  walk(mdDir, 3);
  const specs = new Set(fs.readdirSync(cdiDir).filter((n) => n.startsWith(`${DRIVER}_`)));
  for (const n of specs) {
    d.files++;
    d.bytes += fs.statSync(path.join(cdiDir, n)).size;
  }
  for (const c of fs.readdirSync(mdDir)) {
    const m = /^default_md-(\d+)$/.exec(c);
    const uid = m && `00000000-0000-4000-8000-${m[1].padStart(12, '0')}`;
    if (uid && fs.existsSync(path.join(mdDir, c, 'req-0', 'metadata.json')) &&
      !specs.has(`${DRIVER}_metadata_${uid}_req-0.json`)) d.unpaired.push(c);
  }
  return d;
}

test('ATTACK: a MetadataWrite flood for made-up claims stays within the quota (files, directories, bytes); a refused spec leaves no metadata file or directory', async (t) => {
  // 300 KiB left of the 16 MiB: room for 4 requests of 64 KiB.
  const { drv, mdDir, cdiDir, run } = await attackSetup(t, ({ cdiDir: c }) => {
    fs.writeFileSync(path.join(c, `${DRIVER}_big.json`), Buffer.alloc(MIB16 - 300 * 1024, 0x20));
  });
  assert.match(await run('md-raw:40:65536'), /md-raw: sent 40 of 40, barrier KP_OK/);
  const d = onDisk(mdDir, cdiDir);
  if (process.env.KP_VERBOSE) console.log(d);
  assert.ok(d.bytes <= MIB16, `${d.bytes} bytes on disk, over the 16 MiB quota (${d.mdFiles} metadata files, ${d.dirs} directories)`);
  assert.ok(d.files <= 4096, `${d.files} files and directories`);
  assert.ok(d.mdFiles >= 1 && d.mdFiles <= 4, `${d.mdFiles} metadata files written`);
  assert.deepEqual(d.unpaired, [], 'every metadata file has its spec');
  assert.deepEqual(d.emptyDirs, [], 'no directory of a refused request is left');
  await drv.stderrMatch(/nodeserver: metadata_write refused: metadata file default_md-\d+\/req-0\/metadata\.json: \d+ bytes would make this driver's specs and device metadata \d+ bytes, over 16777216 \(remove some first\)/);
});

test('the quota counts the metadata an earlier run left: a plugin started on a full directory writes no more specs or metadata', async (t) => {
  // 200 claims of 64 KiB (13.1 MB + 400 directories, 1.6 MB) and a spec
  // filling the rest but for 1000 bytes.
  const { drv, mdDir, cdiDir, run } = await attackSetup(t, ({ mdDir: m, cdiDir: c }) => {
    fs.mkdirSync(m, { mode: 0o755 });
    for (let i = 0; i < 200; i++) {
      fs.mkdirSync(path.join(m, `default_old-${i}`, 'req-0'), { recursive: true });
      fs.writeFileSync(path.join(m, `default_old-${i}`, 'req-0', 'metadata.json'), Buffer.alloc(65536, 0x20));
    }
    fs.writeFileSync(path.join(c, `${DRIVER}_big.json`), Buffer.alloc(MIB16 - 200 * (65536 + 2 * 4096) - 1000, 0x20));
  });
  const before = onDisk(mdDir, cdiDir);
  assert.equal(before.bytes, MIB16 - 1000);
  assert.match(await run('cdi-flood:1:2000'),
    /cdi-flood: wrote 0 of 1 \(0 EBUSY\): .*2000 bytes would make this driver's specs and device metadata 16778216 bytes, over 16777216/);
  await drv.stderrMatch(/device metadata: 600 files and directories, 14745600 bytes in the quota/);
  assert.match(await run('md-raw:3:100'), /md-raw: sent 3 of 3, barrier KP_OK/);
  const after = onDisk(mdDir, cdiDir);
  assert.deepEqual([after.files, after.bytes], [before.files, before.bytes], 'nothing written');
  assert.equal(fs.existsSync(path.join(mdDir, 'default_md-0')), false);
});
