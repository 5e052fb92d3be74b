'use strict';
// The prepared-claim journal under two instances of one driver (issue 28,
// finding 1): a rolling update (kp_rolling_update), both instances
// sharing the state directory (the journal) and the CDI directory, hooks
// serialized through serialize.lock (nodeserver/flock.c). Calls go one at
// a time to a chosen instance in the pattern A, B, B (the one that lost
// and resurrected entries when the journal told the other's writes by
// inode, which ext4 reuses) and in random interleavings; after each
// phase the journal (snapshot and change log, read as the library reads
// them), the CDI specs on disk and what the client was told is prepared
// must be the same set. Also: the journal of schema 2 across a stop and
// a restart in the append mode, the torn tail of the change log, and
// (finding 6) an unprepare with the state directory full. A ten-minute
// two-instance soak runs with KP_SOAK=1.
// Driver: tests/e2e/bin/kp_journaldriver.c.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { KubeletSim, proto } = require('../kubelet-sim');
const { rawUnary } = require('../kubelet-sim/grpc-util');
const { makeRoot, TestDriver, BUILD, until, sleep, roles } = require('./lib/plugin');
const { readJournal } = require('./lib/journal');

const BIN = path.join(BUILD, 'tests', 'kp_journaldriver');
const DRIVER = 'test.example.com';
const UID_A = '11111111-2222-3333-4444-aaaaaaaaaaaa';
const UID_B = '11111111-2222-3333-4444-bbbbbbbbbbbb';
const ROOT_USER = process.getuid() === 0;
const SANDBOX = ROOT_USER ? ['--sandbox-user', 'nodeserver:0:0'] : ['--allow-uid', String(process.getuid())];

const claim = (n) => ({ namespace: 'default', name: `c-${n}`, uid: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}` });

// A small seeded PRNG (mulberry32): the same interleaving every run.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// tmpfs: the state directory a tmpfs of that size (unmounted before the
// clean-up).
function setup(t, tmpfs = null) {
  const root = makeRoot(DRIVER);
  root.state = path.join(root.dir, 'state');
  root.cdi = path.join(root.dir, 'cdi');
  fs.mkdirSync(root.state, { recursive: true });
  fs.mkdirSync(root.cdi, { recursive: true });
  if (tmpfs) execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${tmpfs},mode=0700`, 'tmpfs', root.state]);
  t.after(() => {
    if (tmpfs) execFileSync('umount', ['-l', root.state]);
    root.cleanup();
  });
  return root;
}

function instance(t, root, uid, binary = BIN) {
  const args = ['--cdi-dir', root.cdi, '--journal-dir', root.state, ...SANDBOX];
  if (uid) args.push('--kubelet-root-dir', root.dir, '--rolling-update-uid', uid);
  const drv = new TestDriver(root, args, { binary, paths: !uid });
  t.after(async () => { drv.kill(); await drv.exited; });
  return drv;
}

// One instance (append mode) registered with a kubelet simulator.
async function single(t) {
  const root = setup(t);
  const inst = instance(t, root, null);
  await inst.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  return { root, inst, sim };
}

async function instancesAB(sim) {
  const list = await until(() => {
    const l = sim.store.get(DRIVER) || [];
    return l.length === 2 && l.every((i) => i.connected) ? l : null;
  }, 15000);
  const of = (uid) => list.find((i) => i.endpoint.endsWith(`dra-${uid}.sock`));
  return [of(UID_A), of(UID_B)];
}

// One call at one instance; the claims it answered without an error.
async function call(inst, prepare, claims) {
  const kind = prepare ? 'NodePrepareResources' : 'NodeUnprepareResources';
  const body = proto.encode(proto.typeName(inst.api, `${kind}Request`), { claims });
  const res = await rawUnary(inst.client, `${inst.servicePrefix}${kind}`, body, 45000);
  assert.equal(res.code, 0, `${kind} at ${inst.endpoint}: ${res.details}`);
  const out = proto.decode(proto.typeName(inst.api, `${kind}Response`), res.buffer);
  for (const c of claims) {
    const r = out.claims[c.uid];
    assert.ok(r, `${kind} ${c.name}: no answer`);
    assert.equal(r.error || '', '', `${kind} ${c.name} at ${inst.endpoint}`);
  }
}

