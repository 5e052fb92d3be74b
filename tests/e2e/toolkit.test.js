'use strict';
// The driver toolkit of issue 13 against a real plugin: the CDI spec
// builder and the prepared-claim journal (include/kubeletplugin.h,
// "Prepared-claim journal"), with tests/e2e/bin/kp_journaldriver.c, a
// driver written the way the header suggests. Kubelet is the simulator;
// the nodeserver runs sandboxed (as root: uid 0 without capabilities,
// Landlock; the journal lives in its state directory, CDI specs go
// through the supervisor).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { BUILD, makeRoot, TestDriver, roles, until, sleep, isAlive } = require('./lib/plugin');
const { readJournal, crc32 } = require('./lib/journal');

const BIN = path.join(BUILD, 'tests', 'kp_journaldriver');
const NOSYS = path.join(BUILD, 'tests', 'kp_nosys');
const ROOT_USER = process.getuid() === 0;
const JOURNAL = 'kubeletplugin-journal.json';
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });
const count = (text, re) => (text.match(new RegExp(re, 'g')) || []).length;
// The hook's stderr line reaches the test through the supervisor's relay,
// which may come after the gRPC answer: wait (bounded) until n lines are
// there, then give the count (an extra line still shows).
const seen = async (drv, re, n) => {
  await until(() => count(drv.stderr, re) >= n, 5000, 20).catch(() => {});
  await sleep(50);
  return count(drv.stderr, re);
};

// One driver; cdi: a CDI directory to share (default: its own).
// wrap: [program, args...] that runs the driver (tests/e2e/bin/kp_nosys).
async function start(t, { driver = 'test.example.com', cdi = null, sim = null, root: given = null, wrap = null } = {}) {
  const root = given || makeRoot(driver);
  const cdiDir = cdi || path.join(root.dir, 'cdi');
  const journalDir = path.join(root.dir, 'state');
  const drv = new TestDriver(root, ['--cdi-dir', cdiDir, '--journal-dir', journalDir,
    ...(ROOT_USER ? ['--sandbox-user', 'nodeserver:0:0'] : ['--allow-uid', String(process.getuid())])],
  wrap ? { binary: wrap[0], prefixArgs: [...wrap.slice(1), BIN] } : { binary: BIN });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    if (!given) root.cleanup();
  });
  await drv.ready();
  const s = sim || new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  if (!sim) t.after(() => s.stop());
  await s.waitForDriver(driver);
  const specOf = (c) => path.join(cdiDir, `${driver}_claim-${c.uid}.json`);
  // The schema-1 snapshot's fields, with the claims as the change log
  // beside it makes them (tests/e2e/lib/journal.js).
  const journal = () => {
    const j = readJournal(journalDir);
    return { ...j.snapshot, claims: j.claims };
  };
  return { root, drv, sim: s, driver, cdiDir, journalDir, specOf, journal };
}

// The journal's checksum: the compact, key-sorted JSON without it.
function sorted(v) {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])]));
  return v;
}
function reseal(j) {
  const { checksum, ...rest } = j;
  const sum = crc32(Buffer.from(JSON.stringify(sorted(rest))));
  return { ...rest, checksum: `crc32:${sum.toString(16).padStart(8, '0')}` };
}

// SIGKILL the nodeserver; resolves once a new one serves again.
async function restartNodeserver(env) {
  const old = roles(env.drv.proc.pid).nodeserver;
  assert.ok(old, 'a nodeserver runs');
  const before = count(env.drv.stderr, 'prepared claims\\n');
  process.kill(old, 'SIGKILL');
  await until(() => !isAlive(old));
  await until(() => {
    const now = roles(env.drv.proc.pid).nodeserver;
    return now && now !== old && count(env.drv.stderr, 'prepared claims\\n') > before;
  }, 20000);
}

