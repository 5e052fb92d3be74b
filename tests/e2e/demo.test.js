'use strict';
// `make demo` as a test: tools/demo.sh against KP_BUILD exits 0 and shows
// each step's key line. When run as root, the demo also runs as an
// unprivileged user (the reduced sandbox with its note), if one can read
// the build and the node modules.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { ROOT, BUILD } = require('./lib/plugin');

function runDemo(prefix = []) {
  const cmd = [...prefix, path.join(ROOT, 'tools', 'demo.sh')];
  const r = spawnSync(cmd[0], cmd.slice(1), {
    cwd: ROOT, env: { ...process.env, KP_BUILD: BUILD }, timeout: 120000, encoding: 'utf8',
  });
  return { code: r.status, out: r.stdout || '', err: r.stderr || '' };
}

function checkKeyLines(out) {
  assert.match(out, /supported versions: {2}v1\.DRAPlugin, v1beta1\.DRAPlugin/);
  assert.match(out, /API kubelet chose: {3}v1 /);
  assert.match(out, /\$ kubectl get resourceslices -o wide\n\s+NAME\s+NODE\s+DRIVER\s+POOL\s+AGE/);
  assert.match(out, /\n\s+pci-[0-9a-f]{4}-[0-9a-f]{2}-[0-9a-f]{2}-[0-7]\s+[0-9a-f]{4}:/, 'a real device row');
  assert.match(out, /device: pci-[0-9a-f-]+/);
  assert.match(out, /CDI device IDs: {2}pci\.example\.com\/pci=pci-[0-9a-f-]+/);
  assert.match(out, /"cdiVersion": "0\.3\.0"/, 'the lowest version its fields need');
  assert.match(out, /journal \$TMP\/state\/kubeletplugin-journal\.json: schema 1, 1 prepared claim\(s\)/);
  assert.match(out, /journal: 0 prepared claim\(s\)/);
  assert.match(out, /"kind": "pci\.example\.com\/pci"/);
  assert.match(out, /PCI_ADDRESS_/);
  assert.match(out, /prepared again \(kubelet retries\): same result, spec file not rewritten/);
  assert.match(out, /CDI spec file: removed/);
  assert.match(out, /unprepare of a claim never prepared: success/);
  assert.match(out, /\n\s+nodeserver\s+\d+\s+\d+\s+\d+\s+none\s+yes\s+filter/);
  assert.match(out, /\n\s+registrar\s+\d+\s+\d+\s+\d+\s+none\s+yes\s+filter/);
  assert.match(out, /\n\s+publisher\s+\d+\s+\d+\s+\d+\s+none\s+yes\s+filter/);
  assert.match(out, /driver exited with status 0/);
  assert.match(out, /socket files removed/);
  assert.match(out, /demo finished: OK/);
}

test('tools/demo.sh runs the main job end to end and exits 0', () => {
  const r = runDemo();
  assert.equal(r.code, 0, `demo failed:\n${r.out}\n${r.err}`);
  checkKeyLines(r.out);
  if (process.getuid() === 0) {
    assert.match(r.out, /\n\s+registrar\s+\d+\s+\d+\s+61001\s/, 'registrar as its own uid');
    assert.match(r.out, /\n\s+nodeserver\s+\d+\s+\d+\s+61000\s/, 'nodeserver as its own uid');
  }
});

test('the demo runs without root, with a reduced sandbox and a note', (t) => {
  if (process.getuid() !== 0) {
    t.skip('already not root: the first test covered it');
    return;
  }
  // setpriv (util-linux) drops to nobody with no capabilities.
  const probe = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all',
    'sh', '-c', `test -x '${path.join(BUILD, 'examples', 'pci-driver')}' && test -r '${path.join(ROOT, 'node_modules', '@grpc', 'grpc-js', 'package.json')}' && test -w /tmp`]);
  if (probe.status !== 0) {
    t.skip('nobody cannot read the build or the node modules here');
    return;
  }
  const r = runDemo(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all']);
  assert.equal(r.code, 0, `demo failed:\n${r.out}\n${r.err}`);
  assert.match(r.out, /NOTE: not running as root: the plugin runs with a reduced sandbox/);
  checkKeyLines(r.out);
});

