'use strict';
// The sandbox of each process (policy/): what /proc shows of it, what a
// forbidden syscall does (in the nodeserver's hooks: EPERM, logged and
// named in the claim's error, no restart; in strict mode and in the
// registrar: SIGSYS, logged with its name and the role, the child
// restarts), what the processes cannot reach, complain mode, the OCI
// profile, and a concurrent stress run with no violation.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { execFileSync, spawn } = require('node:child_process');
const { KubeletSim } = require('../kubelet-sim');
const { makeRoot, TestDriver, roles, until, procStatus, BUILD, TOKEN_DIR, testTokenDir } = require('./lib/plugin');
const { stress } = require('./stress');
const { startEmulator, kubeconfig } = require('../apiserver-emu');

const DRIVER = 'test.example.com';
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });
const CAP_NET_ADMIN = 12;

async function setup(t, { args = [], env = {}, simOpts = {}, cwd } = {}) {
  const root = makeRoot(DRIVER);
  const drv = new TestDriver(root, args, { env, cwd });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100, ...simOpts }).start();
  t.after(() => sim.stop());
  return { root, drv, sim };
}

const capMask = (n) => (1n << BigInt(n)).toString(16).padStart(16, '0');

// Waits for role's pid to change; returns the new pid.
async function restarted(drv, role, before) {
  const now = await until(() => {
    const r = roles(drv.proc.pid);
    return r[role] && r[role] !== before ? r : null;
  }, 15000);
  return now[role];
}

// The error of claim c, which the hook fails (kubelet's message names it).
async function claimError(sim, c) {
  const err = await sim.nodePrepareResources(DRIVER, [c], { timeoutMs: 10000 }).then(() => null, (e) => e);
  assert.ok(err && err.response, `expected a failed claim, got ${err}`);
  assert.match(err.message, new RegExp(`failed for claim default/${c.name}: `));
  return err.response.claims[c.uid].error;
}

async function prepareOk(sim, name) {
  const c = claim(name);
  const res = await until(() => sim.nodePrepareResources(DRIVER, [c], { timeoutMs: 10000 })
    .then((x) => x, () => null), 15000, 200);
  assert.equal(res.claims[c.uid].devices[0].device_name, name);
}

test('each child: capabilities as declared, NoNewPrivs, seccomp filter; registrar in an empty root as its own uid', async (t) => {
  const { drv, sim } = await setup(t, { args: ['--sandbox-cap', 'CAP_NET_ADMIN'] });
  await sim.waitForDriver(DRIVER);
  const r = roles(drv.proc.pid);
  const ns = procStatus(r.nodeserver);
  assert.equal(ns.CapEff, capMask(CAP_NET_ADMIN));
  assert.equal(ns.CapPrm, capMask(CAP_NET_ADMIN));
  assert.equal(ns.CapBnd, capMask(CAP_NET_ADMIN));
  assert.equal(ns.CapAmb, '0000000000000000');
  assert.equal(ns.NoNewPrivs, '1');
  assert.equal(ns.Seccomp, '2');
  const reg = procStatus(r.registrar);
  for (const k of ['CapEff', 'CapPrm', 'CapBnd', 'CapInh', 'CapAmb']) assert.equal(reg[k], '0000000000000000', k);
  assert.equal(reg.NoNewPrivs, '1');
  assert.equal(reg.Seccomp, '2');
  const [ruid, euid, suid] = reg.Uid.split(/\s+/).map(Number);
  assert.ok(ruid !== 0 && euid !== 0 && suid !== 0, `registrar uid ${reg.Uid}`);
  const rootLink = fs.readlinkSync(`/proc/${r.registrar}/root`);
  assert.match(rootLink, /kp-empty-\w+ \(deleted\)$/);
  assert.deepEqual(fs.readdirSync(`/proc/${r.registrar}/root/`), []);
  // The supervisor has a filter of its own too (the next test).
  assert.equal(procStatus(r.supervisor).Seccomp, '2');
  // Serving works inside all of it.
  await prepareOk(sim, 'inside');
});

