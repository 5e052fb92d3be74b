'use strict';
// The supervisor's limits against a compromised publisher and a flooding
// nodeserver (docs/security.md "What the supervisor does not trust"):
// claim look-ups (cap, rate, order, renumbering, answers checked and
// delivered only to the nodeserver that asked), Events (rate, the
// publisher's aggregation), READY's hide_paths from another role, the log
// channel (Log frames only, sendto, the rate limit) and the queue bound
// for a child that stops reading; what a child's frames cost, charged to
// it (issue 24): the supervisor's lines about its refused requests, a
// token for every CDI request, HealthStale error callbacks, Events in a
// bucket of its own; and the supervisor's stderr, which never blocks it.
// The nodeserver is
// tests/e2e/bin/kp_attack.c, whose hooks write raw frames to the
// supervisor; the publisher runs no driver code, so
// tests/e2e/bin/kp_chanforge.c plays it: it stops the real publisher,
// takes a copy of its channel (pidfd_getfd, as root), reads what the
// supervisor sends the publisher and answers as a compromised one would
// (the same on a nodeserver, to see what reaches it).
//
// Timing: the hooks and the forger print CLOCK_MONOTONIC times, so a rate
// is checked as "no frame arrived before the bucket could have let it
// out": load only makes frames later, never earlier.
//
//   KP_BUILD=build node --test --test-concurrency=1 tests/e2e/hostile.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { startEmulator, kubeconfig } = require('../apiserver-emu');
const net = require('node:net');
const { BUILD, TESTDRIVER, makeRoot, TestDriver, roles, until, sleep, childLines, procStatus, freePort, memFind, attackProbes, watchSockets } = require('./lib/plugin');

const ATTACK = path.join(BUILD, 'tests', 'kp_attack');
const CHANFORGE = path.join(BUILD, 'tests', 'kp_chanforge');
const DRIVER = 'test.example.com';
const NODE = 'node-1';
const skip = process.getuid() !== 0 ? 'needs root (pidfd_getfd of a sandboxed child)' : false;
// The budget test waits the publisher's whole 20 s budget: its point is
// the order of look-ups, which the plain build checks; under the
// sanitizers (make check's second pass) it would add 21 s for no memory
// path the other tests here do not run.
const SANITIZED = (() => {
  try {
    return /^KP_SANITIZE:BOOL=ON$/m.test(fs.readFileSync(path.join(BUILD, 'CMakeCache.txt'), 'utf8'));
  } catch { return false; }
})();

// kp_attack with Kubernetes access (an emulator), kubelet registered.
// run(spec) runs spec in the unprepare hook (it looks up no claim, so a
// stopped publisher does not hold it up) and returns the hook's outcome.
async function setup(t, { init = null, binary = ATTACK, args = [], register = true } = {}) {
  const root = makeRoot(DRIVER);
  const probes = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-hostile-'));
  fs.chmodSync(probes, 0o755);
  if (init) fs.writeFileSync(path.join(probes, 'init'), `${init}\n`);
  const tokenFile = path.join(root.dir, 'token');
  const emu = await startEmulator({ versions: ['v1'], nodes: [NODE], tokenFile });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  // --hung-ms 0: a child the forger stopped stays, however long it reads
  // (a silent child's replacement is heal.test.js's).
  const drv = new TestDriver(root, ['--kubeconfig', kc, '--node-name', NODE, '--hung-ms', '0',
    ...(binary === ATTACK ? ['--read-path', probes] : []), ...args], { binary, env: { KP_ATTACK_DIR: probes } });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    assert.doesNotMatch(drv.stderr, /Sanitizer|runtime error:/);
    await emu.stop();
    fs.rmSync(probes, { recursive: true, force: true });
    root.cleanup();
  });
  await drv.ready();
  if (!register) return { root, drv, emu, probes };
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  const run = attackProbes(sim, DRIVER, probes);
  return { root, drv, sim, emu, probes, run };
}

