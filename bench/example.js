'use strict';
// bench/example.js - the "example" server of bench/run.js: the example PCI
// driver (build/examples/pci-driver) with the API-server emulator
// (tests/apiserver-emu) serving allocated ResourceClaims and its devices
// from a fake sysfs tree (tests/e2e/lib/fake-sysfs.js), and the claim
// look-up figures (lookupBench).
//
// The supervisor writes or removes at most 50 CDI spec files a second
// (bursts of 100, supervisor/cdi_queue.c); a request over that waits for
// its token (up to 8 s) instead of failing, and lists and identical specs
// cost nothing (before, the excess failed at once with "rate-limited;
// retry", as per-claim errors inside a successful gRPC answer, which
// bench/loadgen sees only with -R; --old builds from then still do). Every
// prepare of a new claim writes a spec, so the look-up figures are taken
// paced below that rate and exampleBench checks every answer or every
// spec file:
//   known     a claim prepared before (the library's journal answers: no
//             look-up, no hook), one per call at 40/s, against bare and
//             kp at the same pace; in run.js's closed loops too
//             (closedLoad: 1 claim a call, each answer compared with the
//             one the claim got before, bench/loadgen -R)
//   look-ups  fresh claim UIDs on every call (a UID prepared before would
//             be answered by the journal): one claim per call and 100 in
//             one call, against the API GET alone (curl, i.e. libcurl as
//             the publisher, one keep-alive connection, TCP_NODELAY); a
//             second instance at 50 QPS, look-ups paced below and above
//             it, against a control at 1000 QPS (client-side throttling)
// Before anything is measured the emulator answers 4000 claim GETs
// (warmEmulator): cold, V8 runs its JavaScript interpreted and a GET
// costs it several times its warm CPU. apiWorkers N (run.js
// --api-workers, bench/example-100.js) puts N worker processes in front
// of it that answer the claim GETs side by side (bench/emu-claims.js).

const { spawn } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const { proto } = require('../tests/kubelet-sim');
const { newClient, rawUnary } = require('../tests/kubelet-sim/grpc-util');
const { startEmulator, kubeconfig } = require('../tests/apiserver-emu');
const { fakeSysfs } = require('../tests/e2e/lib/fake-sysfs');

const DRIVER = 'pci.example.com';
const NODE = 'node-1';
const NDEV = 16;
const PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const UNPREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources';
const BENCH_QPS = 1000;		// kp_kube_api_qps's maximum
const BENCH_BURST = 10000;
// The supervisor's CDI budget (supervisor/cdi_queue.c): 50 a second.
const CDI_MS = 20;		// a token
const CDI_REFILL_MS = 2200;	// the burst of 100, refilled
const PACE = 40;		// calls a second, below the CDI budget
const KNOWN_CALLS = 80;		// 2 s at PACE
const LOOKUPS = 60;
const WARM_GETS = 4000;	// claim GETs that warm the emulator up (warmEmulator)

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const timeout = (ms, v) => new Promise((r) => setTimeout(r, ms, v).unref());
const devName = (i) => `pci-0000-00-${(i % NDEV).toString(16).padStart(2, '0')}-0`;
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((s.length - 1) * p))] : null;
};

function encode(type, claims) {
  return proto.encode(proto.typeName('v1', type), { claims: claims.map(({ namespace, name, uid }) => ({ namespace, name, uid })) });
}