// What the supervisor keeps (policy/caps.c sup_caps; docs/security.md):
// CHOWN, KILL, SETGID, SETUID, SETPCAP, SYS_CHROOT, SYS_ADMIN.
const SUP_CAPS = [0, 5, 6, 7, 8, 18, 21];
const capSet = (caps) => caps.reduce((m, c) => m | (1n << BigInt(c)), 0n).toString(16).padStart(16, '0');

test('the supervisor keeps only its documented capabilities (bounding set too; a declared one permitted only, for the nodeserver), NoNewPrivs, a seccomp filter of its own; restarts still work', { skip: process.getuid() !== 0 && 'needs root' }, async (t) => {
  const { drv, sim } = await setup(t, { args: ['--sandbox-cap', 'CAP_NET_ADMIN'] });
  await sim.waitForDriver(DRIVER);
  const r = roles(drv.proc.pid);
  const s = procStatus(r.supervisor);
  assert.equal(s.CapEff, capSet(SUP_CAPS));
  assert.equal(s.CapPrm, capSet([...SUP_CAPS, CAP_NET_ADMIN]));
  assert.equal(s.CapBnd, capSet([...SUP_CAPS, CAP_NET_ADMIN]));
  assert.equal(s.CapInh, '0000000000000000');
  assert.equal(s.CapAmb, '0000000000000000');
  assert.equal(s.NoNewPrivs, '1');
  assert.equal(s.Seccomp, '2');
  assert.equal(s.Seccomp_filters, '1');
  assert.equal(fs.readlinkSync(`/proc/${r.supervisor}/cwd`), '/');
  // The nodeserver still gets the declared capability, and a restarted
  // one too: the fork, namespaces and drop all run under the filter.
  assert.equal(procStatus(r.nodeserver).CapEff, capSet([CAP_NET_ADMIN]));
  process.kill(r.nodeserver, 'SIGKILL');
  const ns = await restarted(drv, 'nodeserver', r.nodeserver);
  await prepareOk(sim, 'after-restart');
  const n = procStatus(ns);
  assert.equal(n.CapEff, capSet([CAP_NET_ADMIN]));
  assert.equal(n.Seccomp_filters, '2', 'the supervisor\'s and its own');
  assert.doesNotMatch(drv.stderr, /seccomp denied|killed by seccomp/);
});

test('the broker, which reads every child\'s frames: its own uid (base + 4), no capability in any set, NoNewPrivs, a seccomp filter of its own, not dumpable, a pid namespace of its own; the monitor holds no child\'s channel', { skip: process.getuid() !== 0 && 'needs root' }, async (t) => {
  const { drv, sim } = await setup(t, { args: ['--sandbox-cap', 'CAP_NET_ADMIN'] });
  await sim.waitForDriver(DRIVER);
  const r = roles(drv.proc.pid);
  assert.ok(r.broker, `a kp-broker child of the monitor: ${JSON.stringify(r)}`);
  const b = procStatus(r.broker);
  for (const k of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) assert.equal(b[k], '0000000000000000', k);
  assert.equal(b.NoNewPrivs, '1');
  assert.equal(b.Seccomp, '2');
  assert.equal(b.Seccomp_filters, '1', 'its own: forked before the monitor loads its filter');
  assert.deepEqual(b.Uid.split(/\s+/), ['61004', '61004', '61004', '61004']);
  assert.deepEqual(b.Gid.split(/\s+/), ['61004', '61004', '61004', '61004']);
  assert.equal(b.Groups, '');
  assert.equal(fs.statSync(`/proc/${r.broker}/mem`).uid, 0, 'not dumpable: its /proc files are root\'s');
  assert.equal(b.NSpid.split(/\s+/).pop(), '1', 'pid 1 of a namespace of its own');
  // No uid of the plugin is shared: the broker's is no child's.
  for (const role of ['nodeserver', 'registrar', 'publisher'].filter((x) => r[x])) {
    assert.notEqual(procStatus(r[role]).Uid.split(/\s+/)[0], '61004', role);
  }
  // The monitor never reads a child: each child's channels are
  // socketpairs whose other end only the broker holds. The monitor's
  // sockets: the two listeners and its two channels to the broker.
  // (Not fds 0-2: the test's stdio pipes are sockets under node.)
  const inodes = (pid) => fs.readdirSync(`/proc/${pid}/fd`).filter((f) => Number(f) > 2).map((f) => {
    try { return fs.readlinkSync(`/proc/${pid}/fd/${f}`); } catch { return ''; }
  }).filter((l) => l.startsWith('socket:'));
  assert.ok(inodes(r.supervisor).length <= 4, `monitor sockets: ${inodes(r.supervisor)}`);
  // The broker drives restarts through the monitor: still working.
  process.kill(r.nodeserver, 'SIGKILL');
  await restarted(drv, 'nodeserver', r.nodeserver);
  await prepareOk(sim, 'after-broker-restart');
  assert.doesNotMatch(drv.stderr, /seccomp violation|killed by seccomp|protocol violation/);
});

