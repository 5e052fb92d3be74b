'use strict';
// Red team (issue 24 follow-up): credential directories reached through a
// symbolic link into another directory. The publisher reported, for each
// credential file, the directory as named and the directory of its real
// path; a file named through a link into a projected volume
// (<vol>/token -> ..data/token, ..data -> ..<timestamp>) left <vol> itself
// uncovered, so once kubelet swapped ..data to a new timestamped
// directory (every token refresh) the nodeserver read the new token
// through <vol>/token. Landlock off here (kp_nosys, as isolation.test.js):
// what must refuse is the mount namespace.
// Run as root.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { startEmulator, kubeconfig } = require('../apiserver-emu');
const { makeRoot, TestDriver, TESTDRIVER, BUILD, until, childLines, isolationProbe } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const NODE = 'node-1';
const skip = process.getuid() === 0 ? false : 'needs root (uids, namespaces)';
const NOSYS_LANDLOCK = [path.join(BUILD, 'tests', 'kp_nosys'), 'landlock_create_ruleset,landlock_add_rule,landlock_restrict_self'];

const probe = async (drv, sim, emu) => (await isolationProbe(drv, sim, emu, DRIVER, NODE))
  .filter(([what]) => what === 'read').map(([, rest]) => rest);

// A projected volume as kubelet's atomic writer lays it out.
function projected(dir, stamp, token) {
  fs.mkdirSync(path.join(dir, stamp), { mode: 0o755 });
  fs.writeFileSync(path.join(dir, stamp, 'token'), token, { mode: 0o644 });
  fs.symlinkSync(stamp, path.join(dir, '..data_tmp'));
  fs.renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
}

test('RED TEAM: a token file named through a link into a projected volume stays hidden after kubelet swaps ..data (without Landlock)', { skip }, async (t) => {
  const root = makeRoot(DRIVER);
  const vol = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-projected-'));
  fs.chmodSync(vol, 0o755);
  t.after(() => fs.rmSync(vol, { recursive: true, force: true }));
  projected(vol, '..2024_01_01_00_00_00.1', 'placeholder\n');
  fs.symlinkSync('..data/token', path.join(vol, 'token'));
  // The kubeconfig names <root>/token, a link to the volume's token.
  fs.symlinkSync(path.join(vol, 'token'), path.join(root.dir, 'token'));
  const emu = await startEmulator({ versions: ['v1'], nodes: [NODE], tokenFile: path.join(root.dir, 'token') });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const drv = new TestDriver(root, ['--kubeconfig', kc, '--node-name', NODE], {
    env: { KP_TEST_READ: path.join(vol, 'token') }, binary: NOSYS_LANDLOCK[0], prefixArgs: [...NOSYS_LANDLOCK.slice(1), TESTDRIVER],
  });
  t.after(async () => { drv.kill(); await drv.exited; await emu.stop(); root.cleanup(); });
  await drv.ready();
  await drv.stderrMatch(/sandbox: no Landlock in this kernel/);
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);

  const before = await probe(drv, sim, emu);
  assert.match(before.find((l) => l.startsWith(`${vol}/token `)), /(No such file or directory|Permission denied)$/, 'hidden at start');

  // kubelet refreshes the token: a new timestamped directory, ..data
  // swapped to it, the old one removed.
  const token = fs.readFileSync(path.join(vol, 'token'));
  projected(vol, '..2024_01_01_01_00_00.2', token);
  fs.rmSync(path.join(vol, '..2024_01_01_00_00_00.1'), { recursive: true });
  const after = await probe(drv, sim, emu);
  const line = after.find((l) => l.startsWith(`${vol}/token `));
  assert.ok(line, 'the probe read the volume\'s token');
  assert.match(line, /(No such file or directory|Permission denied)$/, `after the refresh: ${line}`);
});

// The state directory is the nodeserver's (fchown'ed to it), so a
// compromised nodeserver may chmod it; the supervisor refused a group- or
// world-writable state directory at every start, so one chmod made every
// later kp_start() fail (pod restarts, a fixed driver version too) until
// an administrator repaired it by hand. A mode the nodeserver set is now
// taken back (0700, warned); a root-owned one stays refused.
test('RED TEAM: a nodeserver that makes its state directory world-writable cannot stop every later start', { skip }, async (t) => {
  const { spawnSync } = require('node:child_process');
  const { IDS } = require('./lib/plugin');
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const state = path.join(root.dir, 'state');
  const args = ['--state-dir', state, '--cdi-dir', path.join(root.dir, 'cdi')];
  const start = async () => {
    const d = new TestDriver(root, args);
    const l = await d.line(['ready', 'error']);
    d.kill();
    await d.exited;
    return [l, d.stderr];
  };
  assert.match((await start())[0], /^ready/);
  assert.equal(fs.statSync(state).uid, IDS.nodeserver, 'handed to the nodeserver');
  // What the nodeserver's uid can do to its own directory.
  const r = spawnSync('setpriv', [`--reuid=${IDS.nodeserver}`, `--regid=${IDS.nodeserver}`, '--clear-groups', 'chmod', '0777', state]);
  assert.equal(r.status, 0, String(r.stderr));
  assert.equal(fs.statSync(state).mode & 0o777, 0o777);
  const [l, err] = await start();
  assert.match(l, /^ready/, 'the next start still works');
  assert.match(err, /state directory .*state: mode 777 set by the nodeserver, made 0700/);
  assert.equal(fs.statSync(state).mode & 0o777, 0o700);
  // An administrator's group-writable directory, root's: still refused.
  const gw = path.join(root.dir, 'gw');
  fs.mkdirSync(gw);
  fs.chmodSync(gw, 0o770);
  const d = new TestDriver(root, ['--state-dir', gw, '--cdi-dir', path.join(root.dir, 'cdi')]);
  const l2 = await d.line(['ready', 'error']);
  d.kill();
  await d.exited;
  assert.match(l2, /^error KP_E.*group- or world-writable \(mode 770\)/);
});
