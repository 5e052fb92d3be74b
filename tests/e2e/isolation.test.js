'use strict';
// Identities and namespaces of the sandboxed processes (policy/ids.c,
// policy/ns.c, supervisor/children.c), checked from outside through the
// host's /proc and from inside by the test driver's "isolation" probe
// (a prepare hook that lists /proc, opens /proc/<n>/mem, reads the
// credential files and lists kubelet's directories): each role has its own
// non-root uid and gid and no supplementary groups, is not dumpable, is
// pid 1 of its own pid namespace with a private /proc; the nodeserver does
// not see the kubeconfig, the files it names, plugins_registry/ or other
// plugins' directories; the publisher keeps working (kubeconfig and
// in-cluster mode), and SIGTERM still stops every child.
// Run as root: without root none of this can be set up (docs/security.md).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { startEmulator, kubeconfig } = require('../apiserver-emu');
const { makeRoot, TestDriver, TESTDRIVER, BUILD, roles, until, procStatus, IDS, childLines, isolationProbe, TOKEN_DIR, testTokenDir } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const NODE = 'node-1';
const asRoot = process.getuid() === 0;
const skip = asRoot ? false : 'needs root (uids, namespaces)';

// /proc/<pid>/mountinfo as { point, root, fstype, source, opts }.
function mounts(pid) {
  const unesc = (s) => s.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
  return fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8').trim().split('\n').map((l) => {
    const [pre, post] = l.split(' - ');
    const f = pre.split(' ');
    const g = post.split(' ');
    return { root: unesc(f[3]), point: unesc(f[4]), opts: f[5], fstype: g[0], source: g[1] };
  });
}
const covered = (ms, p) => ms.some((m) => m.point === p);

// Everything the isolation probe printed, as [what, rest] pairs.
const probe = (drv, sim, emu) => isolationProbe(drv, sim, emu, DRIVER, NODE);

// An emulator, a kubeconfig for it (token file, CA file), the test driver
// and a kubelet simulator; env for the driver. args and env may be
// functions of { root, kc, tokenFile }.
async function setup(t, { args = [], env = {}, inCluster = false, wrap = null } = {}) {
  const root = makeRoot(DRIVER);
  const credDir = inCluster ? TOKEN_DIR : root.dir;
  const tokenFile = path.join(credDir, 'token');
  const emu = await startEmulator({ versions: ['v1'], nodes: [NODE], tokenFile });
  fs.copyFileSync(emu.caFile, path.join(credDir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const kube = inCluster ? ['--in-cluster'] : ['--kubeconfig', kc];
  const denv = inCluster ? { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(new URL(emu.url).port) } : {};
  const of = (x) => (typeof x === 'function' ? x({ root, kc, tokenFile }) : x);
  const drv = new TestDriver(root, [...kube, '--node-name', NODE, ...of(args)], {
    env: { ...denv, ...of(env) }, ...(wrap ? { binary: wrap[0], prefixArgs: [...wrap.slice(1), TESTDRIVER] } : {}),
  });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    await emu.stop();
    root.cleanup();
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  return { root, emu, drv, sim, kc, tokenFile, caFile: path.join(credDir, 'ca.crt') };
}

// A claim look-up through the publisher reaches the hook.
async function lookupWorks(emu, sim, drv, name) {
  const c = { namespace: 'default', name, uid: randomUUID() };
  emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-0' }] } });
  const res = await sim.nodePrepareResources(DRIVER, [c], { timeoutMs: 10000 });
  assert.equal(res.claims[c.uid].error || '', '');
  await drv.stderrMatch(new RegExp(`ALLOC default/${name} results=1 r:${NODE}/dev-0`));
}

// For a start expected to fail: a root, an emulator and a kubeconfig
// naming the token file tokenSub (relative to root.dir) and ca.crt;
// prep(root) runs first.
async function credRoot(t, { tokenSub = 'token', prep = () => {} } = {}) {
  const root = makeRoot(DRIVER);
  prep(root);
  const tokenFile = path.join(root.dir, tokenSub);
  const emu = await startEmulator({ versions: ['v1'], nodes: [NODE], tokenFile });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url, tokenFile: tokenSub }));
  t.after(async () => { await emu.stop(); root.cleanup(); });
  return { root, tokenFile, kc };
}