test('the nodeserver\'s init hook runs under the supervisor\'s filter: add_key, bpf, perf_event_open, init_module ... get EPERM though it is root with CAP_SYS_ADMIN, each named in the log; the plugin serves', { skip: process.getuid() !== 0 && 'needs root' }, async (t) => {
  const root = makeRoot(DRIVER);
  const probes = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-init-'));
  fs.chmodSync(probes, 0o755);
  fs.writeFileSync(path.join(probes, 'init'), 'dangerous\n');
  const drv = new TestDriver(root, ['--read-path', probes],
    { binary: path.join(BUILD, 'tests', 'kp_attack'), env: { KP_ATTACK_DIR: probes } });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    fs.rmSync(probes, { recursive: true, force: true });
    root.cleanup();
  });
  await drv.ready();
  await drv.stderrMatch(/attack-init: add_key=/);
  const line = drv.stderr.match(/attack-init: (add_key=.*)/)[1];
  const got = Object.fromEntries(line.split(' ').map((kv) => kv.split('=')));
  assert.equal(Object.keys(got).length, 13, line);
  for (const [call, res] of Object.entries(got)) assert.equal(res, 'EPERM', `${call}: ${line}`);
  // add_key needs no capability and bpf's BPF_MAP_CREATE only
  // CAP_SYS_ADMIN, which the init hook has: the filter refused them
  // (a hook call records its first 8 denials, policy/sigsys.c).
  for (const call of ['add_key', 'keyctl', 'bpf', 'perf_event_open']) {
    assert.match(drv.stderr, new RegExp(`nodeserver\\] init hook: sandbox denied ${call} \\(EPERM\\): the supervisor's filter`));
  }
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  await prepareOk(sim, 'after-init');
});

// Each: the probe claim, the syscall the sandbox sees, the hook's errno text.
const DENIALS = [['socket', 'syscall-socket', 'socket', 'socket: Operation not permitted'],
  ['ptrace', 'syscall-ptrace', 'ptrace', 'ptrace: Operation not permitted'],
  ['fork', 'fork', 'clone', 'fork: Operation not permitted'],
  ['execve', 'syscall-execve', 'execve', 'execve: Operation not permitted']];

for (const [what, name, sys, text] of DENIALS) {
  test(`a prepare hook calling ${what} gets EPERM: the claim error names ${sys}, the nodeserver lives`, async (t) => {
    const { drv, sim } = await setup(t);
    await sim.waitForDriver(DRIVER);
    const before = roles(drv.proc.pid).nodeserver;
    for (let i = 0; i < 2; i++) {
      assert.equal(await claimError(sim, claim(name)), `${text}; sandbox denied ${sys}`);
    }
    await until(() => new RegExp(`nodeserver\\] prepare hook: sandbox denied ${sys} \\(EPERM\\); ` +
      'add it with kp_sandbox_syscall\\(\\) if the driver needs it').test(drv.stderr));
    // Once per syscall, not per call.
    assert.equal(drv.stderr.split(`prepare hook: sandbox denied ${sys} (EPERM)`).length - 1, 1);
    assert.doesNotMatch(drv.stderr, /killed by seccomp|seccomp violation|a child was created/);
    assert.equal(roles(drv.proc.pid).nodeserver, before, 'not restarted');
    await prepareOk(sim, 'after');
  });
}

