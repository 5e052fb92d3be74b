'use strict';
// The nodeserver's filesystem (docs/security.md, "The nodeserver's
// filesystem"): state directories the supervisor prepares and hands over,
// the CDI spec write broker in the supervisor, and Landlock (writes only
// beneath the state directories, reads only beneath the read set, no
// signal or ptrace-class /proc access outside the domain). As root the
// hooks run as uid 0 without capabilities (kp_sandbox_user nodeserver
// 0:0), where file permissions stop nothing: what stops them is Landlock.
// Hooks are probed through the test driver's "probe-<n>" claims
// (tests/e2e/bin/kp_testdriver.c): the spec is the file <n> in a probe
// directory the nodeserver may read.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { makeRoot, TestDriver, TESTDRIVER, BUILD, roles, until, sleep, isAlive, procStatus } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const ROOT_USER = process.getuid() === 0;
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });

// The kernel's Landlock ABI, from the nodeserver's V(2) log line; 0: none.
const landlockAbi = (stderr) => Number((/nodeserver: Landlock ABI (\d+)/.exec(stderr) || [0, 0])[1]);

async function setup(t, { args = [], env = {}, stateDir = true, prep = null, uid0 = true, wrap = null } = {}) {
  const root = makeRoot(DRIVER);
  const state = path.join(root.dir, 'state');
  const cdi = path.join(root.dir, 'cdi');
  const probes = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-probes-'));
  if (!uid0) fs.chmodSync(probes, 0o755);	// a nodeserver uid reads the specs
  if (prep) prep(root, probes);
  const drv = new TestDriver(root, [...(stateDir ? ['--state-dir', state] : []), '--cdi-dir', cdi,
    '--read-path', probes, ...(ROOT_USER ? (uid0 ? ['--sandbox-user', 'nodeserver:0:0'] : [])
      : ['--allow-uid', String(process.getuid())]),
    ...args],
  { env: { KP_TEST_PROBE_DIR: probes, ...env }, ...(wrap ? { binary: wrap[0], prefixArgs: [...wrap.slice(1), TESTDRIVER] } : {}) });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    root.cleanup();
    fs.rmSync(probes, { recursive: true, force: true });
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  let n = 0;
  // Runs one probe in a prepare hook; its outcome is the claim's error.
  const run = async (spec) => {
    n++;
    fs.writeFileSync(path.join(probes, String(n)), `${spec}\n`);
    return sim.nodePrepareResources(DRIVER, [claim(`probe-${n}`)], { timeoutMs: 15000 }).then(
      () => assert.fail('a probe claim fails with its outcome'), (e) => e.message);
  };
  return { root, drv, sim, state, cdi, run };
}

test('a state directory is created 0700 and handed to the nodeserver; hooks write there and nowhere else', async (t) => {
  const other = makeRoot(DRIVER);	// a directory nothing declares
  t.after(() => other.cleanup());
  const victim = path.join(other.dir, 'victim');
  fs.writeFileSync(victim, 'root-owned\n', { mode: 0o644 });
  const tmpTarget = path.join(os.tmpdir(), `kp-landlock-${process.pid}`);
  t.after(() => fs.rmSync(tmpTarget, { force: true }));
  const { root, drv, state, run } = await setup(t);
  assert.ok(landlockAbi(drv.stderr) >= 1, `the nodeserver reports its Landlock ABI:\n${drv.stderr}`);
  const st = fs.statSync(state);
  assert.ok(st.isDirectory());
  assert.equal(st.mode & 0o777, 0o700);
  assert.equal(st.uid, process.getuid(), 'owned by the nodeserver');
  const before = roles(drv.proc.pid).nodeserver;
  const j = path.join(state, 'journal');
  const cp = path.join(state, 'checkpoint');
  for (const [spec, want] of [
    [`write:${j}`, /: ok$/],
    [`rename:${j}:${cp}`, /: ok$/],
    [`mkdir:${path.join(state, 'sub')}`, /: ok$/],
    [`write:${path.join(state, 'sub', 'f')}`, /: ok$/],
    [`unlink:${path.join(state, 'sub', 'f')}`, /: ok$/],
    // Outside: /tmp (world-writable), a root-owned file, the sockets.
    [`write:${tmpTarget}`, /Permission denied/],
    [`write:${victim}`, /Permission denied/],
    [`mkdir:${path.join(os.tmpdir(), `kp-landlock-dir-${process.pid}`)}`, /Permission denied/],
    [`unlink:${root.draSock}`, /Permission denied/],
    [`unlink:${root.regSock}`, /Permission denied/],
    [`rename:${root.draSock}:${path.join(state, 'stolen')}`, /Permission denied|cross-device/],
    [`rename:${cp}:${path.join(root.dir, 'escaped')}`, /Permission denied|cross-device/],
    [`write:${path.join(path.dirname(root.draSock), 'evil')}`, /Permission denied/],
  ]) assert.match(await run(spec), want, spec);
  assert.equal(fs.readFileSync(cp, 'utf8'), 'x');
  assert.ok(!fs.existsSync(tmpTarget), 'nothing written to /tmp');
  assert.equal(fs.readFileSync(victim, 'utf8'), 'root-owned\n', 'the file outside is unchanged');
  assert.ok(fs.lstatSync(root.draSock).isSocket() && fs.lstatSync(root.regSock).isSocket(), 'the sockets stay');
  assert.ok(!fs.existsSync(path.join(root.dir, 'escaped')));
  assert.equal(roles(drv.proc.pid).nodeserver, before, 'denials are errors, not violations');
});

