'use strict';
// bench/run.js - speed and memory of kubeletplugin against a bare gRPC
// C-core server (bench/bare_server.c) in the same run, with the same
// load generator (@grpc/grpc-js, the kubelet simulator's client helpers).
//
// Servers: "bare" (build/bench/bare_server), "kp" (build/tests/kp_testdriver
// with default options: serialized hooks) and "kp-wN" (kp_testdriver
// --workers N). All run at once and every measurement visits them in turn,
// so background load on the machine hits them alike.
//
// Measured, for requests of each claim count (NodePrepareResources, v1):
//   sequential latency  one client, one call at a time: p50 / p99
//   throughput          C clients (own connections), closed loop: calls/s
//   server CPU          user+system time of the whole server tree per call
// and GetInfo latency on the registration socket, the time from start to
// the first GetInfo answer, and memory: VmRSS and PSS summed over the
// server's process tree (driver, supervisor, children), idle and after load.
//
// Figures only: nothing here asserts on timings. Exit status 1 only when a
// server fails to start or a call fails.
//
//   node bench/run.js [--seq N] [--secs S] [--concurrency C] [--claims 1,32]
//       [--warmup N] [--rounds R] [--workers N] [--servers bare,kp,kp-w4]
//       [--json FILE] [--logs DIR]
// KP_BUILD selects the build directory (default build/).

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
    seq: 700, secs: 2, concurrency: 8, claims: [1, 32], warmup: 200, rounds: 3,
    workers: 4, servers: null, json: null, infoCalls: 500, logs: null,
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
      case '--concurrency': case '-c': o.concurrency = Math.round(num()); break;
      case '--claims': o.claims = v().split(',').map(Number); break;
      case '--warmup': o.warmup = Math.round(Number(v())); break;
      case '--rounds': o.rounds = Math.round(num()); break;
      case '--workers': o.workers = Math.round(num()); break;
      case '--info-calls': o.infoCalls = Math.round(num()); break;
      case '--servers': o.servers = v().split(','); break;
      case '--json': o.json = v(); break;
      case '--logs': o.logs = path.resolve(v()); break;
      case '-h': case '--help': usage(); break;
      default: usage(`unknown flag ${a}`);
    }
  }
  if (o.claims.some((n) => !(n >= 1 && n <= 4096))) usage('--claims: counts from 1 to 4096');
  o.servers = o.servers || ['bare', 'kp', `kp-w${o.workers}`];
  return o;
}