test('a hook cannot make a pipe signal another process: F_SETOWN and F_SETSIG are EPERM, the target lives', async (t) => {
  const target = spawn('sleep', ['300'], { stdio: 'ignore' });
  const gone = new Promise((resolve) => target.on('exit', (code, sig) => resolve(sig || code)));
  t.after(() => target.kill('SIGKILL'));
  const { drv, sim } = await setup(t, { env: { KP_TEST_SIGNAL_PID: String(target.pid) } });
  await sim.waitForDriver(DRIVER);
  const before = roles(drv.proc.pid).nodeserver;
  // O_ASYNC is allowed: with no owner set, the write signals nobody.
  assert.equal(await claimError(sim, claim('fcntl-signal')), 'fcntl: F_SETOWN Operation not permitted, F_SETSIG Operation not ' +
    'permitted, O_ASYNC Success, write 1; sandbox denied fcntl');
  const r = await Promise.race([gone, new Promise((resolve) => setTimeout(() => resolve('alive'), 1000))]);
  assert.equal(r, 'alive');
  assert.equal(roles(drv.proc.pid).nodeserver, before, 'not restarted');
  await drv.stderrMatch(/prepare hook: sandbox denied fcntl \(EPERM\)/);
});

test('a denial on a thread outside a hook call is logged once, the nodeserver lives', async (t) => {
  const { drv, sim } = await setup(t);
  await sim.waitForDriver(DRIVER);
  const before = roles(drv.proc.pid).nodeserver;
  for (let i = 0; i < 2; i++) {
    assert.equal(await claimError(sim, claim('thread-syscall-getppid')), 'thread: getppid: Operation not permitted');
  }
  await until(() => /nodeserver\] sandbox denied getppid \(EPERM\) outside a hook call/.test(drv.stderr));
  assert.equal(drv.stderr.split('sandbox denied getppid (EPERM) outside a hook call').length - 1, 1);
  assert.doesNotMatch(drv.stderr, /prepare hook: sandbox denied getppid/);
  assert.equal(roles(drv.proc.pid).nodeserver, before, 'not restarted');
});

for (const [what, name, sys] of [['socket', 'syscall-socket', 'socket'], ['fork', 'fork', 'clone']]) {
  test(`strict mode: the nodeserver calling ${what} dies of SIGSYS, is named in the log and restarts`, async (t) => {
    const { drv, sim } = await setup(t, { args: ['--sandbox-mode', 'strict'] });
    await sim.waitForDriver(DRIVER);
    const before = roles(drv.proc.pid).nodeserver;
    await assert.rejects(sim.nodePrepareResources(DRIVER, [claim(name)], { timeoutMs: 10000 }));
    await until(() => new RegExp(`nodeserver\\] nodeserver killed by seccomp: ${sys}\\b`).test(drv.stderr));
    await drv.stderrMatch(new RegExp(`kp-nodeserver: seccomp violation: ${sys}\\b`));
    await until(() => /broker\] nodeserver killed by seccomp \(SIGSYS\)/.test(drv.stderr));
    assert.doesNotMatch(drv.stderr, /a child was created|sandbox denied/);
    await restarted(drv, 'nodeserver', before);
    await prepareOk(sim, 'after');
  });
}

for (const sys of ['ptrace', 'fork', 'socket', 'connect']) {
  test(`the registrar calling ${sys} dies of SIGSYS, is named in the log and restarts`, async (t) => {
    const { drv, sim } = await setup(t, { args: ['--interceptors'], env: { KP_TEST_REGISTRAR_SYSCALL: sys } });
    const before = roles(drv.proc.pid).registrar;
    await until(() => new RegExp(`registrar\\] registrar killed by seccomp: ${sys}\\b`).test(drv.stderr));
    await drv.stderrMatch(new RegExp(`kp-registrar: seccomp violation: ${sys}\\b`));
    assert.doesNotMatch(drv.stderr, new RegExp(`probe: registrar: ${sys} returned`));
    await restarted(drv, 'registrar', before);
    // The nodeserver is unaffected and keeps serving.
    const c = claim('next');
    const d = await until(() => {
      const r = roles(drv.proc.pid);
      return r.nodeserver ? r : null;
    });
    assert.ok(d.supervisor);
    const res = await sim.callRaw(path.join(sim.options.registryDir, '..', 'plugins', DRIVER, 'dra.sock'),
      '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources',
      require('../kubelet-sim').proto.encode(require('../kubelet-sim').proto.typeName('v1', 'NodePrepareResourcesRequest'), { claims: [c] }),
      5000);
    assert.equal(res.code, 0);
  });
}