test('without a state directory a hook can write no file at all', async (t) => {
  const { root, run } = await setup(t, { stateDir: false });
  assert.match(await run(`write:${path.join(root.dir, 'x')}`), /Permission denied/);
  assert.match(await run(`write:${path.join(os.tmpdir(), `kp-ll-${process.pid}`)}`), /Permission denied/);
  assert.ok(!fs.existsSync(path.join(root.dir, 'x')));
});

// An older kernel without Landlock, for this process tree only: the
// landlock_* calls fail ENOSYS under a seccomp filter of the test's
// (tests/e2e/bin/kp_nosys.c). Each child warns; the nodeserver (its own
// uid here, not 0) is then held by its uid, the mount namespace and
// seccomp: world-writable /tmp is the part Landlock alone closed.
test('without Landlock (an older kernel): each child warns; the nodeserver\'s uid still keeps root\'s files and /etc/shadow closed, the state directory open', { skip: !ROOT_USER && 'needs root (a uid of its own)' }, async (t) => {
  const other = makeRoot(DRIVER);
  t.after(() => other.cleanup());
  const victim = path.join(other.dir, 'victim');
  fs.writeFileSync(victim, 'root-owned\n', { mode: 0o644 });
  const { drv, state, run } = await setup(t, {
    uid0: false, wrap: [path.join(BUILD, 'tests', 'kp_nosys'), 'landlock_create_ruleset,landlock_add_rule,landlock_restrict_self'],
  });
  for (const role of ['nodeserver', 'registrar']) {
    await drv.stderrMatch(new RegExp(`sandbox: no Landlock in this kernel \\(Function not implemented\\): the ${role}'s file access is limited by its uid and seccomp only`));
  }
  assert.equal(landlockAbi(drv.stderr), 0);
  for (const [spec, want] of [
    [`write:${path.join(state, 'journal')}`, /: ok$/],
    [`write:${victim}`, /Permission denied/],
    ['read:/etc/shadow', /Permission denied/],
  ]) assert.match(await run(spec), want, spec);
  assert.equal(fs.readFileSync(victim, 'utf8'), 'root-owned\n');
});

test('hooks read only beneath the read set and the declared read paths', async (t) => {
  const secret = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-secret-'));
  const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-shared-'));
  t.after(() => { fs.rmSync(secret, { recursive: true }); fs.rmSync(shared, { recursive: true }); });
  fs.writeFileSync(path.join(secret, 'key'), 'private');
  fs.writeFileSync(path.join(shared, 'table'), 'public');
  const { run } = await setup(t, { args: ['--read-path', shared] });
  for (const [spec, want] of [
    [`read:${path.join(secret, 'key')}`, /Permission denied/],
    [`read:${path.join(shared, 'table')}`, /ok, read 6 bytes/],
    [`write:${path.join(shared, 'table')}`, /Permission denied/],
    ['read:/etc/shadow', /Permission denied/],
    ['read:/etc/passwd', /Permission denied/],
    ['read:/sys/devices/system/cpu/online', /ok, read [1-9]/],
    ['read:/proc/self/status', /ok, read 64 bytes/],
    ['read:/dev/null', /ok, read 0 bytes/],
    ['rdwr:/dev/null', /Permission denied/],
  ]) assert.match(await run(spec), want, spec);
  assert.equal(fs.readFileSync(path.join(shared, 'table'), 'utf8'), 'public');
});