// Start the emulator, the fake sysfs and the kubeconfig in dir; the
// publisher and the nodeserver run under their own uids and read there.
async function environment(dir, { warmGets = WARM_GETS, apiWorkers = 0, stateTmpfs = false } = {}) {
  const { giveToNodeserver } = require('../tests/e2e/lib/plugin');
  fs.chmodSync(path.dirname(dir), 0o755);
  fs.chmodSync(dir, 0o755);
  const devices = Array.from({ length: NDEV }, (_, i) => ({
    addr: `0000:00:${i.toString(16).padStart(2, '0')}.0`, numa: i % 2, driver: i % 2 ? 'vfio-pci' : 'e1000e', iommu: i, bars: [[0x1000000 * (i + 1), 4096]],
  }));
  const sys = fakeSysfs(dir, devices);
  // The credentials apart from the DRA socket's directory, which the
  // nodeserver keeps (the plugin refuses a kubeconfig there).
  const kdir = `${dir}-kube`;
  fs.mkdirSync(kdir, { recursive: true });
  fs.chmodSync(kdir, 0o755);
  const emu = await startEmulator({ versions: ['v1', 'v1beta1'], nodes: [NODE], tokenFile: path.join(kdir, 'token') });
  fs.copyFileSync(emu.caFile, path.join(kdir, 'ca.crt'));
  // apiWorkers: the claim GETs answered by worker processes in front of
  // the emulator (bench/emu-claims.js), not by its one thread.
  const front = apiWorkers > 0 ? await require('./emu-claims').claimFront(emu, apiWorkers) : null;
  const url = front ? front.url : emu.url;
  const kc = path.join(kdir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: url }));
  // A node's CDI directory (/var/run/cdi) is a tmpfs: /dev/shm where
  // there is one (creating files on a busy ext4 /tmp costs 0.5 ms each).
  const cdi = fs.existsSync('/dev/shm') ? fs.mkdtempSync('/dev/shm/kp-bench-cdi-') : path.join(dir, 'cdi');
  if (cdi.startsWith('/dev/shm/')) fs.chmodSync(cdi, 0o755);
  // The journal's state directory: on the disk, as /var/lib/kubelet is
  // (its two fsyncs per new claim), or, stateTmpfs, on a tmpfs.
  const state = stateTmpfs && fs.existsSync('/dev/shm') ? fs.mkdtempSync('/dev/shm/kp-bench-state-') : path.join(dir, 'state');
  if (state.startsWith('/dev/shm/')) fs.chmodSync(state, 0o755);
  giveToNodeserver(state);	// the CDI directory stays root's: the supervisor writes it
  let seq = 0;
  // n fresh allocated claims in the emulator.
  const claims = (n, prefix) => Array.from({ length: n }, () => {
    const c = { namespace: 'default', name: `${prefix}-${seq}`, uid: randomUUID() };
    emu.addClaim({ ...c, allocation: { results: [{ request: 'pci', driver: DRIVER, pool: NODE, device: devName(seq++) }] } });
    return c;
  });
  if (warmGets) await warmEmulator(emu, url, path.join(kdir, 'ca.crt'), warmGets);
  return { sys, emu, front, kc, cdi, state, claims };
}