// libcurl answers "localhost" itself; a name from /etc/hosts (this host's,
// when it maps to 127.0.0.1) goes through glibc's getaddrinfo, whose nscd
// probe (AF_UNIX) the publisher's filter refuses with EACCES.
async function hostsName() {
  const r = await require('node:dns').promises.lookup(os.hostname(), { family: 4 }).catch(() => null);
  return r && r.address === '127.0.0.1' ? os.hostname() : null;
}

test('the sandboxed publisher reaches the API server by name (localhost, /etc/hosts)', async (t) => {
  for (const name of ['localhost', await hostsName()]) {
    if (name === null) {
      t.diagnostic('this host name does not map to 127.0.0.1: /etc/hosts case skipped');
      continue;
    }
    await t.test(name, async (t2) => {
      const root = makeRoot(DRIVER);
      const emu = await startEmulator({ nodes: ['node-a'], tokenFile: path.join(root.dir, 'token') });
      fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
      const kc = path.join(root.dir, 'kubeconfig');
      const url = new URL(emu.url);
      assert.equal(url.hostname, '127.0.0.1');
      url.hostname = name;
      // The emulator's certificate names 127.0.0.1 and localhost.
      fs.writeFileSync(kc, kubeconfig({ server: url.toString().replace(/\/$/, '') })
        .replace(/^(\s+)server: .*$/m, (l, sp) => `${l}\n${sp}tls-server-name: localhost`));
      const drv = new TestDriver(root, ['--kubeconfig', kc, '--node-name', 'node-a']);
      t2.after(async () => {
        drv.kill();
        await drv.exited;
        await emu.stop();
        root.cleanup();
      });
      await drv.ready();
      const l = await drv.command('publish 3 1 a', 'publish ');
      assert.match(l, /^publish KP_OK/, l);
      await until(() => emu.getSlices({}).length === 1, 15000, 100);
      assert.doesNotMatch(drv.stderr, /killed by seccomp|seccomp violation|sandbox denied/);
    });
  }
});

