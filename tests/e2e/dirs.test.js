'use strict';
// End-to-end tests of the directory options (issue 11): socket paths
// derived from the kubelet root and the driver name as upstream v0.33+,
// directories created or reported by path and option, endpoints outside
// the kubelet root refused, a live socket replaced with a warning (one a
// plugin of the same process serves refused), and
// Kubernetes access without a node name refused at once.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { KubeletSim } = require('../kubelet-sim');
const { makeRoot, TestDriver, until } = require('./lib/plugin');

const DRIVER = 'test.example.com';

function start(t, root, args, opts = {}) {
  const drv = new TestDriver(root, args, { paths: false, ...opts });
  t.after(async () => {
    drv.kill();
    await drv.exited;
  });
  return drv;
}

test('no socket option: the defaults under the kubelet root; the data directory is created 0750', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  fs.rmSync(path.dirname(root.draSock), { recursive: true });
  const drv = start(t, root, ['--kubelet-root-dir', root.dir]);
  await drv.ready();
  assert.ok(fs.lstatSync(root.regSock).isSocket(), 'plugins_registry/<driver>-reg.sock');
  assert.ok(fs.lstatSync(root.draSock).isSocket(), 'plugins/<driver>/dra.sock');
  assert.equal(fs.statSync(path.dirname(root.draSock)).mode & 0o777, 0o750);
  const sim = new KubeletSim({ registryDir: root.registry, version: '1.37', retryInitialMs: 100, healthStream: false }).start();
  t.after(() => sim.stop());
  const d = await sim.waitForDriver(DRIVER);
  assert.equal(d.endpoint, root.draSock);
  const st = await drv.stop();
  assert.equal(st.code, 0);
  assert.ok(!fs.existsSync(root.regSock) && !fs.existsSync(root.draSock), 'kp_stop removed both');
});

test('explicit directories and file names', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const data = path.join(root.dir, 'plugins', 'mine');
  const drv = start(t, root, ['--kubelet-root-dir', root.dir, '--registrar-dir', root.registry,
    '--registrar-file', 'custom-reg.sock', '--plugin-data-dir', data, '--plugin-socket-name', 'x.sock']);
  await drv.ready();
  assert.ok(fs.lstatSync(path.join(root.registry, 'custom-reg.sock')).isSocket());
  assert.ok(fs.lstatSync(path.join(data, 'x.sock')).isSocket());
});

test('a missing registry directory is KP_ENOENT naming the path and the option', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  fs.rmSync(root.registry, { recursive: true });
  const drv = start(t, root, ['--kubelet-root-dir', root.dir]);
  const l = await drv.line(['ready', 'error']);
  assert.match(l, /^error KP_ENOENT kp_registrar_directory_path \(RegistrarDirectoryPath\) \(kubelet creates plugins\/ and plugins_registry\/ on a node: create them, or set kp_kubelet_root_dir\): .*plugins_registry does not exist/);
  assert.ok(!fs.existsSync(root.registry), 'the registry directory is not created');
});

// The supervisor keeps no CAP_DAC_OVERRIDE (docs/security.md): a directory
// it binds sockets or writes specs in must be open to root by its mode, or
// the failure would come long after the start (a re-bind, a spec write).
test('as root, a plugin data or CDI directory handed to another uid fails kp_start naming the option and the rule', { skip: process.getuid() !== 0 && 'needs root' }, async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const data = path.dirname(root.draSock);
  fs.chownSync(data, 61000, 61000);
  fs.chmodSync(data, 0o755);
  const drv = start(t, root, ['--kubelet-root-dir', root.dir]);
  assert.match(await drv.line(['ready', 'error']), /^error KP_EACCES kp_plugin_data_directory_path .* \(uid 61000, mode 755\) must be writable by root through its mode: the supervisor keeps no CAP_DAC_OVERRIDE/);
  fs.chownSync(data, 0, 0);
  const cdi = path.join(root.dir, 'cdi');
  fs.mkdirSync(cdi);
  fs.chownSync(cdi, 61000, 61000);
  const drv2 = start(t, root, ['--kubelet-root-dir', root.dir, '--cdi-dir', cdi]);
  assert.match(await drv2.line(['ready', 'error']), /^error KP_EACCES kp_cdi_directory: CDI directory .*cdi \(uid 61000, mode 755\) must be writable by root through its mode/);
});

test('the data directory with a missing parent is KP_ENOENT', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const drv = start(t, root, ['--kubelet-root-dir', root.dir, '--plugin-data-dir', path.join(root.dir, 'no', 'such')]);
  const l = await drv.line(['ready', 'error']);
  assert.match(l, /^error KP_ENOENT kp_plugin_data_directory_path \(PluginDataDirectoryPath\) \(kubelet creates .*\): .*no\/such does not exist, nor does its parent/);
});