test('a hook cannot signal a process outside its domain, nor open its /proc memory, root or environment', async (t) => {
  // A target the nodeserver's uid and (empty) capabilities could reach
  // without Landlock: the same uid, no capabilities (the kernel's ptrace
  // check would already refuse a target with more capabilities).
  const sleeper = ROOT_USER
    ? spawn('setpriv', ['--bounding-set=-all', '--inh-caps=-all', 'sleep', '120'], { stdio: 'ignore' })
    : spawn('sleep', ['120'], { stdio: 'ignore' });
  t.after(() => { try { sleeper.kill('SIGKILL'); } catch { /* gone */ } });
  await until(() => isAlive(sleeper.pid));
  // kill is allowed by seccomp here (without it only the own pid may be
  // signalled): what refuses is Landlock's signal scope (ABI 6).
  const { drv, run } = await setup(t, { args: ['--sandbox-syscall', 'kill'] });
  const sup = roles(drv.proc.pid).supervisor;
  assert.ok(landlockAbi(drv.stderr) >= 1, 'this kernel has Landlock');
  await until(() => (procStatus(sleeper.pid) || {}).CapEff === '0000000000000000' || !ROOT_USER);
  if (landlockAbi(drv.stderr) >= 6) {
    // EPERM from Landlock's scope, or ESRCH first: the nodeserver's pid
    // namespace has no such pid (policy/ns.c); either layer refuses.
    assert.match(await run(`kill:${sleeper.pid}`), /Operation not permitted|No such process/);
    assert.match(await run(`kill:${sup}`), /Operation not permitted|No such process/);
    await run(`setown:${sleeper.pid}`);
    await sleep(300);
    assert.ok(isAlive(sleeper.pid), 'the sleep outside the domain survived kill and F_SETOWN+F_SETSIG');
    assert.ok(isAlive(sup), 'the supervisor survived');
  } else {
    t.diagnostic(`Landlock ABI ${landlockAbi(drv.stderr)}: no signal scope (needs 6)`);
  }
  // ptrace-class access across domains is refused by any Landlock ABI.
  for (const spec of [`rdwr:/proc/${sleeper.pid}/mem`, `read:/proc/${sleeper.pid}/environ`,
    `read:/proc/${sleeper.pid}/root/etc/hostname`, `rdwr:/proc/${sup}/mem`, `read:/proc/${sup}/environ`]) {
    // EACCES from Landlock, or ENOENT first: the pid is not in the
    // nodeserver's pid namespace and /proc (policy/ns.c).
    assert.match(await run(spec), /Permission denied|No such file or directory/, spec);
  }
  assert.match(await run('read:/proc/self/environ'), /ok, read/, 'its own is readable');
});

const SPEC = (name) => `${DRIVER}_${name}`;

// The nodeserver's copy of the CDI list (nodeserver/ns_mirror.c) is kept
// by its reader thread; an init hook runs before that thread, and frames
// the supervisor sent are read only at its next CDI request: a second
// list there must ask, not answer from a copy that missed a removal.
test('an init hook listing twice sees a spec someone removed in between', async (t) => {
  const root = makeRoot(DRIVER);
  const cdi = path.join(root.dir, 'cdi');
  const probes = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-probes-'));
  const go = path.join(probes, 'go');
  const drv = new TestDriver(root, ['--state-dir', path.join(root.dir, 'state'), '--cdi-dir', cdi, '--read-path', probes,
    ...(ROOT_USER ? ['--sandbox-user', 'nodeserver:0:0'] : ['--allow-uid', String(process.getuid())])],
  { env: { KP_TEST_INIT_PROBE: `cdi-write:${SPEC('i1.json')};cdi-write:${SPEC('i2.json')};cdi-list;wait:${go};cdi-list` } });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    root.cleanup();
    fs.rmSync(probes, { recursive: true, force: true });
  });
  await drv.stderrMatch(/init probe: cdi-list : ok[^\n]*i1\.json/);
  fs.rmSync(path.join(cdi, SPEC('i1.json')));
  // The supervisor read the event (and sent it on) before the next list.
  await drv.stderrMatch(/CDI directory: 1 spec of this driver removed by someone else/);
  fs.writeFileSync(go, '');
  await drv.ready();
  const lists = [...drv.stderr.matchAll(/init probe: cdi-list : ok([^\n]*)/g)].map((m) => m[1]);
  assert.equal(lists.length, 2, drv.stderr);
  assert.match(lists[1], /i2\.json/);
  assert.doesNotMatch(lists[1], /i1\.json/, 'the second list names the removed spec');
});