// kp_chanforge on pid with steps; resolves `stolen` once it holds the
// channel (the child is stopped from then on).
function forge(pid, steps) {
  const p = spawn(CHANFORGE, [String(pid), ...steps], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = [];
  readline.createInterface({ input: p.stdout }).on('line', (l) => lines.push(l));
  const done = new Promise((resolve) => p.on('close', (code) => resolve(code)));
  const stolen = until(() => lines.some((l) => l.startsWith('stolen ')) ||
    lines.some((l) => l.startsWith('error ')), 10000).then(() => {
    assert.ok(lines[0].startsWith('stolen '), lines.join('\n'));
  });
  // "frame <ms> <case> ..." lines of one case, split.
  const frames = (kind) => lines.filter((l) => l.startsWith('frame ')).map((l) => l.split(' '))
    .filter((f) => f[2] === kind).map((f) => ({ ms: Number(f[1]), args: f.slice(3) }));
  return { lines, done, stolen, frames };
}

const sentAt = (out, what) => {
  const m = new RegExp(`${what}: sent (\\d+) of (\\d+) at ([\\d.]+)`).exec(out);
  assert.ok(m, out);
  assert.equal(m[1], m[2], out);
  return Number(m[3]);
};

// A token bucket of qps and burst, full at t0 at most, lets the k-th
// frame (from 1) out no earlier than t0 + (k - burst) / qps.
function assertBucket(frames, t0, qps, burst) {
  frames.forEach((f, i) => {
    assert.ok(i + 1 <= burst + qps * (f.ms - t0) / 1000 + 1,
      `frame ${i + 1} arrived ${(f.ms - t0).toFixed(1)} ms after the flood began: faster than ${qps}/s after ${burst}`);
  });
}

// The publisher that replaced before, once READY.
const restartedPublisher = async (drv, before) => until(() => {
  const p = roles(drv.proc.pid).publisher;
  return p && p !== before && drv.stderr.includes(`publisher ready, pid ${p} (restarted)`) ? p : null;
}, 15000);

test('HOSTILE: a flooding nodeserver gets at most 64 claim look-ups to the publisher, 20 a second after a burst of 50, in arrival order, renumbered; an answer naming another UID kills the publisher', { skip }, async (t) => {
  const { drv, run } = await setup(t);
  const pub = roles(drv.proc.pid).publisher;
  const wrongUid = '00000000-0000-4000-8000-0000000000ff';
  const f = forge(pub, ['until:100:3500', `reply:0:x:x:${wrongUid}`]);
  await f.stolen;
  const t0 = sentAt(await run('raw-claims:100:flood'), 'raw-claims');
  assert.equal(await f.done, 0, f.lines.join('\n'));
  const gets = f.frames('claim_get');
  // The cap: the 64 first, in the order they came; the other 36 were
  // answered "too many claim look-ups in flight" at once and never sent.
  assert.equal(gets.length, 64, f.lines.join('\n'));
  assert.deepEqual(gets.map((g) => g.args[2]), Array.from({ length: 64 }, (_, i) => `flood-${i}`));
  assert.deepEqual(gets.map((g) => g.args[3]),
    Array.from({ length: 64 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`));
  // The supervisor's own ids, not the nodeserver's (900000 + i).
  const ids = gets.map((g) => Number(g.args[0]));
  assert.ok(ids.every((id, i) => id < 900000 && (i === 0 || id > ids[i - 1])), `ids ${ids}`);
  assertBucket(gets, t0, 20, 50);
  // The last look-up answered with another UID: a violation.
  assert.ok(f.lines.includes(`done reply:0:x:x:${wrongUid}`), f.lines.join('\n'));
  await drv.stderrMatch(/publisher: protocol violation: claim_reply for a look-up nobody asked for; killing it/);
  await restartedPublisher(drv, pub);
});

test('HOSTILE: Events a flooding nodeserver asks for reach the publisher at most 10 a second after a burst of 50; a claim_reply nobody asked for kills the publisher', { skip }, async (t) => {
  const { drv, run } = await setup(t);
  const pub = roles(drv.proc.pid).publisher;
  const f = forge(pub, ['until:100:1500', 'until:200:2500',
    'reply:424242:default:nobody:00000000-0000-4000-8000-000000424242']);
  await f.stolen;
  const t0 = sentAt(await run('raw-events:100:flood'), 'raw-events');
  // A second wave once the first was let out: the bucket refilled since.
  await until(() => f.lines.some((l) => l === 'done until:100:1500'), 10000);
  await sleep(1200);
  const t1 = sentAt(await run('raw-events:30:again'), 'raw-events');
  assert.equal(await f.done, 0, f.lines.join('\n'));
  const posts = f.frames('event_post');
  assertBucket(posts, t0, 10, 50);
  const first = posts.filter((p) => p.ms < t1);
  const second = posts.filter((p) => p.ms >= t1);
  // Every ask came at once; what the bucket did not let through was
  // dropped (a few more may pass while the supervisor reads them).
  assert.ok(first.length >= 50 && first.length < 100, `${first.length} Events of the first 100`);
  assert.ok(second.length >= 5 && second.length < 30, `${second.length} Events of the next 30`);
  // The note is the supervisor's, naming the syscall asked about.
  assert.match(first.map((p) => p.args.slice(1).join(' '))[0],
    /^a driver hook called flood0, which the nodeserver's sandbox denies \(EPERM\); the driver may need kp_sandbox_syscall\("flood0"\)$/);
  assert.ok(second.every((p) => / called again\d+,/.test(p.args.join(' '))));
  await drv.stderrMatch(/events: more than 10 a second; dropping some/);
  // The second wave's first Event closes the first storm with its count.
  await drv.stderrMatch(new RegExp(`events: ${100 - first.length} dropped over the limit of 10 a second \\(bursts of 50\\)`));
  await drv.stderrMatch(/publisher: protocol violation: claim_reply for a look-up nobody asked for; killing it/);
  await restartedPublisher(drv, pub);
});

test('more than 10 different notes of one kind become one combined Event whose count grows', { skip }, async (t) => {
  const { emu, run } = await setup(t);
  sentAt(await run('raw-events:15:agg'), 'raw-events');
  const combined = await until(() => {
    const ev = emu.getEvents().filter((e) => e.reason === 'SyscallDenied' && e.note.startsWith('(combined from similar events): '));
    return ev.length === 1 && ev[0].series && ev[0].series.count === 5 ? ev[0] : null;
  }, 15000);
  assert.match(combined.note, /^\(combined from similar events\): a driver hook called agg10, /);
  const all = emu.getEvents().filter((e) => e.reason === 'SyscallDenied');
  assert.equal(all.length, 11, all.map((e) => e.note).join('\n'));
  const single = all.filter((e) => e !== combined && !e.note.startsWith('(combined'));
  assert.deepEqual(single.map((e) => /called (agg\d+),/.exec(e.note)[1]).sort(),
    Array.from({ length: 10 }, (_, i) => `agg${i}`).sort());
});

test('HOSTILE: a READY naming paths to hide from a nodeserver (its init hook, while starting) kills it; later nodeservers hide only the publisher\'s list', { skip }, async (t) => {
  const { drv, probes, run } = await setup(t);
  const hide = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-hostile-hide-'));
  t.after(() => fs.rmSync(hide, { recursive: true, force: true }));
  const before = roles(drv.proc.pid).nodeserver;
  // The next nodeserver's init hook sends the forged READY, once.
  fs.writeFileSync(path.join(probes, 'init'), `raw-ready:${hide}\n`);
  process.kill(before, 'SIGKILL');
  // (Killed at once: its "attack-init: ..." line may never be written.)
  await drv.stderrMatch(/nodeserver: protocol violation: hide_paths in the READY of a role other than the publisher; killing it/);
  assert.ok(fs.existsSync(path.join(probes, 'init.done')));
  // The one after it starts normally and covers nothing at that path;
  // the publisher's own list (the kubeconfig) still is.
  const at = drv.stderr.search(/nodeserver: protocol violation: hide_paths/);
  await until(() => /nodeserver ready, pid \d+ \(restarted\)/.test(drv.stderr.slice(at)), 20000);
  const now = roles(drv.proc.pid).nodeserver;
  assert.ok(now && now !== before);
  await until(async () => /mkdir \/nonexistent\/x: /.test(await run('mkdir:/nonexistent/x')), 15000, 200);
  const mounts = fs.readFileSync(`/proc/${now}/mountinfo`, 'utf8').split('\n').map((l) => l.split(' ')[4]);
  assert.ok(!mounts.includes(hide), `${hide} is covered in the nodeserver:\n${mounts.join('\n')}`);
  assert.ok(mounts.includes(fs.realpathSync(drv.root.dir)), mounts.join('\n'));
});

test('HOSTILE: a nodeserver flooding its stderr gets a burst of 1000 lines, then 200 a second; the rest is counted as dropped', { skip }, async (t) => {
  const { drv, run } = await setup(t);
  const N = 3000;
  const relayed = () => childLines(drv.stderr).filter((l) => /^FLOOD \d+$/.test(l)).length;
  const t0 = Date.now();
  assert.match(await run(`stderr-flood:${N}`), new RegExp(`stderr-flood: wrote ${N}$`));
  let last = -1;
  await until(() => { const n = relayed(); const same = n === last; last = n; return same; }, 15000, 300);
  const R = relayed();
  assert.ok(R <= 1000 + 200 * (Date.now() - t0) / 1000 + 1, `${R} of ${N} lines relayed in ${Date.now() - t0} ms`);
  // The next line allowed reports how many were dropped so far: in the
  // end all the others (the supervisor may still be reading the pipe, so
  // a line is logged again until the reports add up).
  const dropped = () => [...drv.stderr.matchAll(/nodeserver: (\d+) log lines dropped \(more than 200 a second\)/g)]
    .reduce((a, m) => a + Number(m[1]), 0);
  await until(async () => {
    await run('mkdir:/nonexistent/x');
    return dropped() >= N - R;
  }, 15000, 300).catch(() => {});
  assert.ok(dropped() >= N - R, `${R} relayed + ${dropped()} dropped of ${N}`);
});

// The supervisor's lines (klog headers, its own clock): when each was
// written, in ms, and whose budget it came out of (relayed lines of the
// role, and the supervisor's "<role>: ... refused" lines about it).
function klogLines(stderr, role) {
  return stderr.split('\n').map((l) => {
    const m = /^[EWI](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) +\d+ (\w+)\] (.*)$/.exec(l);
    if (!m) return null;
    const ms = Date.UTC(2000, Number(m[1]) - 1, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])) + Number(m[6]) / 1000;
    return { ms, who: m[7], text: m[8] };
  }).filter((x) => x && (x.who === role || (x.who === 'broker' && x.text.startsWith(`${role}: `) && / refused: /.test(x.text))));
}

// Lines of one bucket of qps and burst: no window [a, b] of them holds
// more than burst + qps * (b - a) (the bucket is full at most at a).
function assertBucketLines(lines, qps, burst) {
  for (let i = 0; i < lines.length; i++) {
    for (let j = i + burst; j < lines.length; j++) {
      const dt = lines[j].ms - lines[i].ms;
      assert.ok(j - i + 1 <= burst + qps * dt / 1000 + 1,
        `${j - i + 1} lines in ${dt.toFixed(1)} ms (from "${lines[i].text.slice(0, 60)}" to "${lines[j].text.slice(0, 60)}"): more than ${burst} + ${qps}/s`);
    }
  }
}

test('HOSTILE: the supervisor\'s lines about a nodeserver\'s refused requests come out of the nodeserver\'s log budget (1000, then 200 a second, shared with its own lines); the rest are counted and reported', { skip }, async (t) => {
  const { drv, run } = await setup(t);
  const F = 1200;
  // The budget spent on the nodeserver's own stderr, then refused
  // 16 KiB CdiWrites (a kind of another vendor) back to back.
  assert.match(await run(`stderr-flood:${F}`), new RegExp(`stderr-flood: wrote ${F}$`));
  assert.match(await run('cdi-refuse:400:16384'), /cdi-refuse: sent 400 of 400/);
  await drv.stderrMatch(/broker\] nodeserver: cdi_write refused: CDI spec test\.example\.com_raw-\d+\.json: kind "other\.example\.com\/test"/);
  const dropped = () => [...drv.stderr.matchAll(/nodeserver: (\d+) log lines dropped \(more than 200 a second\)/g)]
    .reduce((a, m) => a + Number(m[1]), 0);
  const flood = () => childLines(drv.stderr).filter((l) => /^FLOOD \d+$/.test(l)).length;
  // Every line dropped is reported once the budget allows, the refusals'
  // too: more than the FLOOD lines that were not relayed.
  await until(() => dropped() > F - flood(), 15000, 200).catch(() => {});
  assert.ok(dropped() > F - flood(), `${flood()} of ${F} FLOOD lines relayed, ${dropped()} lines reported dropped`);
  assertBucketLines(klogLines(drv.stderr, 'nodeserver'), 200, 1000);
});

test('HOSTILE: refused and read-only CDI requests take a token each: lists and refused writes are answered no faster than 50 a second after a burst of 100', { skip }, async (t) => {
  const { drv } = await setup(t);
  const ns = roles(drv.proc.pid).nodeserver;
  // The forger sends as the nodeserver and reads the answers.
  const f = forge(ns, ['cdi:200:list', 'until:200:20000', 'cdi:100:write', 'until:300:20000', 'cont']);
  await f.stolen;
  const t0 = Number(f.lines[0].split(' ')[1]);
  assert.equal(await f.done, 0, f.lines.join('\n'));
  const replies = f.frames('cdi_reply');
  assert.equal(replies.length, 300, f.lines.join('\n'));
  // KP_EBUSY (-16): the queue of 64 was full; answered at once, no work.
  const done = replies.filter((r) => r.args[1] !== '-16');
  assert.ok(done.some((r) => r.args[1] === '-22'), 'the writes were refused (KP_EINVAL)');
  assertBucket(done, t0, 50, 100);
  await drv.stderrMatch(/nodeserver: cdi_write refused: CDI spec name "refused\.example\.com_forged\.json"/);
});

test('HOSTILE: a HealthStale flood reaches the driver\'s error function at most 20 times, then 2 a second; the rest is counted and reported once', { skip }, async (t) => {
  const { drv, run } = await setup(t, { args: ['--error-cb'] });
  const N = 2000;
  const t0 = Date.now();
  assert.match(await run(`raw-stale:${N}:900`), new RegExp(`raw-stale: sent ${N} of ${N}`));
  const forged = () => drv.lines.filter((l) => /^errcb KP_ETIMEDOUT rec=1 nodeserver: FORGED-STALE/.test(l)).length;
  const dropped = () => drv.lines.map((l) => /^errcb KP_ETIMEDOUT rec=1 nodeserver: (\d+) more error reports dropped \(more than 2 a second, bursts of 20\)$/.exec(l))
    .filter(Boolean).reduce((a, m) => a + Number(m[1]), 0);
  // Each frame is passed on or counted; the count is reported once.
  await until(() => forged() + dropped() >= N, 15000, 100).catch(() => {});
  const n = forged();
  assert.ok(n <= 20 + 2 * (Date.now() - t0) / 1000 + 1, `${n} of ${N} HealthStale frames reached the error function in ${Date.now() - t0} ms`);
  assert.equal(n + dropped(), N, `${n} passed on, ${dropped()} reported dropped`);
});

test('HOSTILE: a nodeserver asking for Events cannot hide the supervisor\'s own: a socket repaired during an EventAsk flood still becomes a SocketRecreated Event', { skip }, async (t) => {
  const { drv, emu, run } = await setup(t);
  sentAt(await run('raw-events:300:flood'), 'raw-events');
  fs.rmSync(drv.root.draSock);
  await drv.stderrMatch(/DRA socket .* was removed from outside; re-creating it/);
  const ev = await until(() => emu.getEvents().find((e) => e.reason === 'SocketRecreated'), 15000).catch(() => null);
  assert.ok(ev, `no SocketRecreated Event; the emulator has: ${emu.getEvents().map((e) => e.reason).join(', ')}`);
  assert.match(ev.note, /^the DRA socket .*dra\.sock was removed or replaced from outside and has been re-created$/);
  assert.ok(emu.getEvents().some((e) => e.reason === 'SyscallDenied'), 'the flood\'s Events were posted too');
  await drv.stderrMatch(/nodeserver events: more than 10 a second; dropping some/);
});

test('HOSTILE: a driver whose stderr nobody reads does not stall the supervisor: its lines that do not fit are dropped, counted, and the count is logged once stderr is read again', { skip }, async (t) => {
  const { drv, probes, run } = await setup(t);
  drv.proc.stderr.pause();
  t.after(() => drv.proc.stderr.resume());
  // Lines enough to fill the pipe, Node's buffer and the supervisor's
  // own (256 KiB): 1000 relayed lines of 490 bytes, then refusals (within
  // the CDI burst: the request after them gets a token at once); then a
  // request only the supervisor answers.
  assert.match(await run('stderr-flood:1500:480'), /stderr-flood: wrote 1500$/);
  assert.match(await run('cdi-refuse:80:16384'), /cdi-refuse: sent 80 of 80/);
  const spec = path.join(probes, 'spec.json');
  fs.writeFileSync(spec, JSON.stringify({ cdiVersion: '0.6.0', kind: `${DRIVER}/test`, devices: [{ name: 'd', containerEdits: { env: ['X=1'] } }] }));
  assert.match(await run(`cdi-file:${DRIVER}_unblocked.json:${spec}`), /cdi-file \S+: ok/);
  drv.proc.stderr.resume();
  await run('mkdir:/nonexistent/x');
  await drv.stderrMatch(/broker\] \d+ log lines dropped: stderr was full \(not read fast enough\)/);
});

test('HOSTILE: the log channel takes Log frames only: sendto() to another socket\'s path still reaches the supervisor alone; a READY there kills the nodeserver', { skip }, async (t) => {
  const { drv, run } = await setup(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-hostile-dgram-'));
  fs.chmodSync(dir, 0o755);
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const sock = path.join(dir, 'listener.sock');
  // A datagram socket anyone may send to, as a local service's would be.
  const rx = spawn('python3', ['-c', `import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777)
print('bound', flush=True)
print('got', s.recv(4096), flush=True)`, sock], { stdio: ['ignore', 'pipe', 'inherit'] });
  let got = '';
  rx.stdout.on('data', (d) => { got += d; });
  t.after(() => rx.kill('SIGKILL'));
  await until(() => got.includes('bound'), 10000);
  const out = await run(`log-sendto:${sock}`);
  assert.match(out, new RegExp(`log-sendto ${sock}: `));
  // The kernel ignores the address on a connected SOCK_SEQPACKET socket:
  // the datagram is the supervisor's (a log line of the nodeserver).
  if (/: sent$/.test(out)) await drv.stderrMatch(/nodeserver\] SENDTO-PROBE/);
  await sleep(300);
  assert.ok(!got.includes('got'), `the listener received: ${got}`);
  const before = roles(drv.proc.pid).nodeserver;
  // Killed at once: the call may end before the hook's answer.
  assert.match(await run('log-frame:ready'), /log-frame ready: sent$|Unavailable/);
  await drv.stderrMatch(/nodeserver: protocol violation: non-log frame on the log channel; killing it/);
  await until(() => { const n = roles(drv.proc.pid).nodeserver; return n && n !== before; }, 15000);
});

test('HOSTILE: the publisher\'s answer reaches the nodeserver that asked, and no later one: an answer to a dead nodeserver\'s look-up is dropped, no violation', { skip }, async (t) => {
  const { drv, probes, run } = await setup(t);
  const r0 = roles(drv.proc.pid);
  const flag = (n) => path.join(probes, `flag-${n}`);
  const fp = forge(r0.publisher, ['until:1:10000', `wait:${flag(1)}`, 'reply:0:x:x:=',
    'until:2:20000', `wait:${flag(2)}`, 'reply:0:x:x:=', 'read:300', 'cont']);
  await fp.stolen;
  // A hook asks; it ran, so its nodeserver may be stopped to read what
  // the supervisor sends it.
  const runEventually = (spec) => until(async () => {
    const out = await run(spec);
    return /Unavailable|No connection/.test(out) ? null : out;
  }, 20000, 200);
  assert.match(await runEventually('raw-claims:1:first'), /raw-claims: sent 1 of 1/);
  await until(() => fp.frames('claim_get').length === 1, 10000);
  const seenBy = async (ns, n) => {
    const f = forge(ns, [`wait:${flag(n)}`, 'read:1000', 'cont']);
    await f.stolen;
    fs.writeFileSync(flag(n), '');
    assert.equal(await f.done, 0, f.lines.join('\n'));
    return f.frames('claim_reply');
  };
  // The same nodeserver: the answer arrives, under the id it chose.
  const got = await seenBy(r0.nodeserver, 1);
  assert.equal(got.length, 1, 'the asking nodeserver gets the answer');
  assert.equal(got[0].args.length, 0);
  // Its successor asks too, then dies with the look-up at the publisher.
  process.kill(r0.nodeserver, 'SIGKILL');
  const next = async (before) => until(() => {
    const n = roles(drv.proc.pid).nodeserver;
    return n && n !== before && drv.stderr.includes(`nodeserver ready, pid ${n}`) ? n : null;
  }, 20000);
  const ns2 = await next(r0.nodeserver);
  assert.match(await runEventually('raw-claims:1:orphan'), /raw-claims: sent 1 of 1/);
  await until(() => fp.frames('claim_get').length === 2, 10000);
  assert.equal(fp.frames('claim_get')[1].args[2], 'orphan-0');
  process.kill(ns2, 'SIGKILL');
  const ns3 = await next(ns2);
  // The answer to the dead one's look-up is right (id, claim, UID), so
  // the publisher is not at fault; the new nodeserver is told nothing.
  assert.deepEqual(await seenBy(ns3, 2), [], 'a later nodeserver gets no answer to its predecessor\'s look-up');
  assert.equal(await fp.done, 0, fp.lines.join('\n'));
  assert.ok(fp.lines.includes('done reply:0:x:x:='), fp.lines.join('\n'));
  await sleep(200);
  assert.doesNotMatch(drv.stderr, /publisher: protocol violation/);
  assert.equal(roles(drv.proc.pid).publisher, r0.publisher, 'the publisher was not killed');
});

test('HOSTILE: a publisher that stops reading is killed once 32 MiB of frames wait for it; the supervisor stays bounded; a new publisher starts', { skip }, async (t) => {
  const { drv } = await setup(t, { binary: TESTDRIVER });
  const r = roles(drv.proc.pid);
  const kb = (pid, k) => Number(/(\d+) kB/.exec(procStatus(pid)[k])[1]);
  // Stopped, it reads nothing; every kp_publish_resources() is queued
  // for it (8 pools of 4096 devices: some MiB a frame).
  process.kill(r.publisher, 'SIGSTOP');
  const rss0 = kb(r.supervisor, 'VmRSS');
  const violation = /publisher: protocol violation: not reading its channel; killing it/;
  let n = 0;
  while (!violation.test(drv.stderr) && n < 40) {
    assert.match(await drv.command(`publish 4096 8 t${n}`, 'publish '), /^publish KP_OK/);
    n++;
  }
  assert.ok(n < 40, `${n} publishes queued for a publisher that reads nothing`);
  // The queue, the last resources kept for a restart and the frame being
  // read: well under three queues' worth (about 85 MiB measured; not
  // under ASan, whose quarantine keeps freed frames).
  const grown = kb(r.supervisor, 'VmHWM') - rss0;
  if (!/asan/.test(process.env.KP_BUILD || '')) assert.ok(grown < 3 * 32 * 1024, `the supervisor grew by ${grown} kB`);
  await until(() => {
    const p = roles(drv.proc.pid).publisher;
    return p && p !== r.publisher && drv.stderr.includes(`publisher ready, pid ${p} (restarted)`);
  }, 15000);
});

test('a Publish frame over 1 MiB (8 pools of 4096 devices, about 3 MB) reaches the publisher: all published, no restart', { skip }, async (t) => {
  const { drv, emu } = await setup(t, { binary: TESTDRIVER, args: ['--kube-qps', '200:400'] });
  const r = roles(drv.proc.pid);
  assert.match(await drv.command('publish 4096 8 big', 'publish '), /^publish KP_OK/);
  // 8 pools of 4096 devices, 128 a slice.
  const mine = () => emu.getSlices({ fieldSelector: `spec.driver=${DRIVER}` });
  await until(() => mine().length === 256, 30000, 200);
  assert.equal(mine().reduce((n, s) => n + s.spec.devices.length, 0), 8 * 4096);
  assert.equal(roles(drv.proc.pid).publisher, r.publisher, 'the publisher was restarted');
  assert.doesNotMatch(drv.stderr, /publisher exited|supervisor channel: frame of/);
});

test('HOSTILE: a compromised publisher\'s Pongs: a right one is taken; one with the nodeserver\'s gRPC counters, or answering no Ping, kills it', { skip }, async (t) => {
  const { drv } = await setup(t);
  const pub = roles(drv.proc.pid).publisher;
  // The next Ping comes only once the last one was answered.
  const f = forge(pub, ['ping:5000', 'pong:ok', 'ping:5000', 'pong:rpc', 'read:2000']);
  await f.stolen;
  assert.equal(await f.done, 0, f.lines.join('\n'));
  assert.deepEqual(f.lines.filter((l) => /^(done|error) /.test(l)).slice(0, 4),
    ['done ping:5000', 'done pong:ok', 'done ping:5000', 'done pong:rpc'], f.lines.join('\n'));
  await drv.stderrMatch(/publisher: protocol violation: pong: counters the publisher does not keep; killing it/);
  assert.ok(f.lines.includes('error read: closed'), 'the supervisor closed the channel');
  const pub2 = await restartedPublisher(drv, pub);
  const g = forge(pub2, ['pong:noping']);
  await g.stolen;
  assert.equal(await g.done, 0, g.lines.join('\n'));
  await drv.stderrMatch(/publisher: protocol violation: heartbeat answer without a heartbeat; killing it/);
  await restartedPublisher(drv, pub2);
});

test('HOSTILE: an init hook that leaves a thread running: the sandbox refuses to start, kp_start fails naming why, nothing is served', { skip }, async (t) => {
  const root = makeRoot(DRIVER);
  const probes = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-hostile-'));
  fs.chmodSync(probes, 0o755);
  fs.writeFileSync(path.join(probes, 'init'), 'thread\n');
  const drv = new TestDriver(root, ['--read-path', probes], { binary: ATTACK, env: { KP_ATTACK_DIR: probes } });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    assert.doesNotMatch(drv.stderr, /Sanitizer|runtime error:/);
    fs.rmSync(probes, { recursive: true, force: true });
    root.cleanup();
  });
  // ids and capabilities change per thread: one started earlier would
  // keep root and every capability beside the sandboxed one.
  const l = await drv.line(['ready', 'error'], 20000);
  assert.match(l, /^error KP_ECHILD .*sandbox: 2 threads before the sandbox: the init hook must not leave threads running/);
  await drv.stderrMatch(/stderr: attack-init: thread: running/);
  assert.ok(!fs.existsSync(root.draSock) && !fs.existsSync(root.regSock), 'no socket is left serving');
});

// The observer runs no driver code either: its live channel, taken the
// same way, carries a frame it has no rule for.
test('HOSTILE: the live observer sending anything but READY and the heartbeat\'s answer (a Pong answering no Ping) is killed; a new observer answers /healthz', { skip }, async (t) => {
  const net = require('node:net');
  const http = require('node:http');
  const port = await new Promise((resolve, reject) => {
    const s = net.createServer().on('error', reject).listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  const status = () => new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: '/healthz' }, (r) => { r.resume(); resolve(r.statusCode); })
      .on('error', () => resolve(0));
  });
  const root = makeRoot(DRIVER);
  const drv = new TestDriver(root, ['--http-endpoint', `127.0.0.1:${port}`]);
  t.after(async () => {
    drv.kill();
    await drv.exited;
    assert.doesNotMatch(drv.stderr, /Sanitizer|runtime error:/);
    root.cleanup();
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await until(async () => (await status()) === 200, 15000, 100);
  const obs = roles(drv.proc.pid).observer;
  const f = forge(obs, ['pong:noping', 'read:1000']);
  await f.stolen;
  assert.equal(await f.done, 0, f.lines.join('\n'));
  await drv.stderrMatch(/observer: protocol violation: heartbeat answer without a heartbeat; killing it/);
  assert.ok(f.lines.includes('error read: closed'), f.lines.join('\n'));
  await until(async () => {
    const o = roles(drv.proc.pid).observer;
    return o && o !== obs && (await status()) === 200;
  }, 15000, 100);
});

test('HOSTILE: the bearer token is in the publisher alone (no other process\'s memory, environment or command line, not /metrics, not the log at -v 10); a rotated token leaves no copy in the publisher\'s memory', { skip }, async (t) => {
  const port = await freePort();
  const { drv, sim, emu } = await setup(t, { binary: TESTDRIVER, args: ['-v', '10', '--http-endpoint', `127.0.0.1:${port}`] });
  let n = 0;
  const lookUps = async (k) => {
    for (let i = 0; i < k; i++, n++) {
      const c = { namespace: 'default', name: `tok-${n}`, uid: randomUUID() };
      emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-1' }] } });
      await sim.nodePrepareResources(DRIVER, [c]);
    }
  };
  await lookUps(4);
  await until(() => emu.activeWatches() > 0, 10000);
  const old = emu.token;
  const r = roles(drv.proc.pid);
  assert.ok(r.observer, 'no observer');
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  assert.match(metrics, /^kubeletplugin_/m);
  assert.ok(!metrics.includes(old), 'the token on /metrics');
  // The scan finds the live token where it must be (kube_config's copy).
  assert.ok(memFind(r.publisher, old).length >= 1, 'the scan found no token in the publisher');
  for (const [who, pid] of [['driver process', drv.proc.pid], ...Object.entries(r).filter(([k]) => k !== 'publisher')]) {
    assert.deepEqual(memFind(pid, old), [], `the token in the ${who}'s memory`);
    for (const f of ['environ', 'cmdline']) assert.ok(!fs.readFileSync(`/proc/${pid}/${f}`).includes(old), `the token in the ${who}'s ${f}`);
  }
  // Rotated: a look-up's 401 makes the publisher re-read the file; the
  // watch that started with the old token is ended, so the next one
  // starts with the new. Then no copy of the old one may be left: not in
  // libcurl's freed request buffers, not on a thread's stack.
  const fresh = emu.rotateToken();
  await lookUps(2);
  const dropped = Date.now();
  emu.dropWatches();
  await until(() => emu.activeWatches() > 0 && emu.requests().some((q) => q.watch && q.time >= dropped), 10000);
  const pub = roles(drv.proc.pid).publisher;
  assert.equal(pub, r.publisher, 'the publisher restarted');
  await until(() => memFind(pub, old).length === 0, 10000).catch(() => {});
  assert.deepEqual(memFind(pub, old), [], 'copies of the rotated token in the publisher\'s memory');
  assert.ok(memFind(pub, fresh).length >= 1);
  for (const tok of [old, fresh]) assert.ok(!drv.stderr.includes(tok), 'a token in the log');
  assert.match(drv.stderr, /bearer token from .* changed/, 'the -v 10 log was not on');
});

test('HOSTILE: a look-up whose names would change the GET\'s path (\'/\', \'..\', \'%2F\', \'?\') kills the nodeserver; nothing reaches the API server; the right names do', { skip }, async (t) => {
  const { drv, emu, run } = await setup(t);
  const hex = (s) => Buffer.from(s, 'latin1').toString('hex');
  const claimGets = () => emu.requests().filter((q) => /resourceclaims/.test(q.path));
  // The frame itself works: a look-up of right names is a GET.
  assert.match(await run(`raw-claim:${hex('default')}:${hex('ok-claim')}`), /raw-claim: sent/);
  await until(() => claimGets().length === 1, 10000);
  assert.equal(claimGets()[0].path, `/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/ok-claim`);
  const ns0 = roles(drv.proc.pid).nodeserver;
  for (const [ns, name, field] of [
    ['default', '../../../../api/v1/namespaces/kube-system/secrets', 'name'],
    ['kube-system%2Fsecrets?x=', 'c', 'namespace'],
  ]) {
    const at = drv.stderr.length;
    const killed = () => new RegExp(`nodeserver: protocol violation: claim_get\\.${field} .*killing it`).test(drv.stderr.slice(at));
    // The hook's call fails when the kill comes first; it is asked
    // again only when its frame cannot have been sent (no kill seen).
    await until(async () => killed() || (await run(`raw-claim:${hex(ns)}:${hex(name)}`),
      until(killed, 5000).then(() => true, () => false)), 30000, 200);
    await until(() => /nodeserver ready, pid \d+ \(restarted\)/.test(drv.stderr.slice(at)), 20000);
  }
  assert.notEqual(roles(drv.proc.pid).nodeserver, ns0);
  assert.equal(claimGets().length, 1, claimGets().map((q) => q.path).join('\n'));
});

test('HOSTILE: look-ups that waited out their budget behind an API server that hangs are answered without a GET; the next one still gets its GET', { skip: skip || (SANITIZED && 'the plain build checks it (a 20 s wait)') }, async (t) => {
  const { emu, run } = await setup(t);
  const gets = () => emu.requests().filter((q) => /\/resourceclaims\//.test(q.path)).map((q) => q.path.split('/').pop());
  // The publisher's 4 claims threads each hang on a GET for the whole
  // 20 s budget; 8 more look-ups wait behind them.
  emu.inject({ method: 'GET', path: '/apis/resource.k8s.io/v1/namespaces/*/resourceclaims/*', action: 'hang', times: 4 });
  assert.match(await run('raw-claims:12:stale'), /raw-claims: sent 12 of 12/);
  await until(() => gets().length === 4, 10000);
  // A look-up that arrives 2 s later has 2 s of its budget left when a
  // thread is free again.
  await sleep(2000);
  assert.match(await run('raw-claims:1:fresh'), /raw-claims: sent 1 of 1/);
  await until(() => gets().includes('fresh-0'), 40000, 200);
  assert.deepEqual(gets().sort(), ['fresh-0', 'stale-0', 'stale-1', 'stale-2', 'stale-3'],
    'look-ups nobody could still wait for were sent');
});

// Finding 3 of issue 24: with Kubernetes access a MetadataWrite must name
// a claim the publisher answered for this nodeserver in the last 60 s (a
// claim of a prepare call in progress, supervisor/md_claims.c); made-up
// ones create nothing, refused naming the rule.
test('HOSTILE: a MetadataWrite for a claim no prepare call looked up is refused naming the rule, nothing written; a prepared claim\'s metadata is', { skip }, async (t) => {
  const cdi = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-hostile-cdi-'));
  t.after(() => fs.rmSync(cdi, { recursive: true, force: true }));
  const { root, drv, sim, emu, run } = await setup(t, { args: ['--device-metadata', 'metadata.resource.k8s.io/v1alpha1', '--cdi-dir', cdi] });
  const mdDir = path.join(path.dirname(root.draSock), 'dra-device-metadata');
  const c = { namespace: 'default', name: 'gpu-1', uid: randomUUID() };
  emu.addClaim({ ...c, allocation: { results: [{ request: 'req-0', driver: DRIVER, pool: NODE, device: 'dev-1' }] } });
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.deepEqual(res.claims[c.uid].devices[0].cdi_device_ids, [`${DRIVER}/test=gpu-1`, `${DRIVER}/metadata=${c.uid}_req-0`]);
  assert.ok(fs.existsSync(path.join(mdDir, 'default_gpu-1', 'req-0', 'metadata.json')));
  const other = randomUUID();
  assert.match(await run(`md-one:made-up:${other}`), /md-raw: sent 1 of 1, barrier KP_OK/);
  await drv.stderrMatch(new RegExp(`nodeserver: metadata_write refused: metadata of default/made-up \\(UID ${other}\\): not a claim of a prepare call in progress \\(the publisher answered no look-up of it for this nodeserver in the last 60 s\\)`));
  // The looked-up name with another UID (a claim deleted and made again).
  assert.match(await run(`md-one:gpu-1:${other}`), /barrier KP_OK/);
  await drv.stderrMatch(new RegExp(`metadata_write refused: metadata of default/gpu-1 \\(UID ${other}\\): not a claim`));
  assert.deepEqual(fs.readdirSync(mdDir), ['default_gpu-1']);
  assert.deepEqual(fs.readdirSync(cdi).filter((n) => n.includes('_metadata_')), [`${DRIVER}_metadata_${c.uid}_req-0.json`]);
  assert.match(fs.readFileSync(path.join(mdDir, 'default_gpu-1', 'req-0', 'metadata.json'), 'utf8'), new RegExp(`"uid": "${c.uid}"`), 'the prepared file, not overwritten');
});

// --- listeners a child cannot break (issue 24, finding 1) -------------------

// CPU time (user + system, all threads) of pid in ms, from /proc.
function cpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;	// fields 14, 15; USER_HZ 100
}

// Connects to the unix socket at p: resolves true, or false if refused.
const connects = (p) => new Promise((resolve) => {
  const c = net.connect(p, () => { c.destroy(); resolve(true); });
  c.on('error', () => resolve(false));
});

// The child of role that replaced `before`, once it said READY.
const restarted = (drv, role, before) => until(() => {
  const p = roles(drv.proc.pid)[role];
  return p && p !== before && drv.stderr.includes(`${role} ready, pid ${p} (restarted)`) ? p : null;
}, 15000);

// What a new child costs while idle over 2 s, after a second to settle:
// a listener that stays shut down made it spin (~40 % of a core on main).
async function assertIdle(t, pid, role) {
  await sleep(1000);
  const c0 = cpuMs(pid);
  await sleep(2000);
  const used = cpuMs(pid) - c0;
  t.diagnostic(`the restarted ${role}: ${used} ms of CPU in 2 s`);
  assert.ok(used <= 200, `the restarted ${role} used ${used} ms of CPU in 2 s (spinning)`);
}

test('HOSTILE: a nodeserver that shuts down its listening socket is killed; a new DRA socket is renamed over the path at once (the file never goes), kubelet is served again, the next nodeserver does not spin, /healthz stays 200 and /metrics and an Event say what happened', { skip }, async (t) => {
  const port = await freePort();
  const { root, drv, sim, emu, run } = await setup(t, { args: ['--http-endpoint', `127.0.0.1:${port}`] });
  const ns = roles(drv.proc.pid).nodeserver;
  const ino = fs.lstatSync(root.draSock).ino;
  const watch = watchSockets([root.draSock]);
  t.after(watch);	// its timer, should an assertion end the test early
  // The hook's call may end with the nodeserver (killed at once).
  await run('shutdown-listen:rdwr');
  // The path takes connections again (on main: refused for good) and
  // kubelet is served (its calls here are unprepares: no claim look-up).
  await until(() => connects(root.draSock), 5000, 50);
  await until(async () => {
    const c = { namespace: 'default', name: 'after', uid: randomUUID() };
    return sim.nodeUnprepareResources(DRIVER, [c], { timeoutMs: 5000 }).then((r) => r.claims[c.uid] && !r.claims[c.uid].error, () => false);
  }, 20000, 200);
  assert.notEqual(fs.lstatSync(root.draSock).ino, ino, 'a new socket');
  const { missing } = watch();
  assert.equal(missing, 0, 'the socket file was missing in some samples');
  await drv.stderrMatch(/the DRA listening socket \S+dra\.sock was shut down: every connection is refused; re-creating it/);
  await drv.stderrMatch(/nodeserver: protocol violation: shut down its listening socket; killing it/);
  const next = await restarted(drv, 'nodeserver', ns);
  await assertIdle(t, next, 'nodeserver');
  // The repair is instant (the supervisor polls its copy of the
  // listener), so /healthz never saw the outage: it is 200, and the
  // metrics count the kill as a protocol violation.
  const h = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) });
  assert.equal(h.status, 200, await h.text());
  const m = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  assert.match(m, /kubeletplugin_process_restarts_total\{role="nodeserver",reason="protocol"\} 1/);
  const ev = await until(() => emu.getEvents().find((e) => e.reason === 'SocketRecreated'), 10000);
  assert.match(ev.note, /the DRA socket \S+ was shut down by the nodeserver \(a violation; killed\) and has been re-created/);
  assert.equal(drv.proc.exitCode, null, 'the plugin keeps running');
});