test('each role runs as its own non-root uid and gid, no supplementary groups, not dumpable', { skip }, async (t) => {
  const { drv } = await setup(t);
  const r = roles(drv.proc.pid);
  const sup = procStatus(r.supervisor);
  for (const role of ['nodeserver', 'registrar', 'publisher']) {
    const st = procStatus(r[role]);
    assert.deepEqual(st.Uid.split(/\s+/).map(Number), Array(4).fill(IDS[role]), `${role} Uid`);
    assert.deepEqual(st.Gid.split(/\s+/).map(Number), Array(4).fill(IDS[role]), `${role} Gid`);
    assert.equal(st.Groups, '', `${role} Groups`);
    assert.notEqual(st.Uid, sup.Uid, `${role} shares no uid with the supervisor`);
    // A process that is not dumpable has its /proc/<pid> files owned by
    // root whatever its uid: the only outside view of PR_SET_DUMPABLE 0.
    for (const f of ['mem', 'environ', 'maps', 'fd']) {
      assert.equal(fs.statSync(`/proc/${r[role]}/${f}`).uid, 0, `${role} /proc/${r[role]}/${f} owner`);
    }
  }
  assert.equal(new Set(['nodeserver', 'registrar', 'publisher'].map((x) => IDS[x])).size, 3);
});

// "Max core file size" of /proc/<pid>/limits: [soft, hard].
function coreLimit(pid) {
  const l = fs.readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').find((x) => x.startsWith('Max core file size'));
  return l.slice('Max core file size'.length).trim().split(/\s+/).slice(0, 2);
}

// The driver starts with core dumps allowed (prlimit, soft and hard), so
// what the children show is their own setrlimit, not the test's.
test('the publisher: no capabilities, NoNewPrivs, seccomp filter; every child: RLIMIT_CORE 0 (soft and hard) though the driver allows core dumps', { skip }, async (t) => {
  const { drv, emu, sim } = await setup(t, { wrap: ['prlimit', '--core=unlimited:unlimited'] });
  const r = roles(drv.proc.pid);
  const pub = procStatus(r.publisher);
  for (const k of ['CapEff', 'CapPrm', 'CapBnd', 'CapInh', 'CapAmb']) assert.equal(pub[k], '0000000000000000', `publisher ${k}`);
  assert.equal(pub.NoNewPrivs, '1');
  assert.equal(pub.Seccomp, '2');
  // The hard limit shows the driver's (ASan lowers the soft one itself).
  assert.equal(coreLimit(r.supervisor)[1], 'unlimited', 'the supervisor keeps the driver\'s limit');
  for (const role of ['nodeserver', 'registrar', 'publisher']) {
    assert.deepEqual(coreLimit(r[role]), ['0', '0'], `${role} RLIMIT_CORE`);
  }
  // The publisher still does its work inside all of it.
  await lookupWorks(emu, sim, drv, 'nocaps');
});