test('the CDI broker writes and removes specs atomically, root-owned 0644; the nodeserver itself cannot write there', async (t) => {
  const { drv, cdi, run } = await setup(t, { env: { KP_TEST_INIT_PROBE: `cdi-write:${SPEC('init.json')}:400` } });
  // The init hook (before the sandbox, before the reader thread).
  await drv.stderrMatch(/init probe: cdi-write test\.example\.com_init\.json: ok/);
  assert.equal(fs.statSync(path.join(cdi, SPEC('init.json'))).size, 400);
  assert.equal(fs.statSync(cdi).mode & 0o777, 0o755, 'created 0755');
  const before = roles(drv.proc.pid).nodeserver;
  const f = path.join(cdi, SPEC('c1.json'));
  assert.match(await run(`cdi-write:${SPEC('c1.json')}:200`), /cdi-write .*: ok/);
  let st = fs.statSync(f);
  assert.equal(st.size, 200);
  assert.equal(st.mode & 0o7777, 0o644);
  assert.equal(st.uid, process.getuid(), 'owned by the supervisor (root on a node)');
  const written = JSON.parse(fs.readFileSync(f, 'utf8'));
  assert.equal(written.kind, `${DRIVER}/test`, 'a spec the broker checked (supervisor/cdi_check.c)');
  assert.match(written.annotations.pad, /^a+$/);
  const ino = st.ino;
  // The same content again (a journal replayed after a restart asks for
  // every spec it wrote): answered ok, the file left as it is.
  await sleep(20);
  assert.match(await run(`cdi-write:${SPEC('c1.json')}:200`), /cdi-write .*: ok/);
  const same = fs.statSync(f);
  assert.equal(same.ino, ino, 'an identical spec is not written again');
  assert.equal(same.mtimeMs, st.mtimeMs, 'an identical spec is not written again');
  assert.match(await run(`cdi-write:${SPEC('c1.json')}:5000`), /: ok/);
  st = fs.statSync(f);
  assert.equal(st.size, 5000);
  assert.notEqual(st.ino, ino, 'replaced by rename, not rewritten in place');
  // A file whose mode was changed by hand is not what the broker wrote.
  fs.chmodSync(f, 0o600);
  assert.match(await run(`cdi-write:${SPEC('c1.json')}:5000`), /: ok/);
  assert.notEqual(fs.statSync(f).ino, st.ino, 'a file of another mode is replaced');
  assert.equal(fs.statSync(f).mode & 0o7777, 0o644);
  st = fs.statSync(f);
  assert.match(await run(`cdi-write:${SPEC('c2.json')}:200`), /: ok/);
  const listed = (await run('cdi-list')).match(/cdi-list : ok(.*)$/)[1].split(',').sort();
  assert.deepEqual(listed, [SPEC('c1.json'), SPEC('c2.json'), SPEC('init.json')]);
  assert.deepEqual(fs.readdirSync(cdi).sort(), [SPEC('c1.json'), SPEC('c2.json'), SPEC('init.json')], 'no temporary file left');
  assert.match(await run(`cdi-remove:${SPEC('c1.json')}`), /: ok/);
  assert.ok(!fs.existsSync(f));
  assert.match(await run(`cdi-remove:${SPEC('c1.json')}`), /: ok/, 'a missing file is not an error');
  // The nodeserver's own access to the directory (Landlock).
  assert.match(await run(`write:${path.join(cdi, SPEC('direct.json'))}`), /Permission denied/);
  assert.match(await run(`unlink:${path.join(cdi, SPEC('c2.json'))}`), /Permission denied/);
  assert.ok(fs.existsSync(path.join(cdi, SPEC('c2.json'))));
  assert.equal(roles(drv.proc.pid).nodeserver, before);
});