test('a kubeconfig in a directory others cannot search: the publisher\'s Landlock error says why', { skip: process.getuid() !== 0 && 'needs root' }, async (t) => {
  const root = makeRoot(DRIVER);
  // The credentials' own directory is open; the one above it is not.
  const priv = path.join(root.dir, 'private', 'creds');
  fs.mkdirSync(priv, { recursive: true, mode: 0o755 });
  fs.chmodSync(path.dirname(priv), 0o700);
  const emu = await startEmulator({ nodes: ['node-a'], tokenFile: path.join(priv, 'token') });
  fs.copyFileSync(emu.caFile, path.join(priv, 'ca.crt'));
  const kc = path.join(priv, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const drv = new TestDriver(root, ['--kubeconfig', kc, '--node-name', 'node-a']);
  t.after(async () => {
    drv.kill();
    await drv.exited;
    await emu.stop();
    root.cleanup();
  });
  const l = await drv.line(['ready', 'error'], 20000);
  assert.match(l, /Landlock: \S+\/private\/creds: Permission denied \(the publisher runs as uid \d+: every directory above it must be searchable by others\)/);
});

test('the registrar cannot open /etc/passwd', async (t) => {
  const { drv, sim } = await setup(t, { args: ['--interceptors'], env: { KP_TEST_REGISTRAR_OPEN: '/etc/passwd' } });
  await sim.waitForDriver(DRIVER);
  await until(() => /probe: registrar open \/etc\/passwd: /.test(drv.stderr));
  await drv.stderrMatch(/probe: registrar open \/etc\/passwd: Permission denied/);
  assert.doesNotMatch(drv.stderr, /killed by seccomp/);
});

test('the nodeserver cannot read the token directory or a hidden path', async (t) => {
  // A service-account token where the pod would have it (created for the
  // test when the machine has none; a real one is used as it is) and a
  // driver-hidden directory.
  await testTokenDir(t);
  // Readable by every uid (the nodeserver has its own): what fails then
  // fails because it is hidden, not because of the permissions.
  const hidden = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-hidden-'));
  fs.writeFileSync(path.join(hidden, 'key'), 'private', { mode: 0o644 });
  const visible = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-visible-'));
  fs.writeFileSync(path.join(visible, 'data'), 'public', { mode: 0o644 });
  fs.chmodSync(hidden, 0o755);
  fs.chmodSync(visible, 0o755);
  t.after(() => { fs.rmSync(hidden, { recursive: true }); fs.rmSync(visible, { recursive: true }); });

  // An empty tmpfs of mode 0: EACCES (ENOENT with CAP_DAC_OVERRIDE).
  const gone = /: (Permission denied|No such file or directory)$/;
  for (const [file, expect] of [[path.join(TOKEN_DIR, 'token'), gone],
    [path.join(hidden, 'key'), gone], [path.join(visible, 'data'), /ok, read 6 bytes/]]) {
    await t.test(file, async (t2) => {
      // The visible directory is a declared read path: Landlock lets
      // the hooks read nothing else outside the default read set.
      const { sim } = await setup(t2, { args: ['--hide-path', hidden, '--read-path', visible], env: { KP_TEST_OPEN_PATH: file } });
      await sim.waitForDriver(DRIVER);
      await assert.rejects(sim.nodePrepareResources(DRIVER, [claim('open-x')]), expect);
    });
  }
  assert.equal(fs.readFileSync(path.join(hidden, 'key'), 'utf8'), 'private', 'host view unchanged');
});

// A mount over a directory does not move a process already in it: a
// driver started in a directory it hides would reach it by relative paths
// from its hooks, had the nodeserver kept the driver's working directory.
// The directory lies beneath a declared read path, so that Landlock
// (which would refuse the relative path on its own) is not what refuses.
test('a hook cannot read a hidden directory by relative paths from the driver\'s working directory', async (t) => {
  const outer = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-cwd-'));
  const hidden = path.join(outer, 'hidden');
  fs.mkdirSync(hidden);
  fs.writeFileSync(path.join(hidden, 'key'), 'private', { mode: 0o644 });
  fs.chmodSync(outer, 0o755);
  fs.chmodSync(hidden, 0o755);
  t.after(() => fs.rmSync(outer, { recursive: true }));
  // The driver started in the hidden directory; an init hook that moves
  // there (before the sandbox, with the plugin's privileges).
  for (const [how, opts] of [['started there', { cwd: hidden }], ['the init hook\'s chdir', { env: { KP_TEST_INIT_PROBE: `chdir:${hidden}` } }]]) {
    await t.test(how, async (t2) => {
      const { drv, sim } = await setup(t2, { args: ['--hide-path', hidden, '--read-path', outer], ...opts, env: { KP_TEST_OPEN_PATH: 'key', ...opts.env } });
      if (opts.env) await drv.stderrMatch(new RegExp(`init probe: chdir ${hidden}: ok`));
      await sim.waitForDriver(DRIVER);
      // Relative to "/" now: no such file.
      await assert.rejects(sim.nodePrepareResources(DRIVER, [claim('open-cwd')]), /open key: No such file or directory/);
    });
  }
});

test('complain mode logs a syscall outside the allowlist and keeps running', async (t) => {
  const { drv, sim } = await setup(t, { args: ['--sandbox-mode', 'complain'] });
  await sim.waitForDriver(DRIVER);
  const before = roles(drv.proc.pid).nodeserver;
  assert.equal(procStatus(before).Seccomp, '2');
  const c = claim('syscall-getppid');
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].devices[0].device_name, 'syscall-getppid');
  await until(() => /complain mode: nodeserver made a syscall outside its allowlist: getppid/.test(drv.stderr));
  // 0: the parent (the supervisor) is outside the nodeserver's pid
  // namespace (tests/e2e/isolation.test.js).
  await drv.stderrMatch(/probe: nodeserver: getppid returned 0 /);
  assert.equal(roles(drv.proc.pid).nodeserver, before, 'not restarted');
  assert.doesNotMatch(drv.stderr, /killed by seccomp/);
});