test('a long missing path still leaves the advice whole', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  // As long as a plugin directory may be (its socket fits in sun_path).
  const deep = path.join(root.dir, 'x'.repeat(40), 'y'.repeat(90 - root.dir.length - 42));
  const drv = start(t, root, ['--kubelet-root-dir', root.dir, '--plugin-data-dir', deep]);
  const l = await drv.line(['ready', 'error']);
  assert.match(l, /^error KP_ENOENT kp_plugin_data_directory_path \(PluginDataDirectoryPath\) \(kubelet creates plugins\/ and plugins_registry\/ on a node: create them, or set kp_kubelet_root_dir\): /);
});

test('an endpoint outside the kubelet root and over-long paths are refused at set time', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  let drv = start(t, root, ['--kubelet-root-dir', root.dir, '--plugin-data-dir', '/run/elsewhere']);
  assert.match(await drv.line(['ready', 'error']), /must be inside the kubelet root directory \(kp_kubelet_root_dir; kubelets 1\.37\+ refuse other endpoints\): "\/run\/elsewhere" is not inside/);
  drv = start(t, root, ['--plugin-data-dir', '/run/elsewhere', '--kubelet-root-dir', root.dir]);
  assert.match(await drv.line(['ready', 'error']), /does not contain the plugin data directory/);
  drv = start(t, root, ['--plugin-data-dir', `/${'d'.repeat(100)}`]);
  assert.match(await drv.line(['ready', 'error']), /a socket path of 110 bytes, at most 107 fit in sun_path; use a shorter directory: .*dra\.sock/);
  drv = start(t, root, ['--plugin-socket-name', '.hidden']);
  assert.match(await drv.line(['ready', 'error']), /must not start with '\.'/);
});

test('Kubernetes access without a node name fails kp_start at once, naming the option', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const drv = new TestDriver(root, ['--kubeconfig', '/nonexistent/kubeconfig']);
  t.after(async () => { drv.kill(); await drv.exited; });
  assert.match(await drv.line(['ready', 'error']), /^error KP_EINVAL kp_node_name \(NodeName\): must be set when Kubernetes access is configured/);
});

test('replacing a live socket (another instance serving) is warned about', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const first = start(t, root, ['--kubelet-root-dir', root.dir]);
  await first.ready();
  const second = start(t, root, ['--kubelet-root-dir', root.dir]);
  await second.ready();
  await second.stderrMatch(/dra\.sock: replacing a live socket: another instance of this plugin is serving there/);
  await until(() => /reg\.sock: replacing a live socket/.test(second.stderr), 10000);
  assert.doesNotMatch(first.stderr, /replacing a live socket/);
});

// Within one process the same sockets twice is always a mistake: the
// second kp_start() fails before it touches them (the warning above is for
// another process's instance).
test('a second kp_start in the same process on the same sockets fails with KP_EBUSY; the first keeps serving', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const drv = start(t, root, ['--kubelet-root-dir', root.dir, '--start-twice']);
  const second = await drv.line(['second', 'error']);
  assert.match(second, /^second KP_EBUSY kp_plugin_socket_path: already served by a plugin started in this process \(kp_stop\(\) it first\): \S+\/dra\.sock$/);
  await drv.ready();
  const ino = fs.lstatSync(root.draSock).ino;
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100, healthStream: false }).start();
  t.after(() => sim.stop());
  assert.equal((await sim.waitForDriver(DRIVER)).endpoint, root.draSock);
  const c = { namespace: 'default', name: 'twice', uid: require('node:crypto').randomUUID() };
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].devices[0].device_name, 'twice');
  assert.equal(fs.lstatSync(root.draSock).ino, ino, 'the first plugin\'s socket');
  assert.doesNotMatch(drv.stderr, /replacing a live socket/);
  // kp_stop() releases the paths: the same options start again.
  assert.equal(await drv.command('restart', 'restart'), 'restart KP_OK ');
  const res2 = await until(() => sim.nodePrepareResources(DRIVER, [c]).catch(() => null), 15000, 100);
  assert.equal(res2.claims[c.uid].devices[0].device_name, 'twice');
  assert.equal((await drv.stop()).code, 0);
});

// Whoever can write in plugins/ must not make kp_start bind elsewhere.
test('a symbolic link as the DRA socket directory fails kp_start with KP_EINVAL; nothing is bound where it points', async (t) => {
  const root = makeRoot(DRIVER);
  const victim = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'kp-victim-'));
  t.after(() => { root.cleanup(); fs.rmSync(victim, { recursive: true, force: true }); });
  const dir = path.dirname(root.draSock);
  fs.rmSync(dir, { recursive: true });
  fs.symlinkSync(victim, dir);
  const drv = start(t, root, [], { paths: true });
  const l = await drv.line(['ready', 'error']);
  assert.match(l, /^error KP_EINVAL kp_plugin_socket_path: listen on \S+: \S+ is a symbolic link or not a directory/);
  assert.deepEqual(fs.readdirSync(victim), []);
});