test('HOSTILE: a registrar (a driver interceptor) that shuts down its listening socket is killed; a new registration socket takes its place, a kubelet started afterwards registers the plugin, the next registrar does not spin', { skip }, async (t) => {
  // Forked (--fork-hooks): the attack runs in the first registrar only,
  // remembered on a page shared by fork; an exec'd registrar would run
  // it at every GetInfo. The repair is the monitor's either way.
  const { root, drv } = await setup(t, { args: ['--registrar-attack', 'shutdown-listen:rdwr', '--fork-hooks'], register: false });
  const reg = roles(drv.proc.pid).registrar;
  const ino = fs.lstatSync(root.regSock).ino;
  // The first kubelet's GetInfo runs the interceptor's attack: the path
  // refuses (main) or is a new socket.
  const first = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => first.stop());
  await until(async () => fs.lstatSync(root.regSock).ino !== ino || !(await connects(root.regSock)), 10000, 50);
  first.stop();
  const later = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => later.stop());
  await later.waitForDriver(DRIVER, 15000);
  const c = { namespace: 'default', name: 'after', uid: randomUUID() };
  const r = await later.nodeUnprepareResources(DRIVER, [c], { timeoutMs: 10000 });
  assert.ok(r.claims[c.uid] && !r.claims[c.uid].error, JSON.stringify(r));
  assert.ok(await connects(root.regSock), 'the registration socket path takes connections');
  assert.notEqual(fs.lstatSync(root.regSock).ino, ino, 'a new socket');
  await drv.stderrMatch(/the registration listening socket \S+ was shut down: every connection is refused; re-creating it/);
  await drv.stderrMatch(/registrar: protocol violation: shut down its listening socket; killing it/);
  await assertIdle(t, await restarted(drv, 'registrar', reg), 'registrar');
  assert.equal(drv.proc.exitCode, null, 'the plugin keeps running');
});
