'use strict';
// bench/run.js - speed and memory of kubeletplugin against a bare gRPC
// C-core server (bench/bare_server.c) in the same run, with the same
// load generator (bench/loadgen, gRPC C core).
//
// Servers: "bare" (build/bench/bare_server), "kp" (build/tests/kp_testdriver
// with default options: 4 worker threads, hooks serialized) and "kp-wN"
// (kp_testdriver --workers N: N worker threads, hooks not serialized); opt-in "example" (build/examples/pci-driver with the
// API-server emulator, bench/example.js: in the 1-claim closed loops with
// claims it prepared before, each answer checked, and its look-up
// figures, paced). All run at once and every measurement visits them in turn,
// so background load on the machine hits them alike.
//
// Measured, for requests of each claim count (NodePrepareResources, v1):
//   sequential latency  one connection, one call at a time: p50 / p99
//   loaded              C connections (8 and 64 by default), one call in
//                       flight on each, closed loop: p50 / p99, calls/s
// all with bench/loadgen, a load generator on gRPC C core (a grpc-js
// client saturates its core before our server does and hides its cost)
//   server CPU          user+system time of the whole server tree per call,
//                       from its threads' schedstat (ns; not /proc/<pid>/stat's
//                       10 ms ticks)
// and GetInfo latency on the registration socket, the time from start to
// the first GetInfo answer (kp_start to registrable), the time from a
// SIGKILL of the nodeserver to the next prepare answered (recovery), and
// publishing (--publish N, default 10 000 devices in 4 pools, 0: off):
// kp_testdriver against the API-server emulator (tests/apiserver-emu),
// wall time and requests until every slice is written, then the writes of
// an unchanged republish and of one with one device changed (the
// publisher's own token bucket, client-go's 5 QPS, paces the creates);
// memory: VmRSS and PSS summed over the
// server's process tree (driver, supervisor, children), idle and after load;
// and first (--pss-alone, the default; --pss-only: nothing else) the Pss of
// one tree alone: bare, then kp_testdriver with its publisher against the
// emulator, idle and after load, per process and per mapping (pssAlone()).
//
// Figures only: nothing here asserts on timings. Exit status 1 only when a
// server fails to start or a call fails.
//
//   node bench/run.js --help   (every flag, its default, the servers)
// KP_BUILD selects the build directory (default build/). --old DIR adds
// "<name>@old" servers (e.g. --servers bare,kp,kp@old) run from another
// build directory, to compare a change with the code before it in one run.
// The test driver runs with --quiet: its per-claim ALLOC line on stderr
// (for the e2e tests) would otherwise be relayed by the supervisor, a
// write and a read per claim that are the test driver's cost, not the
// library's.

const { spawn } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const ROOT = path.resolve(__dirname, '..');
const BUILD = path.resolve(ROOT, process.env.KP_BUILD || 'build');
const { proto } = require('../tests/kubelet-sim');
const { newClient, waitForReady, rawUnary } = require('../tests/kubelet-sim/grpc-util');

const DRIVER = 'bench.example.com';
const PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const GETINFO = '/pluginregistration.Registration/GetInfo';
const DEADLINE_MS = 30000;

// ---- flags ---------------------------------------------------------------

function parseFlags(argv) {
  const o = {
    seq: 2000, secs: 2, concurrency: [8, 64], claims: [1, 16, 128], warmup: 200, rounds: 3,
    workers: 4, servers: null, json: null, infoCalls: 500, logs: null, old: null, publish: 10000,
    pssAlone: true, pssOnly: false, apiWorkers: 0, idleSecs: 30,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    const num = () => {
      const n = Number(v());
      if (!(n > 0)) usage(`${a}: a positive number`);
      return n;
    };
    switch (a) {
      case '--seq': o.seq = Math.round(num()); break;
      case '--secs': o.secs = num(); break;
      case '--concurrency': case '-c': o.concurrency = v().split(',').map(Number); break;
      case '--claims': o.claims = v().split(',').map(Number); break;
      case '--warmup': o.warmup = Math.round(Number(v())); break;
      case '--rounds': o.rounds = Math.round(num()); break;
      case '--workers': o.workers = Math.round(num()); break;
      case '--info-calls': o.infoCalls = Math.round(num()); break;
      case '--servers': o.servers = v().split(','); break;
      case '--json': o.json = v(); break;
      case '--logs': o.logs = path.resolve(v()); break;
      case '--old': o.old = path.resolve(v()); break;
      case '--publish': o.publish = Math.round(Number(v())); break;
      case '--api-workers': o.apiWorkers = Math.round(Number(v())); break;
      case '--pss-alone': o.pssAlone = true; break;
      case '--no-pss-alone': o.pssAlone = false; break;
      case '--pss-only': o.pssAlone = true; o.pssOnly = true; break;
      case '--idle': o.idleSecs = Number(v()); if (!(o.idleSecs >= 0)) usage('--idle: seconds, 0: off'); break;
      case '--journal-flat': o.journalFlat = true; break;
      case '-h': case '--help': usage(); break;
      default: usage(`unknown flag ${a}`);
    }
  }
  if (o.claims.some((n) => !(n >= 1 && n <= 4096))) usage('--claims: counts from 1 to 4096');
  if (o.concurrency.some((n) => !(n >= 1 && n <= 1000))) usage('--concurrency: counts from 1 to 1000');
  o.servers = o.servers || ['bare', 'kp', `kp-w${o.workers}`];
  return o;
}