// warmEmulator has the emulator answer n claim GETs (curl, 4 keep-alive
// connections, as the publisher) before anything is measured: its
// JavaScript runs interpreted until V8 has seen a path a few thousand
// times, and cold it spends 0.3-0.5 ms of CPU on a GET that costs it
// ~0.05 ms warm (docs/benchmarks-history.md, item 11), which a 100-claim call would
// otherwise measure instead of the library.
async function warmEmulator(emu, base, caFile, n) {
  emu.addClaim({ namespace: 'default', name: 'emu-warm-up', allocation: { results: [{ request: 'pci', driver: DRIVER, pool: NODE, device: devName(0) }] } });
  const url = `${base}/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/emu-warm-up`;
  const args = ['-s', '-Z', '--parallel-max', '4', '--cacert', caFile, '-H', `Authorization: Bearer ${emu.token}`, '-w', '%{http_code}\\n'];
  for (let i = 0; i < n; i++) args.push('-o', '/dev/null', url);
  await new Promise((resolve, reject) => {
    const p = spawn('curl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('error', reject);
    p.on('close', (code) => {
      const bad = out.trim().split('\n').filter((l) => l !== '200').length;
      if (code !== 0 || bad) reject(new Error(`emulator warm-up: curl exit ${code}, ${bad} answers not 200`));
      else resolve();
    });
  });
  emu.deleteClaim('default', 'emu-warm-up');
  emu.resetLog();
}

// The example server, as a run.js Server (start, stop, cpu, files, probe).
function exampleServer(Server, dir, o, tools, { qps = BENCH_QPS, burst = BENCH_BURST, name = 'example', warmGets = WARM_GETS, apiWorkers = 0, stateTmpfs = false } = {}) {
  const binary = path.join(tools.BUILD, 'examples', 'pci-driver');
  class Example extends Server {
    async start() {
      if (!fs.existsSync(this.binary)) throw new Error(`${this.binary} is missing: build first (make)`);
      this.env = await environment(this.dir, { warmGets, apiWorkers, stateTmpfs });
      const e = this.env;
      this.args = ['--driver-name', DRIVER, '--node-name', NODE, '--registrar-socket', this.regSock,
        '--plugin-socket', this.draSock, '--kubeconfig', e.kc, '--cdi-dir', e.cdi, '--state-dir', e.state,
        '--sysfs-root', e.sys, '--kube-api-qps', String(qps), '--kube-api-burst', String(burst)];
      // The load clients plus the sequential ones (as run.js's kp).
      if (o !== null) this.args.push('--max-connections', String(Math.min(1024, Math.max(...o.concurrency) + 8)));
      const errFile = this.logFile || path.join(this.dir, 'stderr');
      const err = fs.openSync(errFile, 'w');
      const t0 = process.hrtime.bigint();
      this.proc = spawn(this.binary, this.args, { stdio: ['ignore', 'ignore', err] });
      fs.closeSync(err);
      this.exited = new Promise((r) => this.proc.on('close', (code, sig) => r({ code, sig })));
      this.log = () => fs.readFileSync(errFile, 'utf8').split('\n').slice(-30).join('\n');
      for (;;) {
        if (/pci-driver: serving/.test(fs.readFileSync(errFile, 'utf8'))) break;
        if (this.proc.exitCode !== null || Number(process.hrtime.bigint() - t0) > 20e9) throw new Error(`${this.name}: did not start:\n${this.log()}`);
        await sleep(5);
      }
      this.tReady = Number(process.hrtime.bigint() - t0) / 1e6;
      await this.awaitRegistrable(t0);
      if (o === null) return;
      // Claims prepared once now, for the "known" figures; then the
      // journal's answers, twice (bench/loadgen -R compares bytes).
      this.known = e.claims(20, 'known');
      const groups = this.known.map((c) => [c]);
      await batches(this, 'NodePrepareResourcesRequest', groups);
      const answers = await batches(this, 'NodePrepareResourcesRequest', groups, 0);
      const again = await batches(this, 'NodePrepareResourcesRequest', groups, 0);
      const k = answers.findIndex((b, i) => !b.equals(again[i]));
      if (k >= 0) throw new Error(`${this.name}: two answers for the known claim ${this.known[k].uid} differ`);
      this.knownLoad = {
        file: tools.requestFile(this.dir, 'known', groups.map((g) => encode('NodePrepareResourcesRequest', g))),
        answers: tools.requestFile(this.dir, 'known-answers', answers),
      };
      this.probe = encode('NodePrepareResourcesRequest', [this.known[0]]);
    }

    // run.js's closed loops: known claims, 1 a call (the journal answers;
    // since issue 15 the CDI budget does not hold them back).
    closedLoad(n) {
      return n === 1 && this.knownLoad ? this.knownLoad : null;
    }

    async stop() {
      if (this.proc && this.proc.exitCode === null) {
        this.proc.kill('SIGTERM');
        if (await Promise.race([this.exited, timeout(10000, null)]) === null) this.proc.kill('SIGKILL');
      }
      if (this.env) {
        if (this.env.front) await this.env.front.stop();
        await this.env.emu.stop();
        for (const d of [this.env.cdi, this.env.state]) if (d.startsWith('/dev/shm/')) fs.rmSync(d, { recursive: true, force: true });
      }
    }
  }
  const s = new Example(name, binary, () => [], dir);
  return s;
}

// Latencies of n keep-alive GETs of the claims, in ms, with curl (libcurl,
// as the publisher; TCP_NODELAY is curl's default), the first 3 (the
// connection's set-up) left out.
function curlGets(env, claims) {
  const token = fs.readFileSync(path.join(path.dirname(env.kc), 'token'), 'utf8').trim();
  const args = ['-s', '--cacert', path.join(path.dirname(env.kc), 'ca.crt'), '-H', `Authorization: Bearer ${token}`,
    '-w', '%{http_code} %{time_total}\\n'];
  for (const c of claims) args.push('-o', '/dev/null', `${env.front ? env.front.url : env.emu.url}/apis/resource.k8s.io/v1/namespaces/${c.namespace}/resourceclaims/${c.name}`);
  return new Promise((resolve, reject) => {
    const p = spawn('curl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('error', reject);
    p.on('close', (code) => {
      const lines = out.trim().split('\n').map((l) => l.split(' '));
      if (code !== 0 || lines.some(([st]) => st !== '200')) {
        reject(new Error(`curl: exit ${code}: ${out.slice(0, 200)}`));
        return;
      }
      resolve(lines.slice(3).map(([, t]) => Number(t) * 1000));
    });
  });
}

// CPU nanoseconds of pid's process tree by process name (comm), from
// the threads' schedstat (/proc/<pid>/stat's ticks of 10 ms are too
// coarse for a few calls a second).
function treeCpuByComm(pid) {
  const kids = new Map();
  const comm = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const pp = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
      comm.set(Number(d), st.slice(st.indexOf('(') + 1, st.lastIndexOf(')')));
      if (!kids.has(pp)) kids.set(pp, []);
      kids.get(pp).push(Number(d));
    } catch { /* gone */ }
  }
  const out = {};
  for (const todo = [pid]; todo.length;) {
    const p = todo.pop();
    todo.push(...(kids.get(p) || []));
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${p}/task`); } catch { /* gone */ }
    for (const t of tasks) {
      try {
        const ns = Number(fs.readFileSync(`/proc/${p}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
        out[comm.get(p)] = (out[comm.get(p)] || 0) + ns;
      } catch { /* gone */ }
    }
  }
  return out;
}