test('a driver-listed syscall is allowed; unknown names fail at set time', async (t) => {
  const { drv, sim } = await setup(t, { args: ['--sandbox-syscall', 'getppid'] });
  await sim.waitForDriver(DRIVER);
  await prepareOk(sim, 'syscall-getppid');
  await drv.stderrMatch(/probe: nodeserver: getppid returned 0 /);
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const bad = new TestDriver(root, ['--sandbox-syscall', 'no_such_call']);
  const l = await bad.line(['ready', 'error']);
  await bad.exited;
  assert.match(l, /^error KP_EINVAL kp_sandbox_syscall .*"no_such_call" is not a system call/);
});

test('off mode is loudly logged and loads no filter', async (t) => {
  const { drv, sim } = await setup(t, { args: ['--sandbox-mode', 'off'] });
  await sim.waitForDriver(DRIVER);
  const r = roles(drv.proc.pid);
  assert.equal(procStatus(r.nodeserver).Seccomp, '0');
  assert.equal(procStatus(r.nodeserver).NoNewPrivs, '1');
  await drv.stderrMatch(/SANDBOX OFF: no seccomp filter in the nodeserver/);
  await drv.stderrMatch(/SANDBOX OFF: no seccomp filter in the registrar/);
});

test('the OCI profile parses and names the allowlists', () => {
  const out = execFileSync(path.join(BUILD, 'tools', 'kubeletplugin-policy'), ['-s', 'getppid']).toString();
  const p = JSON.parse(out);
  assert.equal(p.defaultAction, 'SCMP_ACT_ERRNO');
  const allowed = new Set(p.syscalls.filter((s) => s.action === 'SCMP_ACT_ALLOW').flatMap((s) => s.names));
  for (const n of ['accept4', 'epoll_wait', 'futex', 'openat', 'connect', 'clone', 'wait4', 'getppid']) {
    assert.ok(allowed.has(n), n);
  }
  const clone3 = p.syscalls.find((s) => s.names.includes('clone3'));
  assert.equal(clone3.action, 'SCMP_ACT_ERRNO');
  assert.equal(clone3.errnoRet, 38);
  assert.ok(!allowed.has('ptrace') && !allowed.has('kexec_load'));
});

test('kubeletplugin-policy names its -s flag, not the C setter, for an unknown syscall', () => {
  const r = require('node:child_process').spawnSync(path.join(BUILD, 'tools', 'kubeletplugin-policy'),
    ['-s', 'bogus_call'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'kubeletplugin-policy: -s (--syscall): "bogus_call" is not a system call on this architecture\n');
});

test('stress: 8 clients, 10 000 calls, enforce mode, no violation', async (t) => {
  // 8 clients and the sim's own connection: above the default cap of 8
  // connections per socket, which is sized for kubelet (connections.test.js).
  const { drv, root, sim } = await setup(t, { args: ['--workers', '4', '-v', '0', '--grpc-verbosity', '-1',
    '--max-connections', '16'] });
  await sim.waitForDriver(DRIVER);
  const before = roles(drv.proc.pid);
  const s = await stress({ draSock: root.draSock, regSock: root.regSock, clients: 8, calls: 10000 });
  assert.equal(s.failed, 0, JSON.stringify(s));
  assert.equal(s.ok, 10000);
  assert.doesNotMatch(drv.stderr, /seccomp/);
  const after = roles(drv.proc.pid);
  assert.equal(after.nodeserver, before.nodeserver);
  assert.equal(after.registrar, before.registrar);
  t.diagnostic(`10000 calls in ${s.ms} ms`);
});