// Prepare, retrying while a restarted nodeserver is not connected yet
// (kubelet retries too).
async function prepare(env, claims) {
  for (let i = 0; ; i++) {
    try {
      return await env.sim.nodePrepareResources(env.driver, claims, { timeoutMs: 15000 });
    } catch (e) {
      if (i > 50 || /failed for claim/.test(e.message)) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

test('prepare writes a valid CDI spec and a journal entry; a repeat is answered by the journal; unprepare removes both', async (t) => {
  const env = await start(t);
  const c = claim('gpu-a');
  const res = await prepare(env, [c]);
  const dev = res.claims[c.uid].devices[0];
  assert.deepEqual(dev.cdiDeviceIds || dev.cdi_device_ids, [`${env.driver}/test=gpu-a`]);
  const spec = JSON.parse(fs.readFileSync(env.specOf(c), 'utf8'));
  assert.equal(spec.cdiVersion, '0.3.0', 'the lowest version its fields need');
  assert.equal(spec.kind, `${env.driver}/test`);
  assert.deepEqual(spec.devices, [{ name: 'gpu-a', containerEdits: { env: ['TEST_CLAIM=default/gpu-a'] } }]);
  assert.equal(fs.statSync(env.specOf(c)).mode & 0o777, 0o644);
  const j = env.journal();
  assert.equal(j.schema, 1);
  assert.equal(j.driver, env.driver);
  assert.equal(j.bootId, fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
    'the nodeserver read the boot ID inside its sandbox');
  assert.match(j.checksum, /^crc32:[0-9a-f]{8}$/);
  assert.deepEqual(j.claims[c.uid], {
    namespace: 'default', name: 'gpu-a', cdiSpec: path.basename(env.specOf(c)), data: { device: 'gpu-a' },
    devices: [{ requests: [], pool: 'pool-a', device: 'gpu-a', cdiDeviceIds: [`${env.driver}/test=gpu-a`] }],
  });
  assert.deepEqual(fs.readdirSync(env.journalDir).filter((f) => f.startsWith('.')), [], 'no temporary file left');

  // A write replaces the snapshot (a rename) or appends to the log:
  // the same inode and log size, no write.
  const ino = () => `${fs.statSync(path.join(env.journalDir, JOURNAL)).ino} ${fs.statSync(path.join(env.journalDir, 'kubeletplugin-journal.log')).size}`;
  let written = ino();
  const again = await prepare(env, [c]);
  assert.deepEqual(again.claims[c.uid], res.claims[c.uid], 'the recorded result again');
  assert.equal(await seen(env.drv, 'prepare hook: default/gpu-a', 1), 1, 'the hook ran once');
  assert.equal(ino(), written, 'a claim answered by the journal writes nothing');
  await env.sim.nodeUnprepareResources(env.driver, [claim('never-prepared')]);
  assert.equal(ino(), written, 'an unprepare of a claim the journal does not know writes nothing');
  await restartNodeserver(env);
  assert.deepEqual(env.journal().claims[c.uid], j.claims[c.uid], 'a restart compacts the log into the snapshot, the same entry');
  assert.equal(readJournal(env.journalDir).log.changes, 0);
  written = ino();
  await restartNodeserver(env);
  assert.equal(ino(), written, 'a restart of the nodeserver within the same boot with an empty log writes nothing');
  assert.deepEqual((await prepare(env, [c])).claims[c.uid], res.claims[c.uid], 'and still answers from it');

  await env.sim.nodeUnprepareResources(env.driver, [c]);
  await env.drv.stderrMatch(/unprepare hook: gpu-a data=\{"device":"gpu-a"\}/);
  assert.equal(fs.existsSync(env.specOf(c)), false, 'spec removed');
  assert.equal(env.journal().claims[c.uid], undefined, 'entry removed');
  // Unknown now: succeeds without the hook.
  await env.sim.nodeUnprepareResources(env.driver, [c]);
  assert.equal(await seen(env.drv, 'unprepare hook: gpu-a', 1), 1);
  // And prepared anew by the hook.
  await prepare(env, [c]);
  assert.equal(await seen(env.drv, 'prepare hook: default/gpu-a', 2), 2);
});

// Specs the supervisor saw removed by someone else (its inotify watch,
// supervisor/cdi_watch.c), from its log lines so far.
const removedSeen = (env) => [...env.drv.stderr.matchAll(/CDI directory: (\d+) specs? of this driver removed by someone else/g)]
  .reduce((n, m) => n + Number(m[1]), 0);

// The supervisor's own log line for each CdiList it answers (-v 3).
const LISTED = 'CDI specs listed for nodeserver';

test('a claim prepared before is answered from the nodeserver\'s copy of the CDI list, without asking the supervisor; a spec someone removes is written again', async (t) => {
  const env = await start(t);
  const c = claim('mirror-a');
  const written = () => new RegExp(`CDI spec ${path.basename(env.specOf(c)).replace(/\./g, '\\.')} written`, 'g');
  await prepare(env, [c]);
  // The supervisor logs its own lines in order: its line for this write
  // comes after the start's list (reconcile), the one for the repair
  // below after any list the calls in between made.
  await env.drv.stderrMatch(written());
  const listed = count(env.drv.stderr, LISTED);
  assert.ok(listed >= 1, `the start listed the specs (reconcile):\n${env.drv.stderr}`);
  // The watch's inotify fd stays in the supervisor: no child (forked,
  // not exec'ed) inherits it.
  const inotifyFds = (pid) => fs.readdirSync(`/proc/${pid}/fd`)
    .filter((fd) => { try { return fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:inotify'; } catch { return false; } }).length;
  const r = roles(env.drv.proc.pid);
  assert.ok(inotifyFds(r.supervisor) >= 1, 'the supervisor watches');
  for (const role of ['nodeserver', 'registrar', 'publisher']) {
    if (r[role]) assert.equal(inotifyFds(r[role]), 0, `${role} holds no inotify fd`);
  }
  assert.ok(r.nodeserver, 'the nodeserver was looked at');
  for (let i = 0; i < 6; i++) {
    const r = await prepare(env, [c]);
    assert.ok(!r.claims[c.uid].error);
  }
  // Removed by someone else: the supervisor's watch tells the nodeserver,
  // and a prepare after that writes the spec again (write_spec).
  const want = fs.readFileSync(env.specOf(c), 'utf8');
  fs.rmSync(env.specOf(c));
  await until(() => removedSeen(env) === 1, 10000);
  await prepare(env, [c]);
  assert.ok(fs.existsSync(env.specOf(c)), 'written again by the next prepare');
  assert.equal(fs.readFileSync(env.specOf(c), 'utf8'), want);
  await env.drv.stderrMatch(/write_spec: mirror-a /);
  await until(() => (env.drv.stderr.match(written()) || []).length === 2, 10000);
  assert.equal(count(env.drv.stderr, LISTED), listed, `no list after the start:\n${env.drv.stderr}`);
  assert.equal(await seen(env.drv, 'prepare hook: default/mirror-a', 1), 1, 'the hook ran once');
});

test('without inotify the nodeserver asks for the CDI list on every claim prepared before, and sees a removed spec at once', async (t) => {
  const env = await start(t, { wrap: [NOSYS, 'inotify_init1,inotify_init'] });
  await env.drv.stderrMatch(/inotify_init1: the nodeserver lists the CDI specs on every call: Function not implemented/);
  const c = claim('nowatch-a');
  await prepare(env, [c]);
  await prepare(env, [c]);
  await env.drv.stderrMatch(new RegExp(`${LISTED}: \\d+ \\(not watched\\)`));
  const before = count(env.drv.stderr, LISTED);
  fs.rmSync(env.specOf(c));
  await prepare(env, [c]);
  assert.ok(fs.existsSync(env.specOf(c)), 'written again by the very next prepare');
  await env.drv.stderrMatch(/write_spec: nowatch-a /);
  await until(() => count(env.drv.stderr, LISTED) > before, 10000);
});

test('an invalid CDI device ID fails its claim with the ID and the rule; nothing is left behind', async (t) => {
  const env = await start(t);
  const bad = claim('badcdi-x');
  const good = claim('fine');
  await assert.rejects(prepare(env, [good, bad]),
    /failed for claim default\/badcdi-x: invalid device badcdi-x: cdi_device_ids\[0\] "not a cdi id badcdi-x": not <vendor>\/<class>=<name>/);
  assert.equal(fs.existsSync(env.specOf(bad)), false, 'its spec was removed');
  assert.equal(env.journal().claims[bad.uid], undefined);
  assert.ok(env.journal().claims[good.uid], 'the other claim of the call is prepared');
});

test('reconcile: a deleted CDI directory is repaired by the next prepare and by the start; orphans removed, other files kept; a restarted nodeserver stays idempotent', async (t) => {
  const env = await start(t);
  const a = claim('dev-a');
  const b = claim('dev-b');
  await prepare(env, [a, b]);
  fs.rmSync(env.cdiDir, { recursive: true, force: true });
  // The nodeserver hears of a removal when the supervisor has read its
  // inotify event (supervisor/cdi_watch.c), a moment after the rm.
  await until(() => removedSeen(env) === 2, 10000);

  // The next prepare of a prepared claim writes its spec again (the
  // supervisor makes the directory again first). Log lines travel apart
  // from the answer (relayed by the supervisor): wait for them.
  await prepare(env, [a]);
  assert.ok(fs.existsSync(env.specOf(a)), `spec rewritten:\n${env.drv.stderr}`);
  await env.drv.stderrMatch(/write_spec: dev-a /);
  await env.drv.stderrMatch(/broker\] CDI directory \S+ was removed; made it again/);
  assert.equal(fs.existsSync(env.specOf(b)), false, 'b not asked for yet');
  assert.equal(await seen(env.drv, 'prepare hook: default/dev-a', 1), 1);

  // At the (restarted) nodeserver's start: b's spec is written again, an
  // orphaned claim spec of this driver is removed, a spec not named for
  // a claim is kept.
  const orphan = path.join(env.cdiDir, `${env.driver}_claim-${randomUUID()}.json`);
  const other = path.join(env.cdiDir, `${env.driver}_static.json`);
  const body = JSON.stringify({ cdiVersion: '0.3.0', kind: `${env.driver}/test`, devices: [{ name: 'x', containerEdits: {} }] });
  fs.writeFileSync(orphan, body);
  fs.writeFileSync(other, body);
  await restartNodeserver(env);
  await until(() => fs.existsSync(env.specOf(b)), 10000);
  await env.drv.stderrMatch(/write_spec: dev-b /);
  await until(() => !fs.existsSync(orphan), 10000);
  await env.drv.stderrMatch(/orphaned CDI spec \(no journal entry\) test\.example\.com_claim-[0-9a-f-]+\.json removed/);
  assert.ok(fs.existsSync(other), 'not a claim spec: left alone');

  const res = await prepare(env, [a, b]);
  assert.equal(res.claims[a.uid].devices[0].deviceName || res.claims[a.uid].devices[0].device_name, 'dev-a');
  assert.equal(count(env.drv.stderr, 'prepare hook:'), 2, 'no hook call after the restart either');
});

test('two drivers sharing one CDI directory never touch each other\'s specs', async (t) => {
  const shared = fs.mkdtempSync('/tmp/kp-cdi-shared-');
  fs.chmodSync(shared, 0o755);
  t.after(() => fs.rmSync(shared, { recursive: true, force: true }));
  const one = await start(t, { driver: 'one.example.com', cdi: shared });
  const two = await start(t, { driver: 'two.example.com', cdi: shared });
  const c1 = claim('c1');
  const c2 = claim('c2');
  await prepare(one, [c1]);
  await prepare(two, [c2]);
  // Each one's restart reconciles: the other's claim spec has no entry
  // in its journal, and stays.
  await restartNodeserver(two);
  await restartNodeserver(one);
  assert.ok(fs.existsSync(one.specOf(c1)) && fs.existsSync(two.specOf(c2)),
    `both specs kept:\n${fs.readdirSync(shared)}`);
  assert.doesNotMatch(one.drv.stderr + two.drv.stderr, /orphaned CDI spec/);
  await prepare(two, [c2]);
  await two.sim.nodeUnprepareResources(two.driver, [c2]);
  assert.equal(fs.existsSync(two.specOf(c2)), false);
  assert.ok(fs.existsSync(one.specOf(c1)), 'two\'s unprepare left one\'s spec');
  assert.deepEqual(fs.readdirSync(shared).sort(), [path.basename(one.specOf(c1))]);
});

test('a corrupt journal is moved aside and reported; the nodeserver starts empty and keeps the specs', async (t) => {
  const env = await start(t);
  const c = claim('kept');
  await prepare(env, [c]);
  await restartNodeserver(env); // the claim from the log into the snapshot
  const file = path.join(env.journalDir, JOURNAL);
  assert.match(fs.readFileSync(file, 'utf8'), /"kept"/);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"kept"', '"edit"'));
  await restartNodeserver(env);
  await env.drv.stderrMatch(/journal kubeletplugin-journal\.json: checksum mismatch .*moved aside to kubeletplugin-journal\.json\.corrupt-\d+; starting with an empty journal/);
  assert.equal(fs.readdirSync(env.journalDir).filter((f) => f.startsWith(`${JOURNAL}.corrupt-`)).length, 1);
  assert.deepEqual(env.journal().claims, {}, 'a fresh journal');
  assert.ok(fs.existsSync(env.specOf(c)), 'its claim may still be in use: spec kept');
  assert.match(env.drv.stderr, /has no entry, kept \(the journal was unreadable\)/);
  // Reported to the driver once, as recoverable, in the supervisor's words.
  const l = await env.drv.line(['errcb KP_EIO']);
  assert.match(l, /^errcb KP_EIO rec=1 the prepared-claim journal was unreadable and was moved aside/);
  // Serving: the claim is prepared again by the hook.
  await prepare(env, [c]);
  assert.equal(await seen(env.drv, 'prepare hook: default/kept', 2), 2);
});

test('entries from an earlier boot go to previous_boot, which keeps or forgets each; the boot ID is then this one', async (t) => {
  const root = makeRoot('test.example.com');
  t.after(() => root.cleanup());
  const first = await start(t, { root });
  const keep = claim('keep-1');
  const forget = claim('forget-1');
  await prepare(first, [keep, forget]);
  await first.drv.stop();
  first.sim.stop();
  // As after a reboot: another boot ID, the CDI directory (a tmpfs) empty.
  const file = path.join(first.journalDir, JOURNAL);
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  assert.equal(reseal(j).checksum, j.checksum, 'the test computes the checksum as the library does');
  j.bootId = '00000000-0000-4000-8000-000000000000';
  fs.writeFileSync(file, JSON.stringify(reseal(j)));
  fs.rmSync(first.cdiDir, { recursive: true, force: true });
  fs.mkdirSync(first.cdiDir);

  const env = await start(t, { root });
  await env.drv.stderrMatch(/journal: 2 prepared claims recorded in an earlier boot \(boot ID 00000000-0000-4000-8000-000000000000, now [0-9a-f-]{36}\)/);
  assert.match(env.drv.stderr, /previous_boot: keep-1/);
  assert.match(env.drv.stderr, /previous_boot: forget-1/);
  assert.match(env.drv.stderr, /claim default\/forget-1 from an earlier boot forgotten/);
  const now = env.journal();
  assert.equal(now.bootId, fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
  assert.deepEqual(Object.keys(now.claims), [keep.uid]);
  assert.ok(fs.existsSync(env.specOf(keep)), 'the kept claim\'s spec written again at the start');
  assert.equal(fs.existsSync(env.specOf(forget)), false);
  // kubelet prepares both again after the reboot: the kept one from the
  // journal, the forgotten one by the hook.
  await prepare(env, [keep, forget]);
  assert.equal(count(env.drv.stderr, 'prepare hook: default/keep-1'), 0);
  assert.equal(await seen(env.drv, 'prepare hook: default/forget-1', 1), 1);
});