test('the CDI broker refuses other drivers\' names, paths, dot-files, big or non-UTF-8 content: an error, not a kill', async (t) => {
  const { root, drv, cdi, run } = await setup(t);
  fs.writeFileSync(path.join(cdi, 'other.example.com_x.json'), 'theirs');
  const before = roles(drv.proc.pid).nodeserver;
  const rule = /KP_EINVAL .*not <driver name>_ then 1 to 200 letters/;
  for (const name of ['other.example.com_x.json', 'test.example.com.json', `${DRIVER}_x.txt`, `${DRIVER}_x.yaml`, `${DRIVER}_.json`,
    `${DRIVER}_..json`, `${DRIVER}_a/../../escaped.json`, '..', `../${DRIVER}_x.json`, `${DRIVER}_x.json/`,
    `${DRIVER}_${'a'.repeat(201)}.json`, `.${DRIVER}_x.json`]) {
    assert.match(await run(`cdi-write:${name}:20`), rule, name);
    assert.match(await run(`cdi-remove:${name}`), rule, name);
  }
  assert.equal(fs.readFileSync(path.join(cdi, 'other.example.com_x.json'), 'utf8'), 'theirs', 'another driver\'s file untouched');
  assert.ok(!fs.existsSync(path.join(root.dir, 'escaped.json')));
  assert.match(await run(`cdi-write:${SPEC('big.json')}:${256 * 1024 + 1}`), /KP_EINVAL .*more than 256 KiB/);
  assert.match(await run(`cdi-write:${SPEC('max.json')}:${256 * 1024}`), /: ok/);
  assert.match(await run(`cdi-write-bad:${SPEC('bin.json')}:20`), /KP_EINVAL .*not UTF-8 text \(byte 7\)/);
  assert.ok(!fs.existsSync(path.join(cdi, SPEC('bin.json'))));
  assert.deepEqual(fs.readdirSync(cdi).sort(), ['other.example.com_x.json', SPEC('max.json')]);
  assert.equal(roles(drv.proc.pid).nodeserver, before, 'the nodeserver was not restarted');
  // Frames that bypass the wrapper: a bad name is refused by the
  // supervisor all the same (an answer, logged); a frame breaking the
  // field rules (content over 256 KiB) is a violation.
  await run(`raw-cdi:../escaped.json:20`);
  await drv.stderrMatch(/nodeserver: cdi_write refused: CDI spec name "\.\.\/escaped\.json": not/);
  assert.ok(!fs.existsSync(path.join(root.dir, 'escaped.json')));
  assert.equal(roles(drv.proc.pid).nodeserver, before);
  await run(`raw-cdi:${SPEC('huge.json')}:${256 * 1024 + 1}`).catch(() => null);
  await drv.stderrMatch(/nodeserver: protocol violation: cdi_write\.content: longer than 262144 bytes; killing it/);
  await until(() => {
    const now = roles(drv.proc.pid).nodeserver;
    return now && now !== before;
  }, 15000);
  assert.ok(!fs.existsSync(path.join(cdi, SPEC('huge.json'))));
});

