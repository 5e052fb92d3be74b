'use strict';
// Runs build/tests/kp_testdriver (a driver linked against libkubeletplugin)
// for the end-to-end tests, and inspects the process tree it creates.

const net = require('node:net');
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { randomUUID } = require('node:crypto');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const BUILD = path.resolve(ROOT, process.env.KP_BUILD || 'build');
const TESTDRIVER = path.join(BUILD, 'tests', 'kp_testdriver');
const PCI_DRIVER = path.join(BUILD, 'examples', 'pci-driver');
// The red-team driver (tests/e2e/bin/kp_redteam.c, redteam.test.js).
const REDTEAM = path.join(BUILD, 'tests', 'kp_redteam');

// A kubelet-like directory tree: plugins_registry and plugins/<driver>.
function makeRoot(driver = 'test.example.com') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-e2e-'));
  // Open to every uid: the plugin's processes run as their own (the
  // publisher reads its credential files here).
  fs.chmodSync(dir, 0o755);
  const registry = path.join(dir, 'plugins_registry');
  const plugins = path.join(dir, 'plugins', driver);
  fs.mkdirSync(registry, { recursive: true });
  fs.mkdirSync(plugins, { recursive: true });
  return {
    dir,
    driver,
    registry,
    regSock: path.join(registry, `${driver}-reg.sock`),
    draSock: path.join(plugins, 'dra.sock'),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

// The ids the sandboxed processes run as by default when started as root
// (KP_SANDBOX_UID_BASE in include/kubeletplugin.h plus the role's offset).
const UID_BASE = 61000;
const IDS = { nodeserver: UID_BASE, registrar: UID_BASE + 1, publisher: UID_BASE + 2, broker: UID_BASE + 4 };

// Hands directories to the nodeserver's uid, so that a driver's hooks can
// write there (CDI specs, checkpoints). A stand-in, in the tests only,
// for the state directory the library is to prepare itself.
function giveToNodeserver(...dirs) {
  if (process.getuid() !== 0) return;
  for (const d of dirs) {
    fs.mkdirSync(d, { recursive: true });
    fs.chownSync(d, IDS.nodeserver, IDS.nodeserver);
  }
}

// One running test driver. Lines on stdout answer commands; stderr is the
// plugin's log (klog lines of every process).
class TestDriver {
  // paths: false leaves the socket paths to the directory options.
  // cwd: the driver's working directory (default: the test's).
  constructor(root, extraArgs = [], { env = {}, binary = TESTDRIVER, prefixArgs = [], paths = true, cwd } = {}) {
    this.root = root;
    const args = ['--driver-name', root.driver,
      ...(paths ? ['--registrar-socket', root.regSock, '--plugin-socket', root.draSock] : []),
      '-v', '4', ...extraArgs];
    this.proc = spawn(binary, [...prefixArgs, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], cwd });
    this.stderr = '';
    this.lines = [];
    this.waiters = [];
    this.proc.stderr.on('data', (d) => { this.stderr += d.toString(); });
    readline.createInterface({ input: this.proc.stdout }).on('line', (l) => {
      this.lines.push(l);
      this.waiters = this.waiters.filter((w) => !w(l));
    });
    // 'close', not 'exit': stdout and stderr are complete by then. A
    // process left holding the pipes (a plugin child that outlived its
    // driver: a bug the tests then catch elsewhere) must not hang us.
    this.exited = new Promise((resolve) => {
      this.proc.on('close', (code, signal) => resolve({ code, signal }));
      this.proc.on('exit', (code, signal) => setTimeout(() => resolve({ code, signal }), 10000).unref());
    });
  }

  // Resolves with the first stdout line (already seen or future) that
  // starts with one of the prefixes.
  line(prefixes, timeoutMs = 15000) {
    const match = (l) => prefixes.some((p) => l.startsWith(p));
    const seen = this.lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ${prefixes} line; stderr:\n${this.stderr}`)), timeoutMs);
      this.waiters.push((l) => {
        if (!match(l)) return false;
        clearTimeout(t);
        resolve(l);
        return true;
      });
    });
  }

  async ready() {
    const l = await this.line(['ready', 'error']);
    if (!l.startsWith('ready')) throw new Error(`start failed: ${l}\n${this.stderr}`);
    return this;
  }

  async command(cmd, prefix) {
    this.lines = this.lines.filter((l) => !l.startsWith(prefix));
    this.proc.stdin.write(`${cmd}\n`);
    return this.line([prefix]);
  }

  async status() {
    const l = await this.command('status', 'status');
    const m = /^status (\d+) ?(.*)$/.exec(l);
    return { state: Number(m[1]), error: m[2] };
  }

  async stop() {
    const l = await this.command('stop', 'stopped');
    await this.exited;
    const m = /^stopped (-?\d+) fds (\d+) (\d+)$/.exec(l);
    return { code: Number(m[1]), fdsBefore: Number(m[2]), fdsAfter: Number(m[3]) };
  }

  kill(signal = 'SIGKILL') {
    try { this.proc.stdin.end(); } catch { /* gone */ }
    try { this.proc.kill(signal); } catch { /* gone */ }
  }

  // The plugin's log arrives on its own pipe, apart from stdout: wait for
  // a line instead of asserting on what happened to arrive already.
  async stderrMatch(re, timeoutMs = 10000) {
    const end = Date.now() + timeoutMs;
    while (!re.test(this.stderr)) {
      if (Date.now() > end) throw new Error(`plugin log does not match ${re}:\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  // The driver's own pid (differs from proc.pid under strace).
  async pid() {
    return Number((await this.line(['ready'])).split(' ')[1]);
  }
}

// Child pids of pid, from /proc (the supervisor of a driver, or the
// children of a supervisor).
function childrenOf(pid) {
  try {
    return execFileSync('pgrep', ['-P', String(pid)]).toString().trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function comm(pid) {
  try { return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { return null; }
}

function procStatus(pid) {
  try {
    const out = {};
    for (const l of fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
      const i = l.indexOf(':');
      if (i > 0) out[l.slice(0, i)] = l.slice(i + 1).trim();
    }
    return out;
  } catch {
    return null;
  }
}

// { supervisor, broker, nodeserver, registrar, publisher } pids of a
// driver: "supervisor" is the monitor (kp-monitor), the process kp_start()
// forks; the broker and the children are its children.
function roles(driverPid) {
  const out = {};
  for (const s of childrenOf(driverPid)) {
    if (comm(s) !== 'kp-monitor') continue;
    out.supervisor = s;
    for (const c of childrenOf(s)) {
      const name = comm(c);
      if (name && name.startsWith('kp-')) out[name.slice(3)] = c;
    }
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(fn, timeoutMs = 10000, stepMs = 20) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms: ${fn}`);
    await sleep(stepMs);
  }
}

// Watches that both socket files exist the whole time; returns a stop
// function giving the number of samples where one was missing.
function watchSockets(paths, everyMs = 2) {
  let missing = 0;
  let samples = 0;
  const t = setInterval(() => {
    samples++;
    for (const p of paths) {
      try {
        if (!fs.lstatSync(p).isSocket()) missing++;
      } catch {
        missing++;
      }
    }
  }, everyMs);
  return () => { clearInterval(t); return { missing, samples }; };
}

function isAlive(pid) {
  const st = procStatus(pid);
  return st !== null && !/^Z/.test(st.State || '');
}

// What the children wrote to their stderr: the supervisor logs each line
// as "<klog header> <role>] stderr: <line>" (supervisor.c
// sup_drain_stderr); returns the <line>s, in order.
function childLines(text) {
  const out = [];
  for (const l of text.split('\n')) {
    const m = /^[IWEF]\d{4} [\d:.]+ +\d+ [a-z]+\] stderr: (.*)$/.exec(l);
    if (m) out.push(m[1]);
  }
  return out;
}

// Where the bytes s occur in the readable memory of pid (as root: the
// children are not dumpable), as "<mapping>+<offset>" strings; with
// before, the `before` bytes in front of each hit too ({at, before}).
function memFind(pid, s, before = 0) {
  const hits = [];
  const fd = fs.openSync(`/proc/${pid}/mem`, 'r');
  try {
    for (const l of fs.readFileSync(`/proc/${pid}/maps`, 'utf8').trim().split('\n')) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(l);
      if (!m || m[3][0] !== 'r' || /^\[(vvar|vsyscall)\]$/.test(m[4])) continue;
      const len = parseInt(m[2], 16) - parseInt(m[1], 16);
      if (len > 512 << 20) continue;	// sanitizer shadow, never our data
      const buf = Buffer.alloc(len);
      let got = 0;
      try { got = fs.readSync(fd, buf, 0, len, BigInt(`0x${m[1]}`)); } catch { continue; }
      for (let i = buf.indexOf(s); i !== -1 && i < got; i = buf.indexOf(s, i + 1)) {
        const at = `${m[4] || 'anon'}+0x${i.toString(16)}`;
        hits.push(before ? { at, before: Buffer.from(buf.subarray(Math.max(0, i - before), i)) } : at);
      }
    }
  } finally { fs.closeSync(fd); }
  return hits;
}

// kp_attack's probes (tests/e2e/bin/kp_attack.c): run(spec) writes spec
// to dir/<n> and runs it in the unprepare hook of claim probe-<n>, which
// looks up no claim (a stopped publisher does not hold it up); resolves
// with the hook's outcome.
function attackProbes(sim, driver, dir, timeoutMs = 10000) {
  let n = 0;
  return async (spec) => {
    n++;
    fs.writeFileSync(path.join(dir, String(n)), `${spec}\n`);
    const c = { namespace: 'default', name: `probe-${n}`, uid: randomUUID() };
    return sim.nodeUnprepareResources(driver, [c], { timeoutMs }).then(
      (r) => (r.claims[c.uid] && r.claims[c.uid].error) || 'unprepared (no probe outcome)', (e) => e.message);
  };
}

// A test driver (args) with API access: a fresh API-server emulator
// (emuOpts: versions, kubeVersion, ...), a kubeconfig for it (token file,
// CA file) in root; all stopped after t.
async function withApi(t, root, args = [], opts = {}, emuOpts = {}) {
  const { startEmulator, kubeconfig } = require('../../apiserver-emu');
  const emu = await startEmulator({ versions: ['v1'], nodes: ['node-1'], tokenFile: path.join(root.dir, 'token'), ...emuOpts });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const drv = new TestDriver(root, ['--kubeconfig', kc, '--node-name', 'node-1', ...args], opts);
  t.after(async () => {
    drv.kill();
    await drv.exited;
    await emu.stop();
    root.cleanup();
  });
  await drv.ready();
  return { emu, drv, kc };
}

// kp_attack (tests/e2e/bin/kp_attack.c) with API access (an emulator) and
// a kubelet simulator it registered with; run(spec) runs spec in its
// unprepare hook (attackProbes). tag names the probes' directory; opts go
// to TestDriver (prefixArgs: a wrapper such as unshare).
async function attackSetup(t, driver, tag, args = [], opts = {}) {
  const { KubeletSim } = require('../../kubelet-sim');
  const root = makeRoot(driver);
  const probes = fs.mkdtempSync(path.join(os.tmpdir(), `kp-${tag}-`));
  fs.chmodSync(probes, 0o755);
  t.after(() => fs.rmSync(probes, { recursive: true, force: true }));
  const { drv, emu } = await withApi(t, root, ['--read-path', probes, ...args],
    { binary: path.join(BUILD, 'tests', 'kp_attack'), ...opts, env: { KP_ATTACK_DIR: probes } });
  t.after(() => { if (/Sanitizer|runtime error:/.test(drv.stderr)) throw new Error(`sanitizer report:\n${drv.stderr}`); });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(driver);
  return { root, drv, emu, sim, run: attackProbes(sim, driver, probes) };
}

// A lock across test processes (make check runs test files two at a time)
// for a test that changes machine-wide state: resolves to its release
// function once held. A lock whose holder died is taken over.
async function machineLock(name) {
  const file = path.join(os.tmpdir(), `kp-e2e-${name}.lock`);
  for (;;) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(file, { force: true });
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    try {
      const holder = Number(fs.readFileSync(file, 'utf8'));
      // Empty: just created, or its holder died before writing its pid.
      const dead = holder ? !isAlive(holder) : Date.now() - fs.statSync(file).mtimeMs > 5000;
      if (dead) fs.rmSync(file, { force: true });
    } catch { /* released meanwhile */ }
    await sleep(100);
  }
}

// The service-account token directory, where kubelet would project the
// token. testTokenDir(t) makes it for test t when the machine has none
// (with a token file, and a .kp-test mark telling it from a real one) and
// removes what it made after t; it holds a lock meanwhile, so that two test
// files running at once do not make and remove it under each other.
// Resolves to false when a real one exists (left alone: t should skip).
const TOKEN_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
async function testTokenDir(t) {
  const release = await machineLock('token-dir');
  let made = null;
  try {
    if (fs.existsSync(TOKEN_DIR) && !fs.existsSync(path.join(TOKEN_DIR, '.kp-test'))) {
      release();
      return false;
    }
    // The outermost directory that did not exist, removed after.
    for (let d = TOKEN_DIR; !fs.existsSync(d); d = path.dirname(d)) made = d;
    fs.mkdirSync(TOKEN_DIR, { recursive: true });
    fs.writeFileSync(path.join(TOKEN_DIR, '.kp-test'), '');
    if (made) fs.writeFileSync(path.join(TOKEN_DIR, 'token'), 'secret-token');
  } catch (e) {
    release();
    throw e;
  }
  t.after(() => {
    if (made) fs.rmSync(made, { recursive: true, force: true });
    release();
  });
  return true;
}

// A TCP port on 127.0.0.1 nothing listens on (just now).
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// The test driver's isolation probe (its prepare hook, claim "isolation"):
// everything it printed, as [what, rest] pairs. As kubelet does, a call
// that finds no connection yet (a nodeserver just (re)started, slower
// under ASan) is retried; the probe's own answer is the claim error
// "isolation probe".
async function isolationProbe(drv, sim, emu, driver, node) {
  drv.stderr = '';
  const c = { namespace: 'default', name: 'isolation', uid: randomUUID() };
  emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver, pool: node, device: 'dev-0' }] } });
  await until(() => sim.nodePrepareResources(driver, [c], { timeoutMs: 10000 }).then(
    () => { throw new Error('the isolation probe prepared'); },
    (e) => (/isolation probe/.test(e.message) ? true : /Unavailable|No connection/.test(e.message) ? null : Promise.reject(e))),
  15000, 200);
  await drv.stderrMatch(/isolation: done/);
  return childLines(drv.stderr).filter((l) => l.startsWith('isolation: ')).map((l) => {
    const rest = l.slice('isolation: '.length);
    const i = rest.indexOf(' ');
    return [rest.slice(0, i), rest.slice(i + 1)];
  });
}

module.exports = {
  ROOT, BUILD, TESTDRIVER, PCI_DRIVER, REDTEAM, makeRoot, TestDriver, childrenOf, comm, procStatus,
  roles, sleep, until, watchSockets, isAlive, UID_BASE, IDS, giveToNodeserver, childLines, isolationProbe, freePort, memFind,
  attackProbes, attackSetup, withApi, machineLock, TOKEN_DIR, testTokenDir,
};