const specsOnDisk = (root) => fs.readdirSync(root.cdi).filter((f) => f.startsWith(`${DRIVER}_claim-`))
  .map((f) => f.slice(`${DRIVER}_claim-`.length, -'.json'.length)).sort();

// Journal, CDI directory and the client's view: one set.
function agree(root, prepared, what) {
  const want = [...prepared].sort();
  const j = readJournal(root.state);
  assert.deepEqual(Object.keys(j.claims).sort(), want, `${what}: the journal holds what the client was told is prepared`);
  assert.deepEqual(specsOnDisk(root), want, `${what}: one CDI spec for each prepared claim, no other`);
  for (const uid of want) assert.equal(j.claims[uid].cdiSpec, `${DRIVER}_claim-${uid}.json`);
}

async function twoInstances(t) {
  const root = setup(t);
  const a = instance(t, root, UID_A);
  await a.ready();
  const b = instance(t, root, UID_B);
  await b.ready();
  const sim = new KubeletSim({ registryDir: root.registry, version: '1.34', retryInitialMs: 100, healthStream: false }).start();
  t.after(() => sim.stop());
  const [ia, ib] = await instancesAB(sim);
  return { root, a, b, sim, ia, ib };
}

test('two instances, A,B,B: nothing lost, nothing resurrected (journal, CDI specs and client agree)', async (t) => {
  const { root, ia, ib } = await twoInstances(t);
  const at = [ia, ib, ib];
  const prepared = new Set();
  const N = 60;
  for (let n = 0; n < N; n++) {
    await call(at[n % 3], true, [claim(n)]);
    prepared.add(claim(n).uid);
  }
  agree(root, prepared, `after ${N} prepares`);
  // Every claim once more, at the other instance of the pattern: the
  // journal answers (no second spec, no lost entry).
  for (let n = 0; n < N; n++) await call(at[(n + 1) % 3], true, [claim(n)]);
  agree(root, prepared, 'after the repeats');
  for (let n = 0; n < N; n++) {
    await call(at[n % 3], false, [claim(n)]);
    prepared.delete(claim(n).uid);
  }
  agree(root, prepared, `after ${N} unprepares`);
});

test('two instances, random interleavings over hundreds of claims', async (t) => {
  const { root, ia, ib } = await twoInstances(t);
  const rand = rng(28);
  const prepared = new Set();
  let next = 1000;
  for (let i = 0; i < 400; i++) {
    const inst = rand() < 0.5 ? ia : ib;
    const live = [...prepared];
    const r = rand();
    if (r < 0.55 || live.length === 0) {
      const c = claim(next++);
      await call(inst, true, [c]);
      prepared.add(c.uid);
    } else if (r < 0.65) {
      const uid = live[Math.floor(rand() * live.length)];
      await call(inst, true, [{ namespace: 'default', name: `c-${parseInt(uid.slice(-12), 10)}`, uid }]);
    } else {
      const uid = live[Math.floor(rand() * live.length)];
      await call(inst, false, [{ namespace: 'default', name: `c-${parseInt(uid.slice(-12), 10)}`, uid }]);
      prepared.delete(uid);
    }
    if (i % 100 === 99) agree(root, prepared, `after ${i + 1} random calls`);
  }
});

test('append mode (no rolling update): a change appends one line; the log survives a restart and is compacted at a clean stop', async (t) => {
  const { root, inst: one, sim } = await single(t);
  const log = path.join(root.state, 'kubeletplugin-journal.log');
  const snap = path.join(root.state, 'kubeletplugin-journal.json');
  const lines = () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
  const snapBefore = fs.readFileSync(snap, 'utf8');
  const prepared = new Set();
  for (let n = 0; n < 5; n++) {
    await sim.nodePrepareResources(DRIVER, [claim(n)]);
    prepared.add(claim(n).uid);
    assert.equal(lines(), 2 + n, 'the header and one line a change');
  }
  await sim.nodeUnprepareResources(DRIVER, [claim(0)]);
  prepared.delete(claim(0).uid);
  assert.equal(lines(), 7);
  assert.equal(fs.readFileSync(snap, 'utf8'), snapBefore, 'the snapshot is not rewritten for a change');
  agree(root, prepared, 'in the log');
  // A torn change at the end (a crash in an append): dropped, the rest
  // kept, the next append writes over it.
  fs.appendFileSync(log, '0123abcd {"entry":{"namesp');
  const st = await one.stop();
  assert.equal(st.code, 0);
  const j = JSON.parse(fs.readFileSync(snap, 'utf8'));
  assert.deepEqual(Object.keys(j.claims).sort(), [...prepared].sort(), 'compacted into the schema-1 snapshot at the stop');
  assert.equal(j.schema, 1);
  assert.equal(lines(), 1, 'an empty log over it');
});