// The same, summed: the tree's CPU nanoseconds.
function treeCpuNs(pid) {
  return Object.values(treeCpuByComm(pid)).reduce((a, n) => a + n, 0);
}

// run() of `calls` calls against srv: its result with netCpu, the server
// tree's CPU per call in us less what it spends idle (measured for a
// second before: gRPC's timers and pollers, which at a few calls a
// second would otherwise dominate).
async function withCpu(srv, calls, run) {
  const c0 = treeCpuNs(srv.proc.pid);
  const t0 = process.hrtime.bigint();
  await sleep(1000);
  const c1 = treeCpuNs(srv.proc.pid);
  const t1 = process.hrtime.bigint();
  const idle = (c1 - c0) / Number(t1 - t0);
  const r = await run();
  const wall = Number(process.hrtime.bigint() - t1);
  const busy = treeCpuNs(srv.proc.pid) - c1;
  return { ...r, netCpu: Math.max(0, busy - idle * wall) / calls / 1000, idleCores: idle };
}

// Answers' per-claim errors of a NodePrepare/UnprepareResources response.
function claimErrors(type, buf) {
  const m = proto.decode(proto.typeName('v1', type), buf);
  return Object.values(m.claims || {}).filter((c) => c.error).map((c) => c.error);
}

// The claim errors of a NodePrepareResourcesResponse (run.js: a wrong
// answer of the closed loops, maybe truncated).
function describeAnswer(buf) {
  try {
    const errs = claimErrors('NodePrepareResourcesResponse', buf);
    return errs.length ? `${errs.length} claim error(s), first: ${errs[0]}` : 'no claim error (other bytes)';
  } catch (e) {
    return `${buf.length} bytes, not a NodePrepareResourcesResponse (${e.message})`;
  }
}

