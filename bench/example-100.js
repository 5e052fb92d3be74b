'use strict';
// bench/example-100.js - the 100-claim call against the 1-claim call of
// the example driver (bench/example.js's server: examples/pci-driver,
// the API-server emulator in this process, fake sysfs, tmpfs CDI
// directory), with the emulator's CPU per claim GET. Each round: one
// call of 1 new claim, then one of 100 new claims (bench/loadgen -n 1
// -w 0, so the time is the call's own), each followed by an unprepare
// and a pause that refills the CDI budget (50 specs/s, burst 100), so
// neither call waits for a spec token. The emulator's CPU is this
// process's (all threads, schedstat) over the call, less that of a
// call of a known claim (no GET: the loadgen spawn and the idle).
//   node bench/example-100.js BUILD [ROUNDS (10)] [--cold] [--api-workers N]
// --cold: without bench/example.js's warm-up of the emulator.
// --api-workers N: the claim GETs are answered by N worker processes in
// front of the emulator (bench/emu-claims.js, bench/example.js's
// apiWorkers), everything else by the emulator; their CPU is counted.
// Prints one JSON line per round and the p50s.
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { spawn } = require('node:child_process');
const { exampleServer, treeCpuNs, treeCpuByComm: byComm } = require('./example');
const { Server, requestFile, loadgen: runLoadgen } = require('./run');
const { proto } = require('../tests/kubelet-sim');
const { newClient, rawUnary } = require('../tests/kubelet-sim/grpc-util');

const PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const UNPREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const enc = (type, cs) => proto.encode(proto.typeName('v1', type), { claims: cs.map(({ namespace, name, uid }) => ({ namespace, name, uid })) });
const p50 = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };

// CPU nanoseconds of this process (every thread) and of the claim
// workers (bench/emu-claims.js).
function selfCpuNs(pids = []) {
  let ns = 0;
  for (const p of ['self', ...pids]) {
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${p}/task`); } catch { /* gone */ }
    for (const t of tasks) {
      try { ns += Number(fs.readFileSync(`/proc/${p}/task/${t}/schedstat`, 'utf8').split(' ')[0]); } catch { /* gone */ }
    }
  }
  return ns;
}


function mainCpuNs() { return Number(fs.readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]); }

function loadgen(build, sock, method, bufs) {
  const file = path.join(os.tmpdir(), `kp-e100-${process.pid}.req`);
  fs.writeFileSync(file, Buffer.concat(bufs.flatMap((b) => { const h = Buffer.alloc(4); h.writeUInt32BE(b.length); return [h, b]; })));
  return new Promise((resolve, reject) => {
    const p = spawn(path.join(build, 'bench', 'loadgen'), ['-t', `unix:${sock}`, '-m', method, '-r', file, '-c', '1', '-w', '0', '-d', '30000', '-n', '1'],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('close', (code) => {
      try {
        const r = JSON.parse(out);
        if (r.errors) throw new Error(`${r.first_status}: ${r.first_error}`);
        resolve(r.p50_us / 1000);
      } catch (e) { reject(new Error(`loadgen: exit ${code}: ${e.message}: ${out}`)); }
    });
  });
}

async function checked(cl, method, type, cs) {
  const r = await rawUnary(cl, method, enc(type, cs), 30000);
  if (r.code !== 0) throw new Error(r.details);
  const m = proto.decode(proto.typeName('v1', type.replace('Request', 'Response')), r.buffer);
  const errs = Object.values(m.claims || {}).filter((c) => c.error);
  if (errs.length) throw new Error(`${errs.length} of ${cs.length}: ${errs[0].error}`);
}

(async () => {
  const args = process.argv.slice(2);
  const wi = args.indexOf('--api-workers');
  const apiWorkers = wi >= 0 ? Number(args.splice(wi, 2)[1]) : 0;
  const ci = args.indexOf('--cold');
  const cold = ci >= 0 && args.splice(ci, 1).length > 0;
  const [build, roundsStr] = args;
  if (!build) { console.error('usage: node bench/example-100.js BUILD [ROUNDS] [--cold] [--api-workers N]'); process.exit(2); }
  const rounds = Number(roundsStr || 10);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-e100-'));
  const s = exampleServer(Server, dir, { concurrency: [8] }, { BUILD: path.resolve(build), requestFile, loadgen: runLoadgen }, { name: 'ex', apiWorkers, ...(cold ? { warmGets: 0 } : {}) });
  await s.start();
  const e = s.env;
  const cl = newClient(s.draSock);
  let handshakes = 0;
  // ms from the first claim GET's arrival to the last one's answer, of
  // the 100-claim calls the emulator answered itself (ms resolution).
  const spans = [];
  const mains = []; // CPU ms of the emulator's (this process's) main thread per timed call
  const lib = []; // CPU ms of the driver's process tree per timed call
  const procs = []; // the same by process name
  const res = { one: [], hundred: [], known: [], cpu1: [], cpu100: [], cpuKnown: [] };
  try {
    // Warm-up: the publisher's connections, V8's code for the GET path.
    for (let i = 0; i < 3; i++) {
      const w = e.claims(20, 'warm');
      await checked(cl, PREPARE, 'NodePrepareResourcesRequest', w);
      await sleep(500);
      await checked(cl, UNPREPARE, 'NodeUnprepareResourcesRequest', w);
      await sleep(1000);
    }
    const timed = async (cs) => {
      const pids = e.front ? e.front.pids() : [];
      const b0 = byComm(s.proc.pid);
      const t0 = treeCpuNs(s.proc.pid); // first: its /proc walk is not the emulator's
      const c0 = selfCpuNs(pids);
      const m0 = mainCpuNs();
      const h0 = e.emu.emu.tlsConnections;
      const l0 = e.emu.emu.log.length;
      const ms = await loadgen(build, s.draSock, PREPARE, [enc('NodePrepareResourcesRequest', cs)]);
      handshakes += e.emu.emu.tlsConnections - h0;
      const kinds = {};
      const gets = e.emu.emu.log.slice(l0).filter((x) => x.method === 'GET' && x.path.includes('/resourceclaims/'));
      if (gets.length > 1) spans.push(Math.max(...gets.map((x) => x.time + x.durationMs)) - gets[0].time);
      for (const x of e.emu.emu.log.slice(l0)) { const k = `${x.method} ${x.path.replace(/[^/]+$/, '*')} ${x.status}`; kinds[k] = (kinds[k] || 0) + 1; }
      if (process.env.V) console.log(JSON.stringify(kinds), ((mainCpuNs() - m0) / 1e6).toFixed(1), 'ms main thread');
      const c1 = selfCpuNs(pids);
      mains.push((mainCpuNs() - m0) / 1e6);
      lib.push((treeCpuNs(s.proc.pid) - t0) / 1e6);
      const b1 = byComm(s.proc.pid);
      procs.push(Object.fromEntries(Object.keys(b1).map((k) => [k, (b1[k] - (b0[k] || 0)) / 1e6])));
      return [ms, (c1 - c0) / 1e6];
    };
    for (let r = 0; r < rounds; r++) {
      const [tk, ck] = await timed([s.known[r % s.known.length]]);
      await sleep(300);
      const one = e.claims(1, `one${r}`);
      const [t1, c1] = await timed(one);
      await sleep(300);
      await checked(cl, UNPREPARE, 'NodeUnprepareResourcesRequest', one);
      await sleep(500);
      const h = e.claims(100, `h${r}`);
      const [t100, c100] = await timed(h);
      for (const c of h) if (!fs.existsSync(path.join(e.cdi, `pci.example.com_claim-${c.uid}.json`))) throw new Error(`claim ${c.name} not prepared`);
      await sleep(500);
      for (let i = 0; i < h.length; i += 25) await checked(cl, UNPREPARE, 'NodeUnprepareResourcesRequest', h.slice(i, i + 25));
      res.known.push(tk); res.one.push(t1); res.hundred.push(t100);
      res.cpuKnown.push(ck); res.cpu1.push(c1); res.cpu100.push(c100);
      console.log(JSON.stringify({ round: r, knownMs: tk, oneMs: t1, hundredMs: t100, cpuKnownMs: ck, cpuOneMs: c1, cpuHundredMs: c100 }));
      await sleep(3000);
    }
  } finally {
    cl.close();
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const k = p50(res.cpuKnown);
  console.log(JSON.stringify({
    apiWorkers, cold, rounds, handshakesInCalls: handshakes, loadavg: os.loadavg().map((x) => x.toFixed(2)).join(' '),
    getSpan100Ms: spans.length ? p50(spans) : null,
    p50: { knownMs: p50(res.known), oneMs: p50(res.one), hundredMs: p50(res.hundred), ratio: +(p50(res.hundred) / p50(res.one)).toFixed(2) },
    driverTreeCpu: { knownCallMs: p50(lib.filter((x, i) => i % 3 === 0)), oneCallMs: p50(lib.filter((x, i) => i % 3 === 1)), hundredCallMs: p50(lib.filter((x, i) => i % 3 === 2)) },
    emuMainThreadMs: { knownCall: p50(mains.filter((x, i) => i % 3 === 0)), oneCall: p50(mains.filter((x, i) => i % 3 === 1)), hundredCall: p50(mains.filter((x, i) => i % 3 === 2)) },
    driverCpuByProcessMs: Object.fromEntries(['known', 'one', 'hundred'].map((n, j) => {
      const calls = procs.filter((x, i) => i % 3 === j);
      const names = [...new Set(calls.flatMap((x) => Object.keys(x)))];
      return [n, Object.fromEntries(names.map((k) => [k, +p50(calls.map((x) => x[k] || 0)).toFixed(2)]))];
    })),
    emuCpu: { knownCallMs: k, oneCallMs: p50(res.cpu1), hundredCallMs: p50(res.cpu100), perGetUs: +((p50(res.cpu100) - k) / 100 * 1000).toFixed(0) },
  }));
})().catch((err) => { console.error(err); process.exit(1); });