function usage(err) {
  if (err) console.error(`bench: ${err}`);
  const text = [
    'usage: node bench/run.js [flags]   (KP_BUILD=DIR: the build directory, default build/)',
    '',
    'Servers (--servers, comma-separated; all run at once, every measurement visits them in turn):',
    '  bare        bench/bare_server: gRPC C core, one completion-queue thread of its own, the test',
    '              driver\'s answers, nothing else (no supervisor, checks, logging or sandbox)',
    '  kp          kp_testdriver --quiet, default options: 4 worker threads, hooks serialized (kp_serialize 1)',
    '  kp-wN       the same with --workers N: N worker threads, hooks not serialized (kp_serialize 0)',
    '  example     examples/pci-driver against the API-server emulator, fake sysfs (bench/example.js);',
    '              the 1-claim closed loops with known claims (prepared before: the journal answers),',
    '              every answer checked; then its look-ups, paced; adds one to two minutes',
    '  NAME@old    kp@old, kp-wN@old, example@old: the same from the build in --old DIR',
    '  NAME+stderr kp, kp-wN or their @old with --log-per-claim stderr: the prepare hook writes one',
    '              line per claim on stderr; NAME+kplog: through kp_log(). Rows "hook log line: CPU"',
    '              give (CPU/call of NAME+X - CPU/call of NAME) / claims, NAME must run too; the',
    '              broker\'s flood guard (200 lines/s, bursts of 1000) drops most of them, as for any driver',
    '',
    'Flags (default in brackets):',
    '  --servers LIST       servers to run [bare,kp,kp-w<--workers>]',
    '  --claims LIST        claims per NodePrepareResources call [1,16,128]',
    '  --concurrency LIST   connections of the loaded closed loops (-c) [8,64]',
    '  --seq N              calls of each sequential run [2000]',
    '  --secs S             seconds of each loaded run [2]',
    '  --warmup N           warm-up calls per server and request size [200]',
    '  --rounds R           rounds; figures are medians over them [3]',
    '  --workers N          N of the default kp-wN server [4]',
    '  --info-calls N       GetInfo calls per round [500]',
    '  --publish N          devices published by kp against the emulator, 0: off [10000]',
    '  --pss-alone          Pss of one tree alone first (needs root: /proc/<pid>/pagemap) [on]',
    '  --no-pss-alone       skip it',
    '  --pss-only           only the Pss of one tree alone',
    '  --journal-flat       only the journal rows (bench/journal-flat.js): a new claim\'s p50 and CPU/call with',
    '                       1, 100, 1,000, 10,000 claims already prepared, this build and --old DIR interleaved',
    '  --old DIR            build directory of the NAME@old servers (needed by them) [none]',
    '  --api-workers N      example: N worker processes answer its claim GETs in front of the',
    '                       emulator (bench/emu-claims.js), 0: the emulator alone [0]',
    '  --idle S             idle CPU (ms/s) and wake-ups (runs/s) per process over S seconds,',
    '                       every server idle at once, after their start; 0: off [30]',
    '  --json FILE          also write every figure as JSON',
    '  --logs DIR           keep each server\'s log in DIR/NAME.log',
    '  -h, --help           this text',
    '',
    'Server CPU/call: sum_exec_runtime of the server tree\'s threads (/proc/<pid>/task/*/schedstat, ns).',
  ].join('\n');
  (err ? console.error : console.log)(text);
  process.exit(err ? 2 : 0);
}

// ---- processes -----------------------------------------------------------

const CLK_TCK = 100;	// USER_HZ: /proc/<pid>/stat times (Linux ABI)

// pid -> ppid for every process, from /proc.
function processTable() {
  const t = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      t.set(Number(d), Number(f[1]));
    } catch { /* gone */ }
  }
  return t;
}

// pid and every descendant.
function tree(pid) {
  const t = processTable();
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    for (const [p, pp] of t) if (pp === out[i]) out.push(p);
  }
  return out;
}

function readOr(file, dflt) {
  try { return fs.readFileSync(file, 'utf8'); } catch { return dflt; }
}

function statusKB(pid, key) {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readOr(`/proc/${pid}/status`, ''));
  return m ? Number(m[1]) : null;
}

// PSS and USS (Private_Clean + Private_Dirty) from smaps_rollup, in kB.
function smapsKB(pid) {
  const s = readOr(`/proc/${pid}/smaps_rollup`, '');
  const kb = (k) => {
    const m = new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s);
    return m ? Number(m[1]) : null;
  };
  const pc = kb('Private_Clean');
  const pd = kb('Private_Dirty');
  return { pss: kb('Pss'), uss: pc === null || pd === null ? null : pc + pd };
}

