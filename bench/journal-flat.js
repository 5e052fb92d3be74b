'use strict';
// bench/journal-flat.js - the cost of preparing a new claim with 1, 100,
// 1,000 and 10,000 claims already in the prepared-claim journal (issue
// 27, "flat cost"), this build against an older one (--old DIR) in one
// run, interleaved. The driver is tests/e2e/bin/kp_journaldriver (one CDI
// spec a claim through the supervisor, a journal entry, no look-up); the
// journal is pre-filled by writing a schema-1 snapshot of N entries
// (without a CDI spec, so the start's reconcile has nothing to do). Each
// cell: CALLS sequential prepares of new claims (under the supervisor's
// CDI burst of 100), p50 latency at the client and the process tree's
// CPU per call (schedstat), and the nodeserver's Rss per prepared claim.
// Usage: node bench/run.js --journal-flat [--old DIR], or
// node bench/journal-flat.js [--old DIR] [--calls N] [--sizes 1,100,...]
// (KP_BUILD: this build, default build/; sizes in that order, repeats
// allowed: neighbouring cells are the fair comparison on a busy machine).
// Each cell also prints each process's CPU per call.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { proto } = require('../tests/kubelet-sim');
const { newClient, rawUnary } = require('../tests/kubelet-sim/grpc-util');
const { crc32 } = require('../tests/e2e/lib/journal');

const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const BUILD = path.resolve(process.env.KP_BUILD || 'build');
const OLD = opt('--old', null);
const CALLS = Number(opt('--calls', 80));
const SIZES = opt('--sizes', '1,100,1000,10000').split(',').map(Number);
const DRIVER = 'bench.example.com';
const PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const uid = (k, n) => `00000000-0000-4000-${String(k).padStart(4, '0')}-${String(n).padStart(12, '0')}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function sorted(v) {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])]));
  return v;
}

function prefill(dir, n) {
  const claims = {};
  for (let i = 0; i < n; i++) {
    claims[uid(9999, i)] = { namespace: 'default', name: `pre-${i}`, data: { device: `pre-${i}` },
      devices: [{ requests: [], pool: 'pool-a', device: `pre-${i}`, cdiDeviceIds: [`${DRIVER}/test=pre-${i}`] }] };
  }
  const bootId = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  const j = { bootId, claims, driver: DRIVER, schema: 1 };
  const sum = crc32(Buffer.from(JSON.stringify(sorted(j))));
  fs.writeFileSync(path.join(dir, 'kubeletplugin-journal.json'), JSON.stringify({ ...sorted(j), checksum: `crc32:${sum.toString(16).padStart(8, '0')}` }));
}

function tree(pid) {
  let out = [pid];
  try {
    for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
      const kids = fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      for (const k of kids) out = out.concat(tree(k));
    }
  } catch { /* gone */ }
  return out;
}
function cpu(pid) {
  return tree(pid).reduce((a, p) => a + cpu1(p), 0);
}
// Nanoseconds of CPU by process name (comm) over the tree of pid.
function perProcess(pid) {
  const m = {};
  for (const p of tree(pid)) {
    let c;
    try { c = fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim(); } catch { continue; }
    m[c] = (m[c] || 0) + cpu1(p);
  }
  return m;
}

function cpu1(p) {
  let ns = 0;
  let tasks = [];
  try { tasks = fs.readdirSync(`/proc/${p}/task`); } catch { return 0; }
  for (const t of tasks) { try { ns += Number(fs.readFileSync(`/proc/${p}/task/${t}/schedstat`, 'utf8').split(' ')[0]); } catch { /* gone */ } }
  return ns;
}

function rss(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

async function cell(build, n, k) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-jflat-'));
  fs.chmodSync(dir, 0o755);
  const state = path.join(dir, 'state');
  const cdi = path.join(dir, 'cdi');
  fs.mkdirSync(state, { mode: 0o700 });
  fs.mkdirSync(cdi);
  prefill(state, n);
  const sock = path.join(dir, 'dra.sock');
  const proc = spawn(path.join(build, 'tests', 'kp_journaldriver'), ['--driver-name', DRIVER, '--registrar-socket', path.join(dir, 'reg.sock'),
    '--plugin-socket', sock, '--cdi-dir', cdi, '--journal-dir', state, '-v', '0',
    ...(process.getuid() === 0 ? ['--sandbox-user', 'nodeserver:0:0'] : ['--allow-uid', String(process.getuid())])], { stdio: ['pipe', 'pipe', 'ignore'] });
  await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (b) => { out += b; if (/ready \d+/.test(out)) resolve(); });
    proc.on('exit', () => reject(new Error(`${build}: exited: ${out}`)));
  });
  for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await sleep(50);
  const client = newClient(sock);
  const call = async (u, name) => {
    const body = proto.encode('k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourcesRequest', { claims: [{ namespace: 'default', name, uid: u }] });
    const t0 = process.hrtime.bigint();
    const r = await rawUnary(client, PREPARE, body, 45000);
    if (r.code !== 0) throw new Error(r.details);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  await call(uid(k, 999999), 'warm');
  await sleep(2500); // the CDI burst refilled
  const ns = tree(proc.pid).find((p) => { try { return /nodeserver/.test(fs.readFileSync(`/proc/${p}/comm`, 'utf8')); } catch { return false; } });
  const r0 = ns ? rss(ns) : 0;
  const p0 = perProcess(proc.pid);
  const c0 = cpu(proc.pid);
  const lat = [];
  for (let i = 0; i < CALLS; i++) lat.push(await call(uid(k, i), `c-${i}`));
  const c1 = cpu(proc.pid);
  const p1 = perProcess(proc.pid);
  const byProc = Object.fromEntries(Object.keys(p1).map((c) => [c, (p1[c] - (p0[c] || 0)) / CALLS / 1e3]));
  lat.sort((a, b) => a - b);
  proc.stdin.end('stop\n');
  await new Promise((r) => proc.on('exit', r));
  client.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { p50: lat[Math.floor(lat.length / 2)], cpu: (c1 - c0) / CALLS / 1e3, rssKb: r0, byProc };
}

async function run({ build = BUILD, old = OLD } = {}) {
  const builds = [['new', build], ...(old ? [['old', path.resolve(old)]] : [])];
  const rows = [];
  let k = 1;
  for (const n of SIZES) {
    for (const [name, b] of builds) {
      const r = await cell(b, n, k++);
      rows.push({ name, n, ...r });
      console.log(`${name.padEnd(4)} prepared=${String(n).padStart(5)}  p50 ${r.p50.toFixed(3)} ms  cpu/call ${r.cpu.toFixed(0)} us  (${Object.entries(r.byProc).filter(([, v]) => v >= 1).map(([c, v]) => `${c.replace(/^kp-/, '')} ${v.toFixed(0)}`).join(', ')})`);
    }
  }
  for (const [name] of builds) {
    const r = rows.filter((x) => x.name === name);
    const p = r.map((x) => x.p50);
    const c = r.map((x) => x.cpu);
    console.log(`${name}: p50 max/min ${(Math.max(...p) / Math.min(...p)).toFixed(2)}, CPU/call max/min ${(Math.max(...c) / Math.min(...c)).toFixed(2)}; nodeserver Rss ${r.map((x) => `${x.n}: ${x.rssKb} kB`).join(', ')}`);
  }
  return rows;
}

module.exports = { run };
if (require.main === module) run().catch((e) => { console.error(e); process.exit(1); });