test('a torn change at the end of the log is dropped at the start, the claims before it kept', async (t) => {
  const { root, inst: first, sim } = await single(t);
  for (let n = 0; n < 3; n++) await sim.nodePrepareResources(DRIVER, [claim(n)]);
  // A crash: the nodeserver killed first, so nothing compacts.
  process.kill(roles(first.proc.pid).nodeserver, 'SIGKILL');
  first.kill('SIGKILL');
  await first.exited;
  const log = path.join(root.state, 'kubeletplugin-journal.log');
  const text = fs.readFileSync(log, 'utf8');
  fs.writeFileSync(log, text.slice(0, text.length - 20)); // the last change torn
  const second = instance(t, root, null);
  await second.ready();
  await second.stderrMatch(/kubeletplugin-journal\.log: change 3: torn or checksum mismatch at byte \d+; the changes from there on are dropped/);
  const j = readJournal(root.state);
  assert.deepEqual(Object.keys(j.claims).sort(), [claim(0).uid, claim(1).uid].sort(), 'the two whole changes kept, the journal not quarantined');
  assert.deepEqual(fs.readdirSync(root.state).filter((f) => f.includes('corrupt')), []);
  // The torn claim's spec has no entry: removed at the start (reconcile).
  assert.deepEqual(specsOnDisk(root), [claim(0).uid, claim(1).uid].sort());
});