// CPU seconds (user + system, all threads, live and exited) of pid.
function cpuSecs(pid) {
  const s = readOr(`/proc/${pid}/stat`, null);
  if (s === null) return 0;
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

function comm(pid) {
  return readOr(`/proc/${pid}/comm`, '?').trim();
}

// Memory of a process tree: sums and one line per process.
function memory(pid) {
  const procs = tree(pid).map((p) => ({
    pid: p, comm: comm(p), rss: statusKB(p, 'VmRSS'), ...smapsKB(p),
    threads: Number((/^Threads:\s+(\d+)/m.exec(readOr(`/proc/${p}/status`, '')) || [0, 0])[1]),
    cpu: cpuSecs(p),
  }));
  const sum = (k) => (procs.some((p) => p[k] === null) ? null : procs.reduce((a, p) => a + p[k], 0));
  return { rss: sum('rss'), pss: sum('pss'), uss: sum('uss'), threads: sum('threads'), procs };
}

// CPU seconds (user + system) of pid's live threads from their schedstat
// (sum_exec_runtime, nanoseconds). /proc/<pid>/stat counts in 10 ms ticks
// (USER_HZ 100), too coarse for one run's delta at a few ms per call;
// schedstat misses a thread that exits during the run, which the
// servers' long-lived threads do not.
function schedSecs(pid) {
  let tasks = [];
  try { tasks = fs.readdirSync(`/proc/${pid}/task`); } catch { return 0; }
  let ns = 0;
  for (const t of tasks) {
    const s = readOr(`/proc/${pid}/task/${t}/schedstat`, null);
    if (s !== null) ns += Number(s.split(' ')[0]);
  }
  return ns / 1e9;
}

// CPU seconds of pid's process tree: the closed loops' server CPU/call.
function treeCpu(pid) {
  return tree(pid).reduce((a, p) => a + schedSecs(p), 0);
}

// CPU nanoseconds and runs on a CPU (schedstat's third field: each is a
// wake-up or a preemption) of each process of pid's tree, by comm.
function treeSched(pid) {
  const out = {};
  for (const p of tree(pid)) {
    let ns = 0;
    let runs = 0;
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${p}/task`); } catch { continue; }
    for (const t of tasks) {
      const f = readOr(`/proc/${p}/task/${t}/schedstat`, '0 0 0').split(' ');
      ns += Number(f[0]);
      runs += Number(f[2]);
    }
    const c = comm(p);
    const e = (out[c] ||= { ns: 0, runs: 0 });
    e.ns += ns;
    e.runs += runs;
  }
  return out;
}

// Idle CPU of every server at once over secs: per process (by comm)
// CPU ms/s and runs/s.
async function idleBench(servers, secs) {
  const a = servers.map((s) => treeSched(s.proc.pid));
  const t0 = process.hrtime.bigint();
  await sleep(secs * 1000);
  const b = servers.map((s) => treeSched(s.proc.pid));
  const dt = Number(process.hrtime.bigint() - t0) / 1e9;
  servers.forEach((s, i) => {
    s.idleCpu = {};
    for (const [c, e] of Object.entries(b[i])) {
      const x = a[i][c];
      if (!x) continue;
      s.idleCpu[c] = { ms: (e.ns - x.ns) / 1e6 / dt, runs: (e.runs - x.runs) / dt };
    }
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A timeout for Promise.race that does not keep the process alive.
const timeout = (ms, v) => new Promise((r) => setTimeout(r, ms, v).unref());

class Server {
  constructor(name, binary, args, dir) {
    this.name = name;
    this.dir = dir;
    this.draSock = path.join(dir, 'dra.sock');
    this.regSock = path.join(dir, 'reg.sock');
    this.binary = binary;
    this.args = args(this);
    this.logFile = null;	// stderr goes to /dev/null unless --logs
  }

  async start() {
    if (!fs.existsSync(this.binary)) throw new Error(`${this.binary} is missing: build first (make)`);
    // kp_testdriver writes one stderr line per prepared claim: a file
    // (or a pipe into this process) would weigh on the figures.
    const err = fs.openSync(this.logFile || '/dev/null', 'w');
    const t0 = process.hrtime.bigint();
    this.proc = spawn(this.binary, this.args, { stdio: ['pipe', 'pipe', err] });
    fs.closeSync(err);
    this.exited = new Promise((r) => this.proc.on('close', (code, sig) => r({ code, sig })));
    const lines = readline.createInterface({ input: this.proc.stdout });
    this.waiters = [];
    lines.on('line', (l) => { this.waiters = this.waiters.filter((w) => !w(l)); });
    const first = await Promise.race([
      new Promise((r) => this.waiters.push((l) => { r(l); return true; })),
      this.exited.then((x) => `exited ${JSON.stringify(x)}`),
      timeout(20000, 'timeout'),
    ]);
    if (!first.startsWith('ready')) throw new Error(`${this.name}: ${first}\n${this.log()}`);
    this.tReady = Number(process.hrtime.bigint() - t0) / 1e6;
    await this.awaitRegistrable(t0);
  }

  // First GetInfo answered: the plugin can be registered from here on
  // (bench/example.js's server too). t0: the start, hrtime nanoseconds.
  async awaitRegistrable(t0) {
    const reg = newClient(this.regSock);
    for (;;) {
      const r = await rawUnary(reg, GETINFO, Buffer.alloc(0), 1000);
      if (r.code === 0) break;
      if (Number(process.hrtime.bigint() - t0) > 20e9) throw new Error(`${this.name}: no GetInfo answer: ${r.details}`);
      await sleep(2);
    }
    reg.close();
    this.tRegistrable = Number(process.hrtime.bigint() - t0) / 1e6;
  }

  // Send a test driver command; resolves with its answer line.
  command(cmd, prefix) {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`${this.name}: no answer to ${cmd}`)), 20000);
      this.waiters.push((l) => {
        if (!l.startsWith(prefix)) return false;
        clearTimeout(t);
        resolve(l);
        return true;
      });
      this.proc.stdin.write(`${cmd}\n`);
    });
  }

  log() {
    if (!this.logFile) return '(rerun with --logs DIR to keep it)';
    return readOr(this.logFile, '').split('\n').slice(-30).join('\n');
  }

  cpu() { return treeCpu(this.proc.pid); }

  async stop() {
    if (!this.proc) return;
    try { this.proc.stdin.end(); } catch { /* gone */ }	// kp_testdriver: EOF is "stop"
    if (this.name === 'bare') this.proc.kill('SIGTERM');
    let r = await Promise.race([this.exited, timeout(10000, null)]);
    if (r === null) this.proc.kill('SIGTERM');
    r = await Promise.race([this.exited, timeout(3000, null)]);
    if (r === null) this.proc.kill('SIGKILL');
  }
}

// ---- load ----------------------------------------------------------------

// A pool of distinct encoded requests of n claims each (UIDs differ).
function requests(n, count = 64) {
  const type = proto.typeName('v1', 'NodePrepareResourcesRequest');
  return Array.from({ length: count }, (_, r) => proto.encode(type, {
    claims: Array.from({ length: n }, (_, k) => ({ namespace: 'default', name: `claim-${r}-${k}`, uid: randomUUID() })),
  }));
}

class Failure extends Error {}

async function call(client, method, buf) {
  const r = await rawUnary(client, method, buf, DEADLINE_MS);
  if (r.code !== 0) throw new Failure(`${method}: code ${r.code}: ${r.details}`);
  return r.buffer;
}

// The request pools as bench/loadgen reads them: 4-byte big-endian length,
// then the message, one after the other.
function requestFile(dir, name, bufs) {
  const file = path.join(dir, `${name}.req`);
  fs.writeFileSync(file, Buffer.concat(bufs.flatMap((b) => {
    const h = Buffer.alloc(4);
    h.writeUInt32BE(b.length);
    return [h, b];
  })));
  return file;
}

const LOADGEN = path.join(BUILD, 'bench', 'loadgen');

// One closed-loop run of bench/loadgen (gRPC C core) against sock:
// conns connections with one call in flight each, for `calls` calls per
// connection or `secs` seconds. Latencies in ms; server CPU per call in
// us; cores busy in the server tree and in the load generator.
// answers: a file of the answers the requests must get (loadgen -R);
// then `wrong` is the answers that differed, left out of the latencies
// and of `rate`, and `firstWrong` the first one's bytes.
function loadgen(srv, sock, method, file, { conns = 1, calls = 0, secs = 0, warmup = 0, intervalUs = 0, answers = null }) {
  const args = ['-t', `unix:${sock}`, '-m', method, '-r', file, '-c', String(conns),
    '-w', String(warmup), '-d', String(DEADLINE_MS)];
  if (intervalUs) args.push('-i', String(intervalUs));
  if (answers) args.push('-R', answers);
  if (calls) args.push('-n', String(calls)); else args.push('-s', String(secs));
  const c0 = srv.cpu();
  return new Promise((resolve, reject) => {
    const p = spawn(LOADGEN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (code) => {
      const cpu = srv.cpu() - c0;
      let r;
      try { r = JSON.parse(out); } catch {
        reject(new Error(`loadgen ${args.join(' ')}: exit ${code}: ${err || out}`));
        return;
      }
      if (r.errors > 0) {
        reject(new Failure(`${method}: ${r.errors} of ${r.calls} calls failed, first: code ${r.first_status}: ${r.first_error}`));
        return;
      }
      const wrong = r.wrong || 0;
      resolve({
        calls: r.calls, p50: r.p50_us / 1000, p99: r.p99_us / 1000, p999: r.p999_us / 1000, max: r.max_us / 1000,
        rate: (r.calls - wrong) / r.wall_s, cpuPerCall: (cpu / r.calls) * 1e6,
        serverCpu: cpu / r.wall_s, clientCpu: r.client_cpu_s / r.wall_s,
        wrong, wrongRate: wrong / r.wall_s, firstWrong: r.first_wrong_hex ? Buffer.from(r.first_wrong_hex, 'hex') : null,
      });
    });
  });
}

async function clientsFor(srv, n, sock = srv.draSock) {
  const cl = Array.from({ length: n }, () => newClient(sock));
  await Promise.all(cl.map((c) => waitForReady(c, 10000)));
  return cl;
}

// Decoded answer, for the "same response" check (map order aside).
function decodedPrepare(buf) {
  const m = proto.decode(proto.typeName('v1', 'NodePrepareResourcesResponse'), buf);
  const claims = {};
  for (const k of Object.keys(m.claims || {}).sort()) claims[k] = m.claims[k];
  return JSON.stringify(claims);
}

// Publishing n devices through kp_testdriver to the API-server emulator.
async function publishBench(o, tmp) {
  const { startEmulator, kubeconfig } = require('../tests/apiserver-emu');
  const NODE = 'node-1';
  const dir = path.join(tmp, 'publish');
  fs.mkdirSync(dir);
  // The publisher runs under its own uid and reads the kubeconfig here.
  fs.chmodSync(tmp, 0o755);
  fs.chmodSync(dir, 0o755);
  // The credentials apart from the DRA socket's directory (dir), which
  // the nodeserver keeps: the plugin refuses a kubeconfig there (as
  // bench/example.js does).
  const kdir = path.join(tmp, 'publish-kube');
  fs.mkdirSync(kdir);
  fs.chmodSync(kdir, 0o755);
  const emu = await startEmulator({ versions: ['v1', 'v1beta1'], nodes: [NODE], tokenFile: path.join(kdir, 'token') });
  fs.copyFileSync(emu.caFile, path.join(kdir, 'ca.crt'));
  const kc = path.join(kdir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const pools = 4;
  const per = Math.ceil(o.publish / pools);
  const nslices = pools * Math.ceil(per / 128);
  const srv = new Server('publish', path.join(BUILD, 'tests', 'kp_testdriver'),
    (x) => ['--driver-name', DRIVER, '--registrar-socket', x.regSock, '--plugin-socket', x.draSock,
      '--kubeconfig', kc, '--node-name', NODE, '--quiet'], dir);
  const out = {};
  const pstatus = async () => {
    const l = await srv.command('publish-status', 'pstatus');
    const m = /pending=(\d+) creates=(\d+) updates=(\d+)/.exec(l);
    return m ? { pending: Number(m[1]), creates: Number(m[2]), updates: Number(m[3]) } : null;
  };
  const publishCmd = async (args) => {
    const l = await srv.command(`publish ${args}`, 'publish ');
    if (!l.startsWith('publish KP_OK')) throw new Error(`publish ${args}: ${l}`);
  };
  try {
    await srv.start();
    const r0 = emu.requests().length;
    const t0 = process.hrtime.bigint();
    await publishCmd(`${per} ${pools} a`);
    for (;;) {
      const st = await pstatus();
      if (st && st.pending === 0 && st.creates >= nslices) break;
      if (Number(process.hrtime.bigint() - t0) > 120e9) throw new Error('publishing: not done within 120 s');
      await sleep(20);
    }
    out.wall = Number(process.hrtime.bigint() - t0) / 1e6;
    out.requests = emu.requests().length - r0;
    out.writes = emu.writes().length;
    let w0 = emu.writes().length;
    await publishCmd(`${per} ${pools} a`);
    await sleep(2000);
    out.unchanged = emu.writes().length - w0;
    w0 = emu.writes().length;
    await publishCmd(`${per} ${pools} a 1`);
    const t1 = Date.now();
    while (emu.writes().length === w0 && Date.now() - t1 < 20000) await sleep(20);
    await sleep(2000);
    out.oneChanged = emu.writes().length - w0;
  } finally {
    await srv.stop();
    await emu.stop();
  }
  return out;
}

// ---- Pss of one tree alone (--pss-alone) ---------------------------------
//
// The issue 17 target: the Pss of one plugin's processes with no other
// process sharing the libraries. The kernel's Pss divides a page among
// every process on the machine that maps it (other tests, other servers),
// so this counts the tree's own view instead: each physical page (PFN,
// from /proc/<pid>/pagemap; needs root) resident in any process of the
// tree counts once, split among the tree's mappings of it. That is the
// figure smaps would give with the tree alone on the machine, whatever
// else runs. The shared zero page is not counted (smaps does not either).

const PAGE = 4096;

// One process: { pid, comm, threads, kernelPss, maps: [{ name, pfns }] }.
function pageMap(pid) {
  const maps = readOr(`/proc/${pid}/maps`, '').split('\n').filter(Boolean);
  const smaps = smapsKB(pid);
  let fd;
  try { fd = fs.openSync(`/proc/${pid}/pagemap`, 'r'); } catch { return null; }
  const out = {
    pid, comm: comm(pid), kernelPss: smaps.pss, maps: [],
    threads: Number((/^Threads:\s+(\d+)/m.exec(readOr(`/proc/${pid}/status`, '')) || [0, 0])[1]),
  };
  try {
    for (const l of maps) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(l);
      if (!m || m[4] === '[vsyscall]') continue;
      const lo = parseInt(m[1], 16) / PAGE;
      const n = parseInt(m[2], 16) / PAGE - lo;
      const buf = Buffer.alloc(n * 8);
      try { fs.readSync(fd, buf, 0, buf.length, lo * 8); } catch { continue; }
      const pfns = [];
      for (let i = 0; i < n; i++) {
        const v = buf.readBigUInt64LE(i * 8);
        if (v >> 63n) pfns.push(Number(v & ((1n << 55n) - 1n)));
      }
      if (pfns.length === 0) continue;
      let name = m[4] ? (m[4].startsWith('/') ? path.basename(m[4]) : m[4]) : '[anon]';
      if (name.startsWith('[stack')) name = '[stack]';
      out.maps.push({ name, perms: m[3], pfns });
    }
  } finally {
    fs.closeSync(fd);
  }
  return out;
}

// PFNs that are the kernel's zero page (KPF_ZERO_PAGE, bit 24 of
// /proc/kpageflags): read-only anonymous pages never written.
function zeroPfns(pfns) {
  const z = new Set();
  let fd;
  try { fd = fs.openSync('/proc/kpageflags', 'r'); } catch { return z; }
  const b = Buffer.alloc(8);
  try {
    for (const p of pfns) {
      if (fs.readSync(fd, b, 0, 8, p * 8) === 8 && (b.readBigUInt64LE(0) >> 24n) & 1n) z.add(p);
    }
  } finally {
    fs.closeSync(fd);
  }
  return z;
}

// Tree-alone Pss in kB, per process and per mapping name (summed over
// the processes), for the processes of `pids`.
function pssAloneOf(pids) {
  const procs = pids.map(pageMap).filter(Boolean);
  const count = new Map();
  for (const p of procs) for (const m of p.maps) for (const f of m.pfns) count.set(f, (count.get(f) || 0) + 1);
  // The zero page (and any page mapped very often) is a candidate.
  const zero = zeroPfns([...count].filter(([, c]) => c > 16).map(([f]) => f));
  const byMap = new Map();
  for (const p of procs) {
    p.pss = 0;
    p.byMap = new Map();
    p.bySegment = {};	// name and permissions: text, relro, data (JSON only)
    for (const m of p.maps) {
      let kb = 0;
      for (const f of m.pfns) if (!zero.has(f)) kb += (PAGE / 1024) / count.get(f);
      p.pss += kb;
      p.byMap.set(m.name, (p.byMap.get(m.name) || 0) + kb);
      p.bySegment[`${m.name} ${m.perms}`] = (p.bySegment[`${m.name} ${m.perms}`] || 0) + kb;
      byMap.set(m.name, (byMap.get(m.name) || 0) + kb);
    }
    delete p.maps;
    p.byMap = Object.fromEntries(p.byMap);
  }
  return { pss: procs.reduce((a, p) => a + p.pss, 0), threads: procs.reduce((a, p) => a + p.threads, 0), procs, byMap: Object.fromEntries(byMap) };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = require('node:net').createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function pssAloneReport(label, r, top) {
  const kb = (v) => `${(v / 1024).toFixed(2)} MiB`;
  console.log(`  ${label}: ${kb(r.pss)} in ${r.procs.length} process(es), ${r.threads} threads`);
  for (const p of r.procs) {
    const t = Object.entries(p.byMap).sort((a, b) => b[1] - a[1]).slice(0, 4).map(([n, v]) => `${n} ${v.toFixed(0)}`).join(', ');
    console.log(`    ${p.comm.padEnd(15)} ${kb(p.pss).padStart(9)} (kernel Pss ${p.kernelPss} kB), ${String(p.threads).padStart(2)} threads; kB: ${t}`);
  }
  const maps = Object.entries(r.byMap).sort((a, b) => b[1] - a[1]);
  const shown = maps.slice(0, top);
  const rest = maps.slice(top).reduce((a, [, v]) => a + v, 0);
  console.log(`    per mapping, kB: ${shown.map(([n, v]) => `${n} ${v.toFixed(0)}`).join(', ')}, ${maps.length - shown.length} more ${rest.toFixed(0)}`);
}

// bare alone, then kp_testdriver alone with its publisher against the
// API-server emulator: idle, after load; then with the observer
// (--http-endpoint), reported apart. Nothing else of this run is running.
async function pssAlone(o, tmp) {
  if (process.getuid() !== 0) {
    // pagemap shows page frame numbers to CAP_SYS_ADMIN only (zeros else).
    console.log('Pss of one tree alone: skipped (needs root: page frame numbers from /proc/<pid>/pagemap)');
    return null;
  }
  const { startEmulator, kubeconfig } = require('../tests/apiserver-emu');
  const top = 16;
  const out = {};
  const dir = path.join(tmp, 'pss-alone');
  fs.mkdirSync(dir);
  fs.chmodSync(tmp, 0o755);	// the publisher (own uid) reads the kubeconfig
  fs.chmodSync(dir, 0o755);
  console.log('Pss of one tree alone (each page of the tree counted once, split among the tree\'s own mappings; '
    + 'as if nothing else on the machine mapped the libraries):');
  const pids = (s, drop = []) => tree(s.proc.pid).filter((p) => !drop.includes(comm(p)));
  const load = async (s, files) => {
    await loadgen(s, s.draSock, PREPARE, files[0], { calls: 1000, warmup: 20 });
    await loadgen(s, s.draSock, PREPARE, files[1], { calls: 100 });
    await loadgen(s, s.draSock, PREPARE, files[0], { conns: 8, secs: 1 });
    await loadgen(s, s.regSock, GETINFO, files[2], { calls: 500 });
  };
  // Claims the emulator serves allocated (kp looks each one up with a GET).
  const type = proto.typeName('v1', 'NodePrepareResourcesRequest');
  const claims = [];
  const pool = (n, count) => Array.from({ length: count }, (_, r) => proto.encode(type, {
    claims: Array.from({ length: n }, (_, k) => {
      const c = { namespace: 'default', name: `claim-${n}-${r}-${k}`, uid: randomUUID() };
      claims.push(c);
      return c;
    }),
  }));
  const files = [requestFile(dir, 'p1', pool(1, 64)), requestFile(dir, 'p16', pool(16, 16)),
    requestFile(dir, 'info', [Buffer.alloc(0)])];

  fs.mkdirSync(path.join(dir, 'bare'));
  const bare = new Server('bare', path.join(BUILD, 'bench', 'bare_server'), (s) => [s.draSock, s.regSock, DRIVER],
    path.join(dir, 'bare'));
  try {
    await bare.start();
    await sleep(300);
    out.bareIdle = pssAloneOf(pids(bare));
    await load(bare, files);
    await sleep(1500);
    out.bareAfter = pssAloneOf(pids(bare));
  } finally {
    await bare.stop();
  }

  const NODE = 'node-1';
  const emu = await startEmulator({ versions: ['v1', 'v1beta1'], nodes: [NODE], tokenFile: path.join(dir, 'token') });
  try {
    for (const c of claims) {
      emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-0' }] } });
    }
    fs.copyFileSync(emu.caFile, path.join(dir, 'ca.crt'));
    const kc = path.join(dir, 'kubeconfig');
    fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
    const kpArgs = (s, api) => ['--driver-name', DRIVER, '--registrar-socket', s.regSock, '--plugin-socket', s.draSock,
      '--node-name', NODE, '--max-connections', '16', '--quiet', ...(api ? ['--kubeconfig', kc, '--kube-qps', '1000'] : [])];
    // 'api': with its publisher; 'noapi': no kubeconfig (no publisher);
    // 'observer': with the publisher and --http-endpoint, idle only.
    for (const mode of ['api', 'noapi', 'observer']) {
      const port = mode === 'observer' ? await freePort() : 0;
      const sub = path.join(dir, `kp-${mode}`);
      fs.mkdirSync(sub);
      const kp = new Server('kp', path.join(BUILD, 'tests', 'kp_testdriver'), (s) => [...kpArgs(s, mode !== 'noapi'),
        ...(mode === 'observer' ? ['--http-endpoint', `127.0.0.1:${port}`] : [])], sub);
      try {
        await kp.start();
        if (mode !== 'noapi') {
          // A plugin publishes its devices: one pool of 8, written once.
          const w0 = emu.writes().length;
          const l = await kp.command(`publish 8 1 ${mode}`, 'publish ');
          if (!l.startsWith('publish KP_OK')) throw new Error(`publish: ${l}`);
          const t0 = Date.now();
          while (emu.writes().length === w0 && Date.now() - t0 < 20000) await sleep(20);
          if (emu.writes().length === w0) throw new Error('pss-alone: the publisher wrote no slice within 20 s');
        }
        await sleep(500);
        if (mode === 'observer') {
          const all = pssAloneOf(pids(kp));
          out.observer = all.procs.find((p) => p.comm === 'kp-observer') || null;
          out.withObserver = all;
          continue;
        }
        const key = mode === 'api' ? 'kp' : 'kpNoApi';
        out[`${key}Idle`] = pssAloneOf(pids(kp));
        await load(kp, files);
        // 1.5 s: the gRPC servers give freed memory back once idle (0.2 s).
        await sleep(1500);
        out[`${key}After`] = pssAloneOf(pids(kp));
      } finally {
        await kp.stop();
      }
    }
  } finally {
    await emu.stop();
  }
  pssAloneReport('bare, idle', out.bareIdle, top);
  pssAloneReport('bare, after load', out.bareAfter, top);
  pssAloneReport('kp (kp_testdriver + publisher), idle', out.kpIdle, top);
  pssAloneReport('kp, after load', out.kpAfter, top);
  pssAloneReport('kp without API access (no publisher), idle', out.kpNoApiIdle, top);
  pssAloneReport('kp without API access, after load', out.kpNoApiAfter, top);
  if (out.observer) {
    console.log(`  kp with the observer (--http-endpoint), idle: observer ${(out.observer.pss / 1024).toFixed(2)} MiB, `
      + `${out.observer.threads} threads; the tree with it ${(out.withObserver.pss / 1024).toFixed(2)} MiB`);
  }
  console.log('');
  return out;
}

// ---- report --------------------------------------------------------------

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function fmt(v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return '-';
  if (unit === 'ms') return v < 1 ? `${(v * 1000).toFixed(0)} us` : `${v.toFixed(v < 10 ? 2 : 1)} ms`;
  if (unit === 'us') return v < 1000 ? `${v.toFixed(0)} us` : `${(v / 1000).toFixed(2)} ms`;
  if (unit === '/s') return `${v.toFixed(0)}/s`;
  if (unit === 'kB') return v >= 10240 ? `${(v / 1024).toFixed(1)} MiB` : `${v} kB`;
  if (unit === 'cores') return v.toFixed(2);
  if (unit === 'ms/s') return `${v.toFixed(3)} ms/s`;
  if (unit === 'runs/s') return `${v.toFixed(1)}/s`;
  return String(v);
}

function table(rows, header) {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  return [line(header), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}

function machine() {
  const cpu = (/^model name\s*:\s*(.*)$/m.exec(readOr('/proc/cpuinfo', '')) || [0, '?'])[1];
  let grpcjs = '?';
  try { grpcjs = require('@grpc/grpc-js/package.json').version; } catch { /* absent */ }
  return {
    nproc: os.availableParallelism ? os.availableParallelism() : os.cpus().length,
    kernel: `${os.type()} ${os.release()}`,
    cpu,
    node: process.version,
    grpcjs,
    loadavg: os.loadavg().map((x) => x.toFixed(2)).join(' '),
    uid: process.getuid(),
  };
}

// ---- the example driver (bench/example.js) --------------------------------

const exampleTools = () => ({ BUILD, loadgen, requestFile });

// The "example" server: build/examples/pci-driver with the emulator
// (example@old: the one of --old DIR).
function exampleDef(o, dir, build = BUILD, name = 'example') {
  const s = require('./example').exampleServer(Server, dir, o, { ...exampleTools(), BUILD: build }, { name, apiWorkers: o.apiWorkers });
  s.build = build;
  return s;
}

// Its figures outside the closed loops (paced: the supervisor limits CDI
// spec writes to 50 a second), as metrics of the servers: all of them with its first
// nodeserver, the 1-claim look-up again after the recovery rounds
// restarted it.
async function exampleBench(o, ex, servers, tmp, put, when) {
  await require('./example').exampleBench(o, ex, servers, { ...exampleTools(), BUILD: ex.build }, Server, tmp, put, when);
}

// ---- main ----------------------------------------------------------------

async function main() {
  const o = parseFlags(process.argv.slice(2));
  if (o.journalFlat) {
    await require('./journal-flat').run({ build: BUILD, old: o.old });
    return;
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-bench-'));
  const defs = {
    bare: (dir) => new Server('bare', path.join(BUILD, 'bench', 'bare_server'),
      (s) => [s.draSock, s.regSock, DRIVER], dir),
    kp: (dir, build = BUILD) => new Server('kp', path.join(build, 'tests', 'kp_testdriver'),
      // The load clients plus the sequential ones exceed the default cap
      // of 8 connections per socket (sized for kubelet).
      (s) => ['--driver-name', DRIVER, '--registrar-socket', s.regSock, '--plugin-socket', s.draSock,
        '--max-connections', String(Math.min(1024, Math.max(...o.concurrency) + 8)), '--quiet'], dir),
  };
  const servers = o.servers.map((name) => {
    const dir = path.join(tmp, name.replace('@', '-').replace('+', '-'));
    fs.mkdirSync(dir);
    const [plain, logTo] = name.split('+');
    if (logTo !== undefined && logTo !== 'stderr' && logTo !== 'kplog') usage(`${name}: +stderr or +kplog`);
    const [base, at] = plain.split('@');
    if (at !== undefined && (at !== 'old' || !o.old)) usage(`${name}: needs --old DIR`);
    const build = at ? o.old : BUILD;
    if (base === 'bare' && !at && !logTo) return defs.bare(dir);
    if (base === 'example' && !logTo) return exampleDef(o, dir, build, name);
    const m = /^kp(?:-w(\d+))?$/.exec(base);
    if (!m) usage(`unknown server ${name} (bare, kp, kp-wN, kp@old, kp-wN@old, example, example@old)`);
    const s = defs.kp(dir, build);
    s.name = name;
    if (m[1]) s.args.push('--workers', m[1]);
    if (logTo) s.args.push('--log-per-claim', logTo);
    // KP_BENCH_LOUD=name,...: those run without --quiet (to measure it).
    if ((process.env.KP_BENCH_LOUD || '').split(',').includes(name)) s.args = s.args.filter((a) => a !== '--quiet');
    return s;
  });
  if (o.logs) {
    fs.mkdirSync(o.logs, { recursive: true });
    for (const s of servers) s.logFile = path.join(o.logs, `${s.name}.log`);
  }
  const mach = machine();
  const t0 = Date.now();
  console.log(`bench: ${mach.nproc} CPUs (${mach.cpu}), ${mach.kernel}, node ${mach.node}, `
    + `grpc-js ${mach.grpcjs}, uid ${mach.uid}, load average ${mach.loadavg}`);
  console.log(`bench: servers ${o.servers.join(', ')}; ${o.seq} sequential calls, ${o.secs} s at `
    + `connections ${o.concurrency.join(' and ')}, claims ${o.claims.join(' and ')}, ${o.rounds} round(s); build ${BUILD}`);

  const res = {};	// res[server][metric] = [values over rounds]
  const put = (s, k, v) => { ((res[s.name] ||= {})[k] ||= []).push(v); };
  let failed = null;
  let pssMem = null;
  try {
    // A throw-away start first, so that the first measured server does not
    // pay for warming up the load generator (grpc-js, JIT).
    if (defs.bare) {
      fs.mkdirSync(path.join(tmp, 'warm'));
      const w = defs.bare(path.join(tmp, 'warm'));
      if (fs.existsSync(w.binary)) {
        await w.start();
        await w.stop();
      }
    }
    // Before any server of the table starts: the trees run alone.
    if (o.pssAlone) pssMem = await pssAlone(o, tmp);
    if (o.pssOnly) {
      if (o.json) fs.writeFileSync(o.json, JSON.stringify({ machine: mach, flags: o, pssAlone: pssMem }, null, 2));
      return;
    }
    for (const s of servers) {
      await s.start();
      put(s, 'start.ready', s.tReady);
      put(s, 'start.getinfo', s.tRegistrable);
    }
    // Idle memory once all run: PSS shares libgrpc's pages among them all,
    // now and after the load alike.
    await sleep(500);
    for (const s of servers) s.idle = memory(s.proc.pid);
    if (o.idleSecs > 0) await idleBench(servers, o.idleSecs);
    const pools = Object.fromEntries(o.claims.map((n) => [n, requests(n)]));
    const files = Object.fromEntries(o.claims.map((n) => [n, requestFile(tmp, `prepare-${n}`, pools[n])]));
    const infoFile = requestFile(tmp, 'getinfo', [Buffer.alloc(0)]);
    // Same answer from every server (the bare server mirrors the test
    // driver): one grpc-js call each, outside the measurements.
    const probe = pools[o.claims[0]][0];
    const answers = new Set();
    for (const s of servers) {
      if (s.probe) continue;	// the example driver: other claims, other answers
      const [cl] = await clientsFor(s, 1);
      answers.add(decodedPrepare(await call(cl, PREPARE, probe)));
      cl.close();
    }
    const same = answers.size === 1;
    // The closed loops' requests of n claims for s: the pool of fresh
    // UIDs, or the server's own (the example driver: claims it prepared
    // before, 1 a call, with the answers they must get; null: none of n).
    const load = (s, n) => (s.closedLoad ? s.closedLoad(n) : { file: files[n] });
    // A server's wrong answers (its loads with answers only), per second.
    const wrong = (s, key, l, r) => {
      if (!l.answers) return;
      put(s, key, r.wrongRate);
      if (r.firstWrong && !s.firstWrong) s.firstWrong = r.firstWrong;
    };
    // Warm-up: both sockets, every request size, the load's connections.
    for (const s of servers) {
      const loads = o.claims.map((n) => load(s, n)).filter(Boolean);
      for (const l of loads) await loadgen(s, s.draSock, PREPARE, l.file, { calls: o.warmup, answers: l.answers });
      await loadgen(s, s.regSock, GETINFO, infoFile, { calls: o.warmup });
      if (!loads.length) continue;
      for (const c of o.concurrency) await loadgen(s, s.draSock, PREPARE, loads[0].file, { conns: c, secs: 0.3, answers: loads[0].answers });
    }
    for (let round = 0; round < o.rounds; round++) {
      for (const n of o.claims) {
        for (const s of servers) {
          const l = load(s, n);
          if (!l) continue;
          const r = await loadgen(s, s.draSock, PREPARE, l.file, { calls: o.seq, warmup: 20, answers: l.answers });
          put(s, `seq${n}.p50`, r.p50);
          put(s, `seq${n}.p99`, r.p99);
          put(s, `seq${n}.cpu`, r.cpuPerCall);
          wrong(s, `seq${n}.wrong`, l, r);
        }
      }
      for (const c of o.concurrency) {
        for (const n of o.claims) {
          for (const s of servers) {
            const l = load(s, n);
            if (!l) continue;
            const r = await loadgen(s, s.draSock, PREPARE, l.file, { conns: c, secs: o.secs, warmup: 5, answers: l.answers });
            wrong(s, `tp${n}c${c}.wrong`, l, r);
            put(s, `tp${n}c${c}.p50`, r.p50);
            put(s, `tp${n}c${c}.p99`, r.p99);
            put(s, `tp${n}c${c}.rate`, r.rate);
            put(s, `tp${n}c${c}.cpu`, r.cpuPerCall);
            put(s, `tp${n}c${c}.scpu`, r.serverCpu);
            put(s, `tp${n}c${c}.ccpu`, r.clientCpu);
          }
        }
      }
      for (const s of servers) {
        const r = await loadgen(s, s.regSock, GETINFO, infoFile, { calls: o.infoCalls, warmup: 20 });
        put(s, 'info.p50', r.p50);
        put(s, 'info.p99', r.p99);
      }
    }
    await sleep(300);
    for (const s of servers) s.after = memory(s.proc.pid);
    const exs = servers.filter((s) => s.name.split('@')[0] === 'example');
    for (const ex of exs) await exampleBench(o, ex, servers, tmp, put, 'fresh');
    // Recovery: SIGKILL the nodeserver, time until a prepare succeeds
    // again (the supervisor restarts it; kubelet would retry the same).
    for (let round = 0; round < o.rounds; round++) {
      for (const s of servers) {
        const ns = tree(s.proc.pid).find((p) => comm(p) === 'kp-nodeserver');
        if (ns === undefined) continue;
        const [cl] = await clientsFor(s, 1);
        const t0 = process.hrtime.bigint();
        process.kill(ns, 'SIGKILL');
        for (;;) {
          const r = await rawUnary(cl, PREPARE, s.probe || probe, 1000);
          if (r.code === 0) break;
          if (Number(process.hrtime.bigint() - t0) > 20e9) throw new Error(`${s.name}: no answer 20 s after the nodeserver was killed`);
          await sleep(1);
        }
        put(s, 'recovery', Number(process.hrtime.bigint() - t0) / 1e6);
        cl.close();
      }
    }
    const kp = servers.find((s) => s.name !== 'bare' && s.name !== 'example' && !s.name.includes('@') && !s.name.includes('+'));
    if (o.publish > 0 && kp) {
      const p = await publishBench(o, tmp);
      put(kp, 'pub.wall', p.wall);
      put(kp, 'pub.requests', p.requests);
      put(kp, 'pub.writes', p.writes);
      put(kp, 'pub.unchanged', p.unchanged);
      put(kp, 'pub.one', p.oneChanged);
    }
    for (const ex of exs) await exampleBench(o, ex, servers, tmp, put, 'restarted');
    report(o, servers, res, same, mach, (Date.now() - t0) / 1000, pssMem);
  } catch (e) {
    failed = e;
  } finally {
    const ts = Date.now();
    await Promise.all(servers.map((s) => s.stop()));
    if (process.env.KP_BENCH_DEBUG) console.error(`stop: ${Date.now() - ts} ms`);
  }
  if (failed) {
    console.error(`bench: ${failed instanceof Failure ? 'a call failed' : 'failed'}: ${failed.message}`);
    for (const s of servers) if (s.proc) console.error(`--- ${s.name} stderr (last lines):\n${s.log()}`);
    fs.rmSync(tmp, { recursive: true, force: true });
    process.exit(1);
  }
  fs.rmSync(tmp, { recursive: true, force: true });
}

function report(o, servers, res, same, mach, secs, pssMem) {
  const base = servers.find((s) => s.name === 'bare');
  const m = (s, k) => (res[s.name] && res[s.name][k] ? median(res[s.name][k]) : null);
  const rows = [];
  const row = (label, key, unit, get = null) => {
    const vals = servers.map((s) => (get ? get(s) : m(s, key)));
    const b = base ? vals[servers.indexOf(base)] : null;
    const r = [label];
    servers.forEach((s, i) => {
      r.push(fmt(vals[i], unit));
      if (s !== base && base) r.push(b && vals[i] !== null ? `x${(vals[i] / b).toFixed(2)}` : '-');
    });
    rows.push(r);
  };
  const header = ['metric'];
  for (const s of servers) {
    header.push(s.name);
    if (s !== base && base) header.push(`${s.name}/bare`);
  }
  // Only where a server has the figure (the example's wrong answers).
  const rowIf = (label, key, unit) => {
    if (servers.some((s) => m(s, key) !== null)) row(label, key, unit);
  };
  for (const n of o.claims) {
    const c = `${n} claim${n > 1 ? 's' : ''}`;
    row(`prepare ${c}: latency p50`, `seq${n}.p50`, 'ms');
    row(`prepare ${c}: latency p99`, `seq${n}.p99`, 'ms');
    row(`prepare ${c}: server CPU/call, sequential`, `seq${n}.cpu`, 'us');
    rowIf(`prepare ${c}, sequential: wrong answers (claim errors)`, `seq${n}.wrong`, '/s');
    for (const k of o.concurrency) {
      const t = `tp${n}c${k}`;
      row(`prepare ${c}, ${k} conns: latency p50`, `${t}.p50`, 'ms');
      row(`prepare ${c}, ${k} conns: latency p99`, `${t}.p99`, 'ms');
      row(`prepare ${c}, ${k} conns: throughput`, `${t}.rate`, '/s');
      rowIf(`prepare ${c}, ${k} conns: wrong answers (claim errors)`, `${t}.wrong`, '/s');
      row(`prepare ${c}, ${k} conns: server CPU/call`, `${t}.cpu`, 'us');
      row(`prepare ${c}, ${k} conns: server cores busy`, `${t}.scpu`, 'cores');
      row(`prepare ${c}, ${k} conns: client cores busy`, `${t}.ccpu`, 'cores');
    }
  }
  // Hook logging: what a line costs the server tree, NAME+X against NAME.
  const quiet = (s) => servers.find((q) => q.name === s.name.split('+')[0]);
  if (servers.some((s) => s.name.includes('+') && quiet(s))) {
    const perLine = (key, n) => (s) => {
      const q = s.name.includes('+') ? quiet(s) : null;
      return q && m(s, key) !== null && m(q, key) !== null ? (m(s, key) - m(q, key)) / n : null;
    };
    for (const n of o.claims) {
      const c = `${n} claim${n > 1 ? 's' : ''}`;
      row(`hook log line: CPU, ${c} sequential`, null, 'us', perLine(`seq${n}.cpu`, n));
      for (const k of o.concurrency) row(`hook log line: CPU, ${c}, ${k} conns`, null, 'us', perLine(`tp${n}c${k}.cpu`, n));
    }
  }
  row('GetInfo latency p50', 'info.p50', 'ms');
  row('GetInfo latency p99', 'info.p99', 'ms');
  row('start to "ready"', 'start.ready', 'ms');
  row('start to first GetInfo answer', 'start.getinfo', 'ms');
  row('nodeserver killed to next prepare answered', 'recovery', 'ms');
  if (o.publish > 0) {
    row(`publish ${o.publish} devices (4 pools): wall time`, 'pub.wall', 'ms');
    row(`publish ${o.publish} devices: API requests`, 'pub.requests', '');
    row(`publish ${o.publish} devices: writes`, 'pub.writes', '');
    row('republish unchanged: writes', 'pub.unchanged', '');
    row('republish, one device changed: writes', 'pub.one', '');
  }
  if (servers.some((s) => s.name.split('@')[0] === 'example')) require('./example').exampleRows(row, (k) => (s) => m(s, k));
  if (o.idleSecs > 0) {
    const comms = [...new Set(servers.flatMap((s) => Object.keys(s.idleCpu || {})))];
    const idle = (c, k) => (s) => (s.idleCpu && s.idleCpu[c] ? s.idleCpu[c][k] : null);
    const sum = (k) => (s) => Object.values(s.idleCpu || {}).reduce((a, e) => a + e[k], 0);
    row(`idle ${o.idleSecs} s: CPU, whole tree`, null, 'ms/s', sum('ms'));
    for (const c of comms) row(`idle: CPU, ${c}`, null, 'ms/s', idle(c, 'ms'));
    row('idle: runs (wake-ups), whole tree', null, 'runs/s', sum('runs'));
    for (const c of comms) row(`idle: runs, ${c}`, null, 'runs/s', idle(c, 'runs'));
  }
  row('processes', null, '', (s) => s.after.procs.length);
  row('threads, after load', null, '', (s) => s.after.threads);
  row('RSS sum, idle', null, 'kB', (s) => s.idle.rss);
  row('RSS sum, after load', null, 'kB', (s) => s.after.rss);
  row('PSS sum, idle', null, 'kB', (s) => s.idle.pss);
  row('PSS sum, after load', null, 'kB', (s) => s.after.pss);
  row('USS (private) sum, idle', null, 'kB', (s) => s.idle.uss);
  row('USS (private) sum, after load', null, 'kB', (s) => s.after.uss);
  console.log('');
  console.log(table(rows, header));
  console.log('');
  console.log('Per process, after load (RSS / PSS / USS / threads / CPU seconds over the whole run):');
  for (const s of servers) {
    console.log(`  ${s.name.padEnd(6)} ${s.after.procs.map((p) => `${p.comm} ${fmt(p.rss, 'kB')} / ${fmt(p.pss, 'kB')} / ${fmt(p.uss, 'kB')} / ${p.threads} / ${p.cpu.toFixed(2)} s`).join(';  ')}`);
  }
  console.log('');
  console.log(`Same NodePrepareResources answer from every server: ${same ? 'yes' : 'NO (the bare server no longer mirrors kp_testdriver)'}`);
  const exs = servers.filter((s) => s.closedLoad);
  if (exs.length) {
    console.log(`${exs.map((s) => s.name).join(', ')}: the 1-claim closed-loop rows prepare a claim prepared before (one of ${exs[0].known.length}, `
      + 'one a call: the library\'s journal answers, no look-up, no hook), each answer compared byte for byte with the one that claim '
      + 'got before (bench/loadgen -R); a wrong one (a claim error) is left out of the latencies and the throughput.');
    for (const s of exs) if (s.firstWrong) console.log(`${s.name}: first wrong answer: ${require('./example').describeAnswer(s.firstWrong)}`);
  }
  console.log(`Medians of ${o.rounds} round(s); ratios are ${servers.filter((s) => s !== base).map((s) => s.name).join(', ')} over bare `
    + '(above 1: slower, more CPU or more memory; for throughput above 1 is faster).');
  console.log('Load generator: bench/loadgen (gRPC C core, one channel per connection, 1 thread below 8 connections, '
    + '2 from 8); when "client cores busy" nears its thread count, throughput is bounded by it, and server CPU/call is the figure to compare. Server CPU/call: the server tree\'s threads\' sum_exec_runtime (/proc/<pid>/task/*/schedstat, ns) over the run, its warm-up calls included, per measured call. RSS sums count shared pages (libraries, pages shared after fork) once per process; PSS divides them among their sharers (here: all servers of this run); USS counts private pages only.');
  console.log(`bench: done in ${secs.toFixed(1)} s; load average now ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  if (o.json) {
    fs.writeFileSync(o.json, JSON.stringify({ machine: mach, flags: o, results: res, pssAlone: pssMem,
      memory: Object.fromEntries(servers.map((s) => [s.name, { idle: s.idle, after: s.after }])) }, null, 2));
    console.log(`bench: figures written to ${o.json}`);
  }
}

// bench/example-prof.js uses the servers and the load generator.
module.exports = { Server, loadgen, requestFile, requests, tree, comm, schedSecs };

if (require.main === module) {
  main().catch((e) => {
    console.error(`bench: ${e.stack || e}`);
    process.exit(1);
  });
}