// Calls of the claim groups through grpc-js, paced within the CDI
// budget (a token a claim), every answer checked; the answers.
async function batches(srv, type, groups, tokens = 1) {
  const cl = newClient(srv.draSock);
  const method = type.startsWith('NodePrepare') ? PREPARE : UNPREPARE;
  const out = [];
  try {
    for (const g of groups) {
      const r = await rawUnary(cl, method, encode(type, g), 30000);
      const errs = r.code === 0 ? claimErrors(type.replace('Request', 'Response'), r.buffer) : [r.details];
      if (errs.length) throw new Error(`${srv.name}: ${method}: ${errs.length} of ${g.length} claims failed: ${errs[0]}`);
      out.push(r.buffer);
      await sleep(g.length * tokens * CDI_MS);
    }
  } finally {
    cl.close();
  }
  return out;
}

// The claims' CDI spec files that are missing (a prepare that failed).
function missingSpecs(srv, claims) {
  return claims.filter((c) => !fs.existsSync(path.join(srv.env.cdi, `${DRIVER}_claim-${c.uid}.json`))).length;
}

// One loadgen run over the groups (a request each) that must all prepare.
async function prepared(tools, srv, groups, opts) {
  const file = tools.requestFile(srv.dir, 'groups', groups.map((g) => encode('NodePrepareResourcesRequest', g)));
  const r = await tools.loadgen(srv, srv.draSock, PREPARE, file, { calls: groups.length, ...opts });
  const miss = missingSpecs(srv, groups.flat());
  if (miss) throw new Error(`${srv.name}: ${miss} of ${groups.flat().length} claims not prepared (rate-limited?)`);
  return r;
}

// Unprepare the claims again, paced (the journal and the CDI directory
// stay their size), then let the CDI budget fill up again.
async function unprepare(srv, groups) {
  const flat = groups.flat();
  const per = [];
  for (let i = 0; i < flat.length; i += 10) per.push(flat.slice(i, i + 10));
  await sleep(CDI_REFILL_MS);
  await batches(srv, 'NodeUnprepareResourcesRequest', per, 2);
  await sleep(CDI_REFILL_MS);
}

// A pool of requests of one claim with random UIDs, for bare and kp.
function randomPool(tools, dir) {
  return tools.requestFile(dir, 'random-1', Array.from({ length: 64 }, (_, i) => encode('NodePrepareResourcesRequest',
    [{ namespace: 'default', name: `claim-${i}`, uid: randomUUID() }])));
}