// The publisher runs no driver code: tests/e2e/bin/kp_obsprobe.c builds
// its sandbox with the library's own policy_apply(ROLE_PUBLISHER) in a
// forked child and makes one attempt there, as a compromised publisher.
test('attacks from inside the publisher\'s sandbox: Landlock refuses files outside its read set and every write, listen and accept4 kill it, AF_UNIX is refused; its mount namespace covers kubelet\'s plugin directories', { skip }, () => {
  const { spawnSync } = require('node:child_process');
  const kdir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'kp-pubprobe-'));
  try {
    fs.mkdirSync(path.join(kdir, 'plugins_registry'));
    fs.mkdirSync(path.join(kdir, 'plugins', 'probe.example.com'), { recursive: true });
    fs.writeFileSync(path.join(kdir, 'plugins_registry', 'other.sock'), '');
    const probe = (...c) => {
      const r = spawnSync(path.join(BUILD, 'tests', 'kp_obsprobe'), c, {
        encoding: 'utf8', timeout: 20000, env: { ...process.env, KP_PROBE_ROLE: 'publisher', KP_PROBE_KUBELET_DIR: kdir },
      });
      assert.equal(r.status, 0, `${c}: ${r.stdout}${r.stderr}`);
      return r.stdout.trim();
    };
    const denied = [['open', '/etc/passwd'], ['open', path.join(kdir, 'plugins_registry', 'other.sock')],
      ['ls', path.join(kdir, 'plugins_registry')], ['ls-root'], ['write', path.join(kdir, 'planted')],
      ['write', '/tmp/kp-pubprobe-planted'], ['listen'], ['accept4'], ['unix-connect', '/run/systemd/private'], ['fork']];
    for (const c of denied) assert.match(probe(...c), new RegExp(`^PROBE ${c[0]}: DENIED: `), String(c));
    assert.match(probe('listen'), /killed by seccomp/);
    assert.match(probe('accept4'), /killed by seccomp/);
    assert.ok(!fs.existsSync(path.join(kdir, 'planted')) && !fs.existsSync('/tmp/kp-pubprobe-planted'));
    // What it needs stays open: the resolver's files.
    assert.match(probe('open', '/etc/resolv.conf'), /^PROBE open: SUCCEEDED: /);
    // Kubelet's directories are mount points only in its namespace.
    const here = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4]);
    for (const d of ['plugins_registry', 'plugins']) {
      assert.ok(!here.includes(path.join(kdir, d)));
      assert.match(probe('mounted', path.join(kdir, d)), /^PROBE mounted: SUCCEEDED: .* is covered$/, d);
    }
  } finally {
    fs.rmSync(kdir, { recursive: true, force: true });
  }
});

test('each child is pid 1 of its own pid namespace; SIGTERM still stops every child', { skip }, async (t) => {
  const { drv } = await setup(t);
  const r = roles(drv.proc.pid);
  assert.equal(procStatus(r.supervisor).NSpid.split(/\s+/).length, 1, 'the supervisor stays in the host namespace');
  const nsOf = (pid) => fs.readlinkSync(`/proc/${pid}/ns/pid`);
  const seen = new Set([nsOf(r.supervisor)]);
  for (const role of ['nodeserver', 'registrar', 'publisher']) {
    assert.deepEqual(procStatus(r[role]).NSpid.split(/\s+/).map(Number), [r[role], 1], `${role} NSpid`);
    assert.ok(!seen.has(nsOf(r[role])), `${role} has a pid namespace of its own`);
    seen.add(nsOf(r[role]));
  }
  await drv.stderrMatch(/publisher in a pid namespace of its own/);
  // pid 1 ignores signals without a handler: the roles block them and
  // take SIGTERM with sigwait / a signalfd. Each exits by itself, well
  // before the supervisor's 5 s grace would end in SIGKILL.
  const t0 = Date.now();
  const res = await drv.stop();
  assert.equal(res.code, 0);
  assert.ok(Date.now() - t0 < 4000, `stopped in ${Date.now() - t0} ms`);
  for (const role of ['nodeserver', 'registrar', 'publisher']) {
    assert.match(drv.stderr, new RegExp(`broker\\] ${role} exited\\n`));
  }
  assert.doesNotMatch(drv.stderr, /did not stop in time|killed by signal/);
});