// The quota (finding 3 of the attack review): at most 1024 specs and
// 16 MiB under the driver's prefix, counted at start from what an earlier
// run left (other drivers' files do not count), a replaced file once.
test('the CDI broker keeps a driver to 1024 specs and 16 MiB, counted at start', async (t) => {
  const MiB16 = 16 * 1048576;
  const { cdi, run } = await setup(t, {
    prep: (root) => {
      const d = path.join(root.dir, 'cdi');
      fs.mkdirSync(d, { recursive: true });
      for (let i = 0; i < 1022; i++) fs.writeFileSync(path.join(d, SPEC(`old-${i}.json`)), '{}');
      fs.writeFileSync(path.join(d, SPEC('big.json')), Buffer.alloc(MiB16 - 1000 - 2 * 1022, 0x20));
      fs.writeFileSync(path.join(d, 'other.example.com_x.json'), Buffer.alloc(1048576, 0x20));
    },
  });
  assert.match(await run(`cdi-write:${SPEC('new-1.json')}:400`), /: ok/, 'the 1024th spec');
  assert.match(await run(`cdi-write:${SPEC('new-2.json')}:200`),
    /KP_ENOSPC .*this driver has 1024 specs, at most 1024 are allowed \(remove some first\)/);
  assert.match(await run(`cdi-write:${SPEC('new-1.json')}:1000`), /: ok/, 'a replaced spec counts once: 16 MiB exactly');
  assert.match(await run(`cdi-write:${SPEC('new-1.json')}:1001`),
    /KP_ENOSPC .*1001 bytes would make this driver's specs 16777217 bytes, over 16777216/);
  assert.match(await run(`cdi-remove:${SPEC('big.json')}`), /: ok/);
  assert.match(await run(`cdi-write:${SPEC('new-2.json')}:200`), /: ok/, 'room again after a remove');
  assert.ok(!fs.existsSync(path.join(cdi, SPEC('big.json'))));
});

test('state directories the supervisor refuses: a symlink, a file, a foreign owner, group-writable, no parent, holding a socket', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const start = async (args) => {
    const d = new TestDriver(root, args);
    const l = await d.line(['ready', 'error']);
    d.kill();
    await d.exited;
    return l;
  };
  const target = path.join(root.dir, 'real');
  fs.mkdirSync(target);
  fs.symlinkSync(target, path.join(root.dir, 'link'));
  fs.writeFileSync(path.join(root.dir, 'file'), '');
  fs.mkdirSync(path.join(root.dir, 'gw'), { mode: 0o770 });
  fs.chmodSync(path.join(root.dir, 'gw'), 0o770);
  const cases = [
    [path.join(root.dir, 'link'), /state directory .*link: is a symbolic link/],
    [path.join(root.dir, 'file'), /state directory .*file: is not a directory/],
    [path.join(root.dir, 'gw'), /group- or world-writable \(mode 770\)/],
    [path.join(root.dir, 'no', 'such'), /its parent must exist/],
    [path.dirname(root.draSock), /must not contain the plugin or registrar socket/],
  ];
  if (ROOT_USER) {
    fs.mkdirSync(path.join(root.dir, 'foreign'));
    fs.chownSync(path.join(root.dir, 'foreign'), 4321, 4321);
    cases.push([path.join(root.dir, 'foreign'), /owned by uid 4321, not root or the nodeserver's uid \d+/]);
  }
  for (const [dir, want] of cases) {
    const l = await start(['--state-dir', dir, '--cdi-dir', path.join(root.dir, 'cdi')]);
    assert.match(l, /^error KP_E/, dir);
    assert.match(l, want, dir);
  }
  assert.match(await start(['--state-dir', path.join(root.dir, 'cdi', 'x'), '--cdi-dir', path.join(root.dir, 'cdi')]),
    /must not contain one another/);
  assert.match(await start(['--cdi-dir', path.join(root.dir, 'file')]), /^error KP_EIO kp_cdi_directory: CDI directory .*file: Not a directory/);
  assert.ok(fs.lstatSync(target).isDirectory() && fs.readdirSync(target).length === 0, 'the symlink target untouched');
});

test('a state directory is chowned to a non-root nodeserver uid, which then writes it', { skip: !ROOT_USER && 'needs root (chown)' }, async (t) => {
  // The nodeserver must reach the state and probe directories.
  const prep = (root, probes) => { fs.chmodSync(root.dir, 0o755); fs.chmodSync(probes, 0o755); };
  const { drv, state, run } = await setup(t, { args: ['--sandbox-user', 'nodeserver:4321:4322'], prep });
  const st = fs.statSync(state);
  assert.equal(st.uid, 4321);
  assert.equal(st.gid, 4322);
  assert.match(await run(`write:${path.join(state, 'f')}`), /: ok$/);
  assert.equal(fs.statSync(path.join(state, 'f')).uid, 4321);
  assert.match(await run(`cdi-write:${SPEC('n.json')}:200`), /: ok/, 'the broker works for a non-root nodeserver');
  void drv;
});