// The example figures; put(server, metric, value). when: 'fresh' (its
// first nodeserver: everything) or 'restarted' (after run.js's recovery
// rounds killed it: the 1-claim look-up again).
async function exampleBench(o, srv, servers, tools, Server, tmp, put, when = 'fresh') {
  const e = srv.env;
  const pace = { intervalUs: 1e6 / PACE };
  if (when === 'restarted') {
    for (let round = 0; round < o.rounds; round++) {
      const ones = Array.from({ length: LOOKUPS }, () => e.claims(1, 'again'));
      const r = await withCpu(srv, ones.length, () => prepared(tools, srv, ones, pace));
      put(srv, 'look1r.p50', r.p50);
      put(srv, 'look1r.cpu', r.netCpu);
      await unprepare(srv, ones);
    }
    return;
  }
  const pool = randomPool(tools, srv.dir);
  for (let round = 0; round < o.rounds; round++) {
    // Known claims at PACE/s, and bare and kp at the same pace.
    for (const s of servers) {
      // bare and kp once, with the first example server (not example@old)
      if (s !== srv && (s.name.includes('@') || srv.name !== 'example' || !(s.name === 'bare' || /^kp(-w\d+)?$/.test(s.name)))) continue;
      const r = await withCpu(s, KNOWN_CALLS + 5, () => tools.loadgen(s, s.draSock, PREPARE, s === srv ? srv.knownLoad.file : pool,
        { calls: KNOWN_CALLS, warmup: 5, ...pace }));
      put(s, 'paced.p50', r.p50);
      put(s, 'paced.p99', r.p99);
      put(s, 'paced.cpu', r.netCpu);
      put(s, 'paced.idle', r.idleCores);
    }
    // One fresh claim per call, then 100 in one call.
    const ones = Array.from({ length: LOOKUPS }, () => e.claims(1, 'look'));
    const r1 = await withCpu(srv, ones.length, () => prepared(tools, srv, ones, pace));
    put(srv, 'look1.p50', r1.p50);
    put(srv, 'look1.p99', r1.p99);
    put(srv, 'look1.cpu', r1.netCpu);
    const gets = await curlGets(e, ones.flat());
    put(srv, 'get.p50', pct(gets, 0.5));
    put(srv, 'get.p99', pct(gets, 0.99));
    await unprepare(srv, ones);
    // Back to back, as curl's GETs: 40 calls, within the CDI burst.
    const b2b = Array.from({ length: 40 }, () => e.claims(1, 'b2b'));
    const rb = await withCpu(srv, b2b.length, () => prepared(tools, srv, b2b, {}));
    put(srv, 'look1b.p50', rb.p50);
    put(srv, 'look1b.cpu', rb.netCpu);
    await unprepare(srv, b2b);
    // Two calls of 100: the CDI budget's burst is 100 spec writes.
    for (let k = 0; k < 2; k++) {
      const hundred = [e.claims(100, 'look100')];
      const r100 = await withCpu(srv, 1, () => prepared(tools, srv, hundred, {}));
      put(srv, 'look100.p50', r100.p50);
      put(srv, 'look100.cpu', r100.netCpu);
      await unprepare(srv, hundred);
    }
  }
  // Throttling: an instance at 50 QPS, burst 10; look-ups paced at 40/s
  // (below: no call should wait for a token) and at 100/s (above: the
  // bucket empties after the burst and calls wait), against the same
  // pace at 1000 QPS.
  const ctl = Array.from({ length: 60 }, () => e.claims(1, 'ctl'));
  const rc = await prepared(tools, srv, ctl, { intervalUs: 25000 });
  put(srv, 'qps.ctl.p50', rc.p50);
  put(srv, 'qps.ctl.p99', rc.p99);
  put(srv, 'qps.ctl.rate', rc.rate);
  await unprepare(srv, ctl);
  const dir = path.join(tmp, `${srv.name.replace('@', '-')}-qps`);
  fs.mkdirSync(dir);
  const q = exampleServer(Server, dir, null, tools, { qps: 50, burst: 10, name: `${srv.name}-qps` });
  try {
    await q.start();
    await prepared(tools, q, q.env.claims(5, 'warm').map((c) => [c]), { intervalUs: 100000 });
    const below = await prepared(tools, q, q.env.claims(60, 'below').map((c) => [c]), { intervalUs: 25000 });
    put(srv, 'qps.below.p50', below.p50);
    put(srv, 'qps.below.p99', below.p99);
    put(srv, 'qps.below.max', below.max);
    put(srv, 'qps.below.rate', below.rate);
    await sleep(CDI_REFILL_MS);
    const above = await prepared(tools, q, q.env.claims(90, 'above').map((c) => [c]), { intervalUs: 10000 });
    put(srv, 'qps.above.p50', above.p50);
    put(srv, 'qps.above.max', above.max);
    put(srv, 'qps.above.rate', above.rate);
  } finally {
    await q.stop();
  }
  // The journal's share of a look-up: the same 40 back-to-back look-ups
  // with its state directory on a tmpfs (no disk under its fsyncs).
  const tdir = path.join(tmp, `${srv.name.replace('@', '-')}-tmpfs`);
  fs.mkdirSync(tdir);
  const tf = exampleServer(Server, tdir, null, tools, { name: `${srv.name}-tmpfs`, stateTmpfs: true, apiWorkers: o.apiWorkers || 0 });
  try {
    await tf.start();
    await prepared(tools, tf, tf.env.claims(5, 'warm').map((c) => [c]), { intervalUs: 25000 });
    for (let round = 0; round < o.rounds; round++) {
      await sleep(CDI_REFILL_MS);
      const b2b = Array.from({ length: 40 }, () => tf.env.claims(1, 'b2b'));
      const rt = await withCpu(tf, b2b.length, () => prepared(tools, tf, b2b, {}));
      put(srv, 'look1t.p50', rt.p50);
      put(srv, 'look1t.cpu', rt.netCpu);
      await unprepare(tf, b2b);
    }
  } finally {
    await tf.stop();
  }
}