test('the README\'s minimal driver is examples/minimal-driver/main.c, and it works', async (t) => {
  const fs = require('node:fs');
  const { randomUUID } = require('node:crypto');
  const { spawn } = require('node:child_process');
  const { KubeletSim } = require('../kubelet-sim');
  const { startEmulator, kubeconfig } = require('../apiserver-emu');
  const { makeRoot, until } = require('./lib/plugin');
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const src = fs.readFileSync(path.join(ROOT, 'examples', 'minimal-driver', 'main.c'), 'utf8');
  assert.ok(readme.includes(`\`\`\`c\n${src}\`\`\``), 'README shows examples/minimal-driver/main.c verbatim');
  assert.ok(src.split('\n').length <= 85, 'about 50 lines of code');

  const DRIVER = 'minimal.example.com';
  const root = makeRoot(DRIVER);
  const emu = await startEmulator({ versions: ['v1'], nodes: ['node-1'], tokenFile: path.join(root.dir, 'token') });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const drv = spawn(path.join(BUILD, 'examples', 'minimal-driver'), ['node-1', kc, root.dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  drv.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => drv.on('exit', (code) => resolve(code)));
  const sim = new KubeletSim({ registryDir: root.registry }).start();
  t.after(async () => { drv.kill('SIGKILL'); await sim.stop(); await emu.stop(); root.cleanup(); });
  await sim.waitForDriver(DRIVER, 15000);
  const slices = await until(() => {
    const s = emu.getSlices({ fieldSelector: `spec.driver=${DRIVER}` });
    return s.length === 1 ? s : null;
  }, 15000, 100);
  assert.equal(slices[0].spec.devices[0].name, 'dev-0');
  const c = { namespace: 'default', name: 'c', uid: randomUUID() };
  emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: 'node-1', device: 'dev-0' }] } });
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.deepEqual(res.claims[c.uid].devices[0].cdi_device_ids || res.claims[c.uid].devices[0].cdiDeviceIds, [`${DRIVER}/dev=dev-0`]);
  await sim.nodeUnprepareResources(DRIVER, [c]);
  drv.kill('SIGTERM');
  assert.equal(await exited, 0, stderr);
});

test('the minimal driver exits non-zero when its plugin stops on its own: a second instance on the same kubelet dir', { timeout: 60000 }, async (t) => {
  const fs = require('node:fs');
  const { spawn } = require('node:child_process');
  const { KubeletSim } = require('../kubelet-sim');
  const { startEmulator, kubeconfig } = require('../apiserver-emu');
  const { makeRoot } = require('./lib/plugin');
  const DRIVER = 'minimal.example.com';
  const root = makeRoot(DRIVER);
  const emu = await startEmulator({ versions: ['v1'], nodes: ['node-1'], tokenFile: path.join(root.dir, 'token') });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const run = () => {
    const proc = spawn(path.join(BUILD, 'examples', 'minimal-driver'), ['node-1', kc, root.dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    const d = { proc, stderr: '' };
    proc.stderr.on('data', (b) => { d.stderr += b; });
    d.exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
    return d;
  };
  const sim = new KubeletSim({ registryDir: root.registry }).start();
  const first = run();
  let second = null;
  t.after(async () => {
    for (const d of [first, second]) if (d) d.proc.kill('SIGKILL');
    await sim.stop(); await emu.stop(); root.cleanup();
  });
  await sim.waitForDriver(DRIVER, 15000);
  second = run();
  const { code, signal } = await first.exited;
  assert.equal(signal, null, first.stderr);
  assert.notEqual(code, 0, first.stderr);
  assert.match(first.stderr, /minimal-driver: the plugin stopped: .*another live instance serves there; stepping aside/, first.stderr);
});