function usage(err) {
  if (err) console.error(`bench: ${err}`);
  console.error('usage: node bench/run.js [--seq N] [--secs S] [--concurrency C] [--claims 1,32]\n'
    + '    [--warmup N] [--rounds R] [--workers N] [--info-calls N] [--servers bare,kp,kp-w4]\n'
    + '    [--json FILE] [--logs DIR]');
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

function treeCpu(pid) {
  return tree(pid).reduce((a, p) => a + cpuSecs(p), 0);
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
    const first = await Promise.race([
      new Promise((r) => lines.once('line', r)),
      this.exited.then((x) => `exited ${JSON.stringify(x)}`),
      timeout(20000, 'timeout'),
    ]);
    if (!first.startsWith('ready')) throw new Error(`${this.name}: ${first}\n${this.log()}`);
    this.tReady = Number(process.hrtime.bigint() - t0) / 1e6;
    // First GetInfo answered: the plugin can be registered from here on.
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

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

// n calls one after the other on one connection: latencies in ms.
async function sequential(srv, client, method, bufs, n) {
  const lat = new Array(n);
  const c0 = srv.cpu();
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await call(client, method, bufs[i % bufs.length]);
    lat[i] = Number(process.hrtime.bigint() - t) / 1e6;
  }
  const cpu = srv.cpu() - c0;
  lat.sort((a, b) => a - b);
  return { p50: pct(lat, 50), p99: pct(lat, 99), cpuPerCall: (cpu / n) * 1e6 };
}

// C closed-loop clients for secs seconds: calls per second.
async function throughput(srv, clients, bufs, secs) {
  let calls = 0;
  let stop = false;
  const c0 = srv.cpu();
  const u0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const timer = setTimeout(() => { stop = true; }, secs * 1000);
  await Promise.all(clients.map(async (cl, k) => {
    for (let i = k; !stop; i += clients.length) {
      await call(cl, PREPARE, bufs[i % bufs.length]);
      calls++;
    }
  }));
  clearTimeout(timer);
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = srv.cpu() - c0;
  const u = process.cpuUsage(u0);
  return {
    rate: calls / wall,
    cpuPerCall: (cpu / calls) * 1e6,
    serverCpu: cpu / wall,			// cores busy in the server tree
    clientCpu: (u.user + u.system) / 1e6 / wall,	// cores busy in this load generator
  };
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

// ---- main ----------------------------------------------------------------

async function main() {
  const o = parseFlags(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-bench-'));
  const defs = {
    bare: (dir) => new Server('bare', path.join(BUILD, 'bench', 'bare_server'),
      (s) => [s.draSock, s.regSock, DRIVER], dir),
    kp: (dir) => new Server('kp', path.join(BUILD, 'tests', 'kp_testdriver'),
      // The load clients plus the sequential ones exceed the default cap
      // of 8 connections per socket (sized for kubelet).
      (s) => ['--driver-name', DRIVER, '--registrar-socket', s.regSock, '--plugin-socket', s.draSock,
        '--max-connections', String(Math.min(1024, o.concurrency + 8))], dir),
  };
  const servers = o.servers.map((name) => {
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir);
    if (defs[name]) return defs[name](dir);
    const m = /^kp-w(\d+)$/.exec(name);
    if (!m) usage(`unknown server ${name} (bare, kp, kp-wN)`);
    const s = defs.kp(dir);
    s.name = name;
    s.args.push('--workers', m[1]);
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
    + `concurrency ${o.concurrency}, claims ${o.claims.join(' and ')}, ${o.rounds} round(s); build ${BUILD}`);

  const res = {};	// res[server][metric] = [values over rounds]
  const put = (s, k, v) => { ((res[s.name] ||= {})[k] ||= []).push(v); };
  let failed = null;
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
    for (const s of servers) {
      await s.start();
      put(s, 'start.ready', s.tReady);
      put(s, 'start.getinfo', s.tRegistrable);
    }
    // Idle memory once all run: PSS shares libgrpc's pages among them all,
    // now and after the load alike.
    await sleep(500);
    for (const s of servers) s.idle = memory(s.proc.pid);
    const pools = Object.fromEntries(o.claims.map((n) => [n, requests(n)]));
    const seqClients = new Map();
    const infoClients = new Map();
    const loadClients = new Map();
    for (const s of servers) {
      seqClients.set(s, (await clientsFor(s, 1))[0]);
      infoClients.set(s, (await clientsFor(s, 1, s.regSock))[0]);
      loadClients.set(s, await clientsFor(s, o.concurrency));
    }
    // Same answer from every server (the bare server mirrors the test driver).
    const probe = pools[o.claims[0]][0];
    const answers = new Set();
    for (const s of servers) answers.add(decodedPrepare(await call(seqClients.get(s), PREPARE, probe)));
    const same = answers.size === 1;
    // Warm-up: every connection and both sockets.
    for (const s of servers) {
      for (const n of o.claims) {
        for (let i = 0; i < o.warmup; i++) await call(seqClients.get(s), PREPARE, pools[n][i % 64]);
      }
      for (let i = 0; i < o.warmup; i++) await call(infoClients.get(s), GETINFO, Buffer.alloc(0));
      await throughput(s, loadClients.get(s), pools[o.claims[0]], 0.3);
    }
    for (let round = 0; round < o.rounds; round++) {
      for (const n of o.claims) {
        for (const s of servers) {
          const r = await sequential(s, seqClients.get(s), PREPARE, pools[n], o.seq);
          put(s, `seq${n}.p50`, r.p50);
          put(s, `seq${n}.p99`, r.p99);
          put(s, `seq${n}.cpu`, r.cpuPerCall);
        }
      }
      for (const n of o.claims) {
        for (const s of servers) {
          const r = await throughput(s, loadClients.get(s), pools[n], o.secs);
          put(s, `tp${n}.rate`, r.rate);
          put(s, `tp${n}.cpu`, r.cpuPerCall);
          put(s, `tp${n}.scpu`, r.serverCpu);
          put(s, `tp${n}.ccpu`, r.clientCpu);
        }
      }
      for (const s of servers) {
        const r = await sequential(s, infoClients.get(s), GETINFO, [Buffer.alloc(0)], o.infoCalls);
        put(s, 'info.p50', r.p50);
        put(s, 'info.p99', r.p99);
      }
    }
    await sleep(300);
    for (const s of servers) s.after = memory(s.proc.pid);
    for (const cl of [...seqClients.values(), ...infoClients.values(), ...[...loadClients.values()].flat()]) {
      cl.close();
    }
    report(o, servers, res, same, mach, (Date.now() - t0) / 1000);
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

function report(o, servers, res, same, mach, secs) {
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
  for (const n of o.claims) {
    const c = `${n} claim${n > 1 ? 's' : ''}`;
    row(`prepare ${c}: latency p50`, `seq${n}.p50`, 'ms');
    row(`prepare ${c}: latency p99`, `seq${n}.p99`, 'ms');
    row(`prepare ${c}: server CPU/call, sequential`, `seq${n}.cpu`, 'us');
    row(`prepare ${c}: throughput, ${o.concurrency} clients`, `tp${n}.rate`, '/s');
    row(`prepare ${c}: server CPU/call, loaded`, `tp${n}.cpu`, 'us');
    row(`prepare ${c}: server cores busy, loaded`, `tp${n}.scpu`, 'cores');
    row(`prepare ${c}: client cores busy, loaded`, `tp${n}.ccpu`, 'cores');
  }
  row('GetInfo latency p50', 'info.p50', 'ms');
  row('GetInfo latency p99', 'info.p99', 'ms');
  row('start to "ready"', 'start.ready', 'ms');
  row('start to first GetInfo answer', 'start.getinfo', 'ms');
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
  console.log(`Medians of ${o.rounds} round(s); ratios are ${servers.filter((s) => s !== base).map((s) => s.name).join(', ')} over bare `
    + '(above 1: slower, more CPU or more memory; for throughput above 1 is faster).');
  console.log('Load generator: one Node process (grpc-js); when "client cores busy" is near 1, throughput is bounded by it, '
    + 'and server CPU/call is the figure to compare. RSS sums count shared pages (libraries, pages shared after fork) once per process; PSS divides them among their sharers (here: all servers of this run); USS counts private pages only.');
  console.log(`bench: done in ${secs.toFixed(1)} s; load average now ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  if (o.json) {
    fs.writeFileSync(o.json, JSON.stringify({ machine: mach, flags: o, results: res,
      memory: Object.fromEntries(servers.map((s) => [s.name, { idle: s.idle, after: s.after }])) }, null, 2));
    console.log(`bench: figures written to ${o.json}`);
  }
}

main().catch((e) => {
  console.error(`bench: ${e.stack || e}`);
  process.exit(1);
});