// Report rows (run.js's row(label, key, unit, get)).
function exampleRows(row, get) {
  row(`known claim, 1 a call, paced at ${PACE}/s: p50`, null, 'ms', get('paced.p50'));
  row(`known claim, paced at ${PACE}/s: p99`, null, 'ms', get('paced.p99'));
  row(`known claim, paced at ${PACE}/s: server CPU/call, less idle`, null, 'us', get('paced.cpu'));
  row(`example: look-up, 1 new claim, paced at ${PACE}/s: p50`, null, 'ms', get('look1.p50'));
  row('example: look-up, 1 new claim: p99', null, 'ms', get('look1.p99'));
  row('example: API GET alone (curl, keep-alive): p50', null, 'ms', get('get.p50'));
  row('example: API GET alone: p99', null, 'ms', get('get.p99'));
  row('example: look-up, 1 new claim, 40 back to back: p50', null, 'ms', get('look1b.p50'));
  row('example: the same, server CPU/call, less idle', null, 'us', get('look1b.cpu'));
  row('example: look-up (back to back) p50 minus GET p50', null, 'ms', (s) => {
    const a = get('look1b.p50')(s);
    const b = get('get.p50')(s);
    return a === null || b === null ? null : a - b;
  });
  row('example, journal on a tmpfs: look-up, 40 back to back: p50', null, 'ms', get('look1t.p50'));
  row('example, journal on a tmpfs: the same, server CPU/call, less idle', null, 'us', get('look1t.cpu'));
  row('example, journal on a tmpfs: look-up p50 minus GET p50', null, 'ms', (s) => {
    const a = get('look1t.p50')(s);
    const b = get('get.p50')(s);
    return a === null || b === null ? null : a - b;
  });
  row('example: look-up, 1 new claim: server CPU/call, less idle', null, 'us', get('look1.cpu'));
  row('example: look-up, 100 new claims in one call: p50', null, 'ms', get('look100.p50'));
  for (const [k, what] of [['look1', 'paced'], ['look1b', 'back to back']]) {
    row(`example: 100 claims / 1 claim (${what}), p50`, null, '', (s) => {
      const x = get('look100.p50')(s);
      const y = get(`${k}.p50`)(s);
      return x === null || y === null ? null : Number((x / y).toFixed(2));
    });
  }
  row('example: look-up, 100 new claims: server CPU/call, less idle', null, 'us', get('look100.cpu'));
  row('example: look-up, 1 new claim, nodeserver restarted: p50', null, 'ms', get('look1r.p50'));
  row('example: the same, server CPU/call, less idle', null, 'us', get('look1r.cpu'));
  row('example@1000 QPS: look-ups paced at 40/s: p50', null, 'ms', get('qps.ctl.p50'));
  row('example@1000 QPS: look-ups paced at 40/s: p99', null, 'ms', get('qps.ctl.p99'));
  row('example@1000 QPS: look-ups paced at 40/s: calls/s reached', null, '/s', get('qps.ctl.rate'));
  row('example@50 QPS: look-ups paced at 40/s: p50', null, 'ms', get('qps.below.p50'));
  row('example@50 QPS: look-ups paced at 40/s: p99', null, 'ms', get('qps.below.p99'));
  row('example@50 QPS: look-ups paced at 40/s: max', null, 'ms', get('qps.below.max'));
  row('example@50 QPS: look-ups paced at 40/s: calls/s reached', null, '/s', get('qps.below.rate'));
  row('example@50 QPS: look-ups paced at 100/s: p50', null, 'ms', get('qps.above.p50'));
  row('example@50 QPS: look-ups paced at 100/s: max', null, 'ms', get('qps.above.max'));
  row('example@50 QPS: look-ups paced at 100/s: calls/s reached', null, '/s', get('qps.above.rate'));
}

module.exports = { exampleServer, exampleBench, exampleRows, describeAnswer, treeCpuNs, treeCpuByComm };