test('the nodeserver sees only itself in /proc and none of the credential files or kubelet directories', { skip }, async (t) => {
  const { root, emu, drv, sim, kc, tokenFile, caFile } = await setup(t, { env: {} });
  const registry = root.registry;
  const plugins = path.dirname(path.dirname(root.draSock));
  const own = path.dirname(root.draSock);
  // The probe's paths reach the nodeserver through the driver's env.
  process.env.KP_TEST_READ = [kc, tokenFile, caFile].join(':');
  process.env.KP_TEST_LIST = [registry, plugins].join(':');
  t.after(() => { delete process.env.KP_TEST_READ; delete process.env.KP_TEST_LIST; });
  drv.kill();
  await drv.exited;
  const drv2 = new TestDriver(root, ['--kubeconfig', kc, '--node-name', NODE]);
  t.after(async () => { drv2.kill(); await drv2.exited; });
  await drv2.ready();
  await sim.waitForDriver(DRIVER);
  const r = roles(drv2.proc.pid);

  // From outside: what the nodeserver's mount namespace covers.
  const ms = mounts(r.nodeserver);
  // The last mount on /proc is the one on top.
  const proc = ms.filter((m) => m.point === '/proc' && m.fstype === 'proc').pop();
  assert.ok(proc, 'a proc of its own on /proc');
  assert.match(proc.opts, /nosuid/);
  assert.match(proc.opts, /nodev/);
  assert.match(proc.opts, /noexec/);
  // Each credential file's directory, not the file: a rename onto the
  // file would detach a cover on it (the rotation test below).
  const credDirs = [kc, tokenFile, caFile].map((f) => fs.realpathSync(path.dirname(f)));
  for (const p of credDirs) {
    assert.ok(ms.some((m) => m.point === p && m.fstype === 'tmpfs' && /^ro,/.test(m.opts)), `${p} under a read-only tmpfs`);
  }
  // Here the kubeconfig's directory holds kubelet's: plugins_registry/
  // is gone with it, plugins/ kept for the own directory beneath it.
  assert.ok(covered(ms, registry) || credDirs.some((d) => registry.startsWith(`${d}/`)), 'plugins_registry covered');
  assert.ok(ms.some((m) => m.point === plugins && m.fstype === 'tmpfs' && /^ro,/.test(m.opts)), 'plugins/ under a read-only tmpfs');
  assert.ok(covered(ms, own), 'its own plugin directory bound back');
  // The host view is unchanged.
  assert.ok(fs.readFileSync(kc, 'utf8').includes('server:'));

  // From inside.
  const out = await probe(drv2, sim, emu);
  const get = (what) => out.filter(([w]) => w === what).map(([, v]) => v);
  assert.deepEqual(get('proc'), ['1'], 'only itself in /proc');
  assert.deepEqual(get('mem'), ['1 Permission denied'], 'not even its own mem (not dumpable, not root)');
  for (const f of [kc, tokenFile, caFile]) {
    const line = get('read').find((l) => l.startsWith(`${f} `));
    // Not in the tmpfs over its directory; or Landlock refuses the open
    // first (the path is outside the read set).
    assert.match(line, new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (No such file or directory|Permission denied)$`), line);
  }
  const lists = get('list');
  assert.match(lists.find((l) => l.startsWith(`${registry} `)), /Permission denied|No such file or directory|\[ \]$/);
  // Only its own directory under plugins/ (the mount), or nothing at all
  // when Landlock refuses the listing first (plugins/ is not in its read
  // set).
  assert.ok([`${plugins} [ ${DRIVER} ]`, `${plugins} Permission denied`].includes(lists.find((l) => l.startsWith(`${plugins} `))),
    lists.find((l) => l.startsWith(`${plugins} `)));
  // The supervisor's stderr relay prints a tab as '?' (log_sanitize).
  assert.deepEqual(get('status').map((x) => x.replace(/[\t?]/g, ' ').trimEnd()), [`Uid: ${Array(4).fill(IDS.nodeserver).join(' ')}`,
    `Gid: ${Array(4).fill(IDS.nodeserver).join(' ')}`, 'Groups:'], 'its own ids, read from its own /proc/self/status');

  // The publisher: private /proc, no kubelet directories, its files visible.
  const pm = mounts(r.publisher);
  assert.ok(pm.some((m) => m.point === '/proc' && m.fstype === 'proc'));
  assert.ok(covered(pm, registry) && covered(pm, plugins));
  assert.ok(!credDirs.some((p) => covered(pm, p)));
  // ... and still works.
  const l = await drv2.command('publish 2 1 x', 'publish ');
  assert.match(l, /^publish KP_OK/);
  await until(() => emu.getSlices({ fieldSelector: `spec.driver=${DRIVER}` }).length === 1);
  await lookupWorks(emu, sim, drv2, 'after-probe');

  // A restarted nodeserver hides the same files.
  process.kill(r.nodeserver, 'SIGKILL');
  const again = await until(() => {
    const x = roles(drv2.proc.pid).nodeserver;
    return x && x !== r.nodeserver && /nodeserver ready/.test(drv2.stderr.split('restarting nodeserver')[1] || '') ? x : null;
  }, 15000);
  const ms2 = mounts(again);
  for (const p of credDirs) assert.ok(covered(ms2, p), `${p} covered after a restart`);
});

// Token refreshers write a new file and rename it onto the old name, and a
// rename detaches a mount on the file it replaces in every mount
// namespace: the nodeserver covers the directory of each credential file,
// which a rename leaves in place. What refuses here is that tmpfs alone:
// Landlock is either missing (an older kernel, for this process tree
// only: tests/e2e/bin/kp_nosys.c fails the landlock_* calls with ENOSYS)
// or told to let the hooks read the kubeconfig's directory.
const NOSYS_LANDLOCK = [path.join(BUILD, 'tests', 'kp_nosys'), 'landlock_create_ruleset,landlock_add_rule,landlock_restrict_self'];
for (const [how, opts] of [
  ['without Landlock', { wrap: NOSYS_LANDLOCK }],
  ['a read path over the kubeconfig\'s directory', { args: ({ root }) => ['--read-path', root.dir] }],
  ['a read path on the directory\'s parent', { args: ({ root }) => ['--read-path', path.dirname(root.dir)] }],
]) {
  test(`the kubeconfig and token file renamed over after the start stay hidden from the nodeserver (${how})`, { skip }, async (t) => {
    const { drv, emu, sim, kc, tokenFile } = await setup(t, { ...opts, env: ({ kc: k, tokenFile: f }) => ({ KP_TEST_READ: [k, f].join(':') }) });
    if (opts.wrap) await drv.stderrMatch(/sandbox: no Landlock in this kernel \(Function not implemented\): the nodeserver's/);
    for (const f of [tokenFile, kc]) {
      fs.writeFileSync(`${f}.new`, fs.readFileSync(f), { mode: 0o644 });
      fs.renameSync(`${f}.new`, f);
    }
    const out = await probe(drv, sim, emu);
    for (const f of [kc, tokenFile]) {
      const line = out.find(([w, v]) => w === 'read' && v.startsWith(`${f} `));
      assert.ok(line, `the probe read ${f}`);
      assert.match(line[1], /(No such file or directory|Permission denied)$/, `${f} after the rename: ${line[1]}`);
    }
    // The publisher reads the new files.
    await lookupWorks(emu, sim, drv, 'after-rotation');
  });
}

// Where the nodeserver can have no mount namespace (not root: no
// CAP_SYS_ADMIN) a credential file stays readable by its uid (here the
// same uid as the publisher's); Landlock keeps it out where the kernel has
// it, else the start is refused, naming the option.
test('without root and without Landlock a kubeconfig is refused, naming the option; with Landlock it starts', { skip }, async (t) => {
  const { spawnSync } = require('node:child_process');
  const SETPRIV = ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all'];
  if (spawnSync('setpriv', [...SETPRIV, 'sh', '-c', `test -x '${TESTDRIVER}' && test -x '${NOSYS_LANDLOCK[0]}'`]).status !== 0) {
    t.skip('nobody cannot run the build here');
    return;
  }
  const { root, kc } = await credRoot(t);
  spawnSync('chown', ['-R', '65534:65534', root.dir]);
  const args = ['--allow-uid', '65534', '--kubeconfig', kc, '--node-name', NODE];
  // (kp_nosys loads its filter unprivileged: NO_NEW_PRIVS first.)
  const refused = new TestDriver(root, args, { binary: 'setpriv', prefixArgs: [...SETPRIV, '--no-new-privs', ...NOSYS_LANDLOCK, TESTDRIVER] });
  t.after(async () => { refused.kill(); await refused.exited; });
  const l = await refused.line(['ready', 'error'], 20000);
  assert.match(l, new RegExp(`^error KP_\\w+ .*the nodeserver \\(uid 65534, gid 65534\\) could read the kubeconfig ${kc} \\(kp_kube_client_kubeconfig\\): without CAP_SYS_ADMIN .*this kernel has no Landlock`), refused.stderr);
  await refused.exited;
  assert.ok(!fs.existsSync(root.regSock), 'nothing registers');
  const drv = new TestDriver(root, args, { binary: 'setpriv', prefixArgs: [...SETPRIV, TESTDRIVER] });
  t.after(async () => { drv.kill(); await drv.exited; });
  assert.match(await drv.line(['ready', 'error'], 20000), /^ready/);
});

// A credential in a state directory: the nodeserver owns that directory
// (it could swap the CA the publisher trusts), and hiding it would take
// the nodeserver's own files.
test('a kubeconfig naming a token file in a state directory is refused, naming both options', { skip }, async (t) => {
  // (0755: the publisher's uid can read the token, as on main.)
  const { root, tokenFile, kc } = await credRoot(t, { tokenSub: 'state/token', prep: (r) => fs.mkdirSync(path.join(r.dir, 'state')) });
  const state = path.dirname(tokenFile);
  fs.chmodSync(state, 0o755);
  const drv = new TestDriver(root, ['--kubeconfig', kc, '--node-name', NODE, '--state-dir', state]);
  t.after(async () => { drv.kill(); await drv.exited; });
  const l = await drv.line(['ready', 'error'], 20000);
  assert.match(l, new RegExp(`^error KP_\\w+ .*the token file ${tokenFile} \\(kp_kube_client_kubeconfig\\) lies in ${state}, within the state directory ${state} \\(kp_sandbox_state_dir\\)`));
});

test('in-cluster mode: the publisher reads the token directory, the nodeserver does not', { skip }, async (t) => {
  // The machine has no service-account directory: make one for the test.
  if (!(await testTokenDir(t))) {
    t.skip('a real token directory exists');
    return;
  }
  process.env.KP_TEST_READ = path.join(TOKEN_DIR, 'token');
  t.after(() => { delete process.env.KP_TEST_READ; });
  const { emu, drv, sim } = await setup(t, { inCluster: true });
  const l = await drv.command('publish 1 1 x', 'publish ');
  assert.match(l, /^publish KP_OK/);
  await until(() => emu.getSlices({ fieldSelector: `spec.driver=${DRIVER}` }).length === 1);
  await lookupWorks(emu, sim, drv, 'in-cluster');
  const r = roles(drv.proc.pid);
  assert.ok(covered(mounts(r.nodeserver), fs.realpathSync(TOKEN_DIR)));
  assert.ok(!covered(mounts(r.publisher), fs.realpathSync(TOKEN_DIR)));
  const out = await probe(drv, sim, emu);
  const line = out.find(([w, v]) => w === 'read' && v.startsWith(`${TOKEN_DIR}/token `));
  assert.match(line[1], /Permission denied|No such file/);
});

test('kp_sandbox_uid_base moves every default id; kp_sandbox_user overrides one role', { skip }, async (t) => {
  const root = makeRoot(DRIVER);
  const drv = new TestDriver(root, ['--uid-base', '70000', '--sandbox-user', 'registrar:4242:4343']);
  t.after(async () => { drv.kill(); await drv.exited; root.cleanup(); });
  await drv.ready();
  const r = roles(drv.proc.pid);
  assert.equal(procStatus(r.nodeserver).Uid.split(/\s+/)[0], '70000');
  assert.equal(procStatus(r.nodeserver).Gid.split(/\s+/)[0], '70000');
  assert.equal(procStatus(r.registrar).Uid.split(/\s+/)[0], '4242');
  assert.equal(procStatus(r.registrar).Gid.split(/\s+/)[0], '4343');
  assert.equal(procStatus(r.registrar).Groups, '');
  const bad = new TestDriver(makeRoot(DRIVER), ['--uid-base', '0']);
  const l = await bad.line(['ready', 'error']);
  await bad.exited;
  bad.root.cleanup();
  assert.match(l, /^error KP_EINVAL kp_sandbox_uid_base .*base 0/);
});

test('a credential file the publisher\'s uid cannot read fails the start, naming it', { skip }, async (t) => {
  const { root, tokenFile, kc } = await credRoot(t);
  fs.chmodSync(tokenFile, 0o600);
  const drv = new TestDriver(root, ['--kubeconfig', kc, '--node-name', NODE]);
  t.after(async () => { drv.kill(); await drv.exited; });
  const l = await drv.line(['ready', 'error']);
  assert.match(l, new RegExp(`^error KP_ECHILD .*the publisher \\(uid ${IDS.publisher}, gid ${IDS.publisher}\\) cannot read ${tokenFile}: Permission denied`));
});

// Without root (setpriv to nobody, no capabilities): what is missing is
// said in the log, and what needs no privilege stays: each child is not
// dumpable, so its /proc files are closed to its siblings of the same uid.
test('without root, kp_sandbox_user() fails the start naming the ids; nothing keeps running', { skip }, async (t) => {
  const { spawnSync } = require('node:child_process');
  const SETPRIV = ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all'];
  const ok = spawnSync('setpriv', [...SETPRIV, 'sh', '-c', `test -x '${TESTDRIVER}'`]);
  if (ok.status !== 0) {
    t.skip('nobody cannot run the build here');
    return;
  }
  const root = makeRoot(DRIVER);
  spawnSync('chown', ['-R', '65534:65534', root.dir]);
  const drv = new TestDriver(root, ['--allow-uid', '65534', '--sandbox-user', 'registrar:12345:12345'],
    { binary: 'setpriv', prefixArgs: [...SETPRIV, TESTDRIVER] });
  t.after(async () => { drv.kill(); await drv.exited; root.cleanup(); });
  const l = await drv.line(['ready', 'error'], 20000);
  assert.match(l, /^error KP_ECHILD .*registrar.*cannot change to uid 12345 gid 12345: Operation not permitted/);
  const res = await drv.exited;
  assert.notEqual(res.code, null);
  assert.ok(!fs.existsSync(root.regSock), 'nothing registers');
});

test('without root: shared uid and pid namespace, warned; children still not dumpable', { skip }, async (t) => {
  const { spawnSync } = require('node:child_process');
  const SETPRIV = ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all'];
  const ok = spawnSync('setpriv', [...SETPRIV, 'sh', '-c', `test -x '${require('./lib/plugin').TESTDRIVER}'`]);
  if (ok.status !== 0) {
    t.skip('nobody cannot run the build here');
    return;
  }
  const root = makeRoot(DRIVER);
  spawnSync('chown', ['-R', '65534:65534', root.dir]);
  const drv = new TestDriver(root, ['--allow-uid', '65534'], { binary: 'setpriv', prefixArgs: [...SETPRIV, require('./lib/plugin').TESTDRIVER] });
  t.after(async () => { drv.kill(); await drv.exited; root.cleanup(); });
  await drv.ready();
  await drv.stderrMatch(/not started as root: the nodeserver keeps uid 65534/);
  await drv.stderrMatch(/no pid namespace per child/);
  const r = await until(() => {
    const x = roles(Number(drv.lines.find((l) => l.startsWith('ready')).split(' ')[1]));
    return x.nodeserver && x.registrar ? x : null;
  });
  for (const role of ['nodeserver', 'registrar']) {
    const st = procStatus(r[role]);
    assert.equal(st.Uid.split(/\s+/)[0], '65534');
    assert.equal(st.NSpid.split(/\s+/).length, 1, `${role}: no pid namespace`);
    assert.equal(fs.statSync(`/proc/${r[role]}/mem`).uid, 0, `${role} not dumpable`);
  }
  // The supervisor too (as root its files are root's either way): of a
  // dumpable process of uid 65534, the driver's own, they are 65534's.
  const drvPid = Number(drv.lines.find((l) => l.startsWith('ready')).split(' ')[1]);
  assert.equal(procStatus(r.supervisor).Uid.split(/\s+/)[0], '65534');
  assert.equal(fs.statSync(`/proc/${drvPid}/mem`).uid, 65534, 'the driver process is dumpable');
  assert.equal(fs.statSync(`/proc/${r.supervisor}/mem`).uid, 0, 'supervisor not dumpable');
});