// A rolling update's instance (write-through: every change rewrites the
// snapshot, so a full directory fails it at once; an append into the
// log's last page may still fit).
test('finding 6: with the state directory full, a failed unprepare keeps both the entry and the spec; the retry removes both', { skip: !ROOT_USER && 'needs root (a tmpfs mount)' }, async (t) => {
  const root = setup(t, '64k');
  const one = instance(t, root, UID_A);
  await one.ready();
  const sim = new KubeletSim({ registryDir: root.registry, version: '1.34', retryInitialMs: 100, healthStream: false }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  await sim.nodePrepareResources(DRIVER, [claim(1)]);
  const spec = path.join(root.cdi, `${DRIVER}_claim-${claim(1).uid}.json`);
  assert.ok(fs.existsSync(spec));
  // Fill the state directory to the last byte.
  const filler = path.join(root.state, 'filler');
  const fd = fs.openSync(filler, 'w');
  try {
    const block = Buffer.alloc(4096, 1);
    for (;;) fs.writeSync(fd, block);
  } catch (e) { assert.equal(e.code, 'ENOSPC'); }
  fs.closeSync(fd);
  try { for (;;) fs.appendFileSync(filler, 'x'); } catch (e) { assert.equal(e.code, 'ENOSPC'); }
  const res = await sim.nodeUnprepareResources(DRIVER, [claim(1)]).catch((e) => e);
  assert.match(String(res.message), /journal: write \.kubeletplugin-journal\.json\.tmp: No space left on device \(retry the unprepare\)/);
  assert.ok(fs.existsSync(spec), 'the spec stays while the journal keeps the claim');
  assert.ok(readJournal(root.state).claims[claim(1).uid], 'the entry stays');
  fs.rmSync(filler);
  await sim.nodeUnprepareResources(DRIVER, [claim(1)]);
  assert.ok(!fs.existsSync(spec), 'the retry removed the spec');
  assert.equal(readJournal(root.state).claims[claim(1).uid], undefined, 'and the entry');
});

// An older release, which reads and writes only the schema-1 snapshot:
// KP_OLD_BUILD (a build of an earlier main; /work/wt/base/build where it
// is). Forward (old, then new) and back (new, then old: a rollback after
// a clean stop, which compacts the log into the snapshot): every claim
// is answered from the journal, no hook runs again, no spec is lost.
const OLD = process.env.KP_OLD_BUILD || '/work/wt/base/build';
const OLD_BIN = path.join(OLD, 'tests', 'kp_journaldriver');
test('an older release (schema 1 only) before and after this one: no entry lost either way', { skip: !fs.existsSync(OLD_BIN) && `no older build (KP_OLD_BUILD) at ${OLD}` }, async (t) => {
  const root = setup(t);
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  const prepared = new Set();
  const hooks = (drv) => (drv.stderr.match(/prepare hook: default\/c-\d+/g) || []).length;
  let n = 0;
  for (const [bin, what] of [[OLD_BIN, 'old'], [BIN, 'new'], [OLD_BIN, 'old again (a rollback)'], [BIN, 'new again']]) {
    const drv = instance(t, root, null, bin);
    await drv.ready();
    await until(() => sim.getDriver(DRIVER)?.connected, 15000);
    // Everything prepared before: from the journal, no hook.
    for (const uid of prepared) await sim.nodePrepareResources(DRIVER, [{ namespace: 'default', name: `c-${parseInt(uid.slice(-12), 10)}`, uid }]);
    assert.equal(hooks(drv), 0, `${what}: every claim prepared before is answered from the journal`);
    for (let k = 0; k < 3; k++, n++) {
      await sim.nodePrepareResources(DRIVER, [claim(n)]);
      prepared.add(claim(n).uid);
    }
    await sim.nodeUnprepareResources(DRIVER, [claim(n - 3)]);
    prepared.delete(claim(n - 3).uid);
    agree(root, prepared, what);
    assert.equal((await drv.stop()).code, 0);
    await until(() => !sim.getDriver(DRIVER)?.connected, 15000).catch(() => {});
    agree(root, prepared, `${what}, stopped`);
    assert.equal(Object.keys(JSON.parse(fs.readFileSync(path.join(root.state, 'kubeletplugin-journal.json'), 'utf8')).claims).length,
      prepared.size, `${what}: at the stop the schema-1 snapshot holds every claim`);
  }
});

// KP_SOAK=1: ten minutes (KP_SOAK_S), both instances loaded with random
// calls at once, B stopped midway and started again; at the end the
// journal, the CDI specs and the client's view are one set.
test('soak: two instances, random interleavings under load, one restarted midway', { skip: !process.env.KP_SOAK && 'KP_SOAK=1' }, async (t) => {
  const secs = Number(process.env.KP_SOAK_S || 600);
  const two = await twoInstances(t);
  const { root, sim } = two;
  let { b, ia, ib } = two;
  const rand = rng(2828);
  const prepared = new Set();
  const busy = new Set();
  let next = 0;
  let calls = 0;
  let bDown = false;
  const end = Date.now() + secs * 1000;
  async function worker(w) {
    while (Date.now() < end) {
      const inst = bDown || rand() < 0.5 ? ia : ib;
      const live = [...prepared].filter((u) => !busy.has(u));
      let c;
      let prep = true;
      // At most 600 prepared (the supervisor allows 1,024 specs a driver).
      if ((rand() < 0.55 && prepared.size + busy.size < 600) || live.length === 0) c = claim(next++);
      else {
        const uid = live[Math.floor(rand() * live.length)];
        c = { namespace: 'default', name: `c-${parseInt(uid.slice(-12), 10)}`, uid };
        prep = rand() < 0.2;
      }
      busy.add(c.uid);
      try {
        await call(inst, prep, [c]);
        if (prep) prepared.add(c.uid); else prepared.delete(c.uid);
        calls++;
      } catch (e) {
        // B stopping: a call in flight there may fail; kubelet retries it.
        if (inst !== ib) throw e;
        await call(ia, prep, [c]);
        if (prep) prepared.add(c.uid); else prepared.delete(c.uid);
      } finally { busy.delete(c.uid); }
    }
  }
  // A worker's failure ends it and fails the test at the end (the
  // instances still stopped by the clean-up).
  const failures = [];
  const workers = [1, 2, 3, 4].map((w) => worker(w).catch((e) => { failures.push(e.message); }));
  await sleep(secs * 500);
  bDown = true;
  await sleep(200);
  assert.equal((await b.stop()).code, 0);
  b = instance(t, root, UID_B);
  await b.ready();
  [ia, ib] = await instancesAB(sim);
  bDown = false;
  await Promise.all(workers);
  assert.deepEqual(failures, [], 'every call succeeded (at A when B was stopping)');
  agree(root, prepared, `soak: ${calls} calls, B restarted midway`);
  console.log(`soak: ${calls} calls in ${secs} s, ${prepared.size} claims prepared at the end, journal = CDI = client`);
});
