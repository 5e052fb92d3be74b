'use strict';
// bench/newclaim-prof.js - where a new claim's CPU goes, per process of
// the example driver's tree (issue 27): CPU per call by process name
// (threads' schedstat, less each process's idle CPU measured for a
// second before) over 40 back-to-back new claims, a round per build,
// builds interleaved; then, with "perf", perf record -g of the whole
// tree over 40 more (OUTDIR/perf-<i>.data).
// Run as root:
//   node bench/newclaim-prof.js OUTDIR ROUNDS BUILD... [perf|strace]
// e.g. node bench/newclaim-prof.js /tmp/nc 3 /work/wt/base/build build
//   perf report -i OUTDIR/perf-1.data --sort comm,dso,sym --no-children --stdio -g none
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { spawn } = require('node:child_process');

const CALLS = 40;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const args = process.argv.slice(2);
const mode = ['perf', 'strace'].includes(args[args.length - 1]) ? args.pop() : null;
const perf = mode === 'perf';
const [out, roundsStr, ...builds] = args;
if (!out || !builds.length) {
  console.error('usage: node bench/newclaim-prof.js OUTDIR ROUNDS BUILD... [perf|strace]');
  process.exit(2);
}
process.env.KP_BUILD = path.resolve(builds[0]);
const { Server, loadgen, requestFile, tree } = require('./run');
const { exampleServer, treeCpuByComm } = require('./example');
const { proto } = require('../tests/kubelet-sim');
const { newClient, rawUnary } = require('../tests/kubelet-sim/grpc-util');

const PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const UNPREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources';
const enc = (t, cs) => proto.encode(proto.typeName('v1', t), { claims: cs.map(({ namespace, name, uid }) => ({ namespace, name, uid })) });

// The calls, one claim each, gap ms apart; every claim must succeed.
// Their latencies in ms.
async function calls(s, method, type, claims, gap) {
  const cl = newClient(s.draSock);
  const ms = [];
  try {
    for (const c of claims) {
      const t = process.hrtime.bigint();
      const r = await rawUnary(cl, method, enc(type, [c]), 30000);
      ms.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (r.code !== 0) throw new Error(r.details);
      const m = proto.decode(proto.typeName('v1', type.replace('Request', 'Response')), r.buffer);
      const errs = Object.values(m.claims || {}).filter((x) => x.error);
      if (errs.length) throw new Error(errs[0].error);
      if (gap) await sleep(gap);
    }
  } finally {
    cl.close();
  }
  return ms;
}
// Context switches (voluntary and not) of pid's tree by process name:
// each is a thread that slept and was woken (or preempted).
function switchesByComm(pid) {
  const { comm } = require('./run');
  const o = {};
  for (const p of tree(pid)) {
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${p}/task`); } catch { /* gone */ }
    for (const t of tasks) {
      try {
        const st = fs.readFileSync(`/proc/${p}/task/${t}/status`, 'utf8');
        const n = [...st.matchAll(/_ctxt_switches:\s+(\d+)/g)].reduce((a, m) => a + Number(m[1]), 0);
        o[comm(p)] = (o[comm(p)] || 0) + n;
        // and by thread (name and index) in the process
        const k = `${comm(p)}:${st.match(/^Name:\s+(.*)$/m)[1]}#${tasks.indexOf(t)}`;
        o[k] = (o[k] || 0) + n;
      } catch { /* gone */ }
    }
  }
  return o;
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const diff = (a, b) => Object.fromEntries(Object.keys(b).map((k) => [k, b[k] - (a[k] || 0)]));

(async () => {
  fs.mkdirSync(out, { recursive: true });
  const servers = [];
  try {
    for (const [i, b] of builds.entries()) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-ncprof-'));
      const s = exampleServer(Server, dir, null, { BUILD: path.resolve(b), loadgen, requestFile }, { name: `b${i}` });
      await s.start();
      servers.push(s);
    }
    const acc = servers.map(() => ({}));
    const p50s = [];
    const sw = servers.map(() => ({}));
    for (let round = 0; round < Number(roundsStr || 3); round++) {
      for (const [i, s] of servers.entries()) {
        const c0 = treeCpuByComm(s.proc.pid);
        const t0 = process.hrtime.bigint();
        await sleep(1000);
        const c1 = treeCpuByComm(s.proc.pid);
        const t1 = process.hrtime.bigint();
        const claims = s.env.claims(CALLS, `r${round}`);
        const w1 = switchesByComm(s.proc.pid);
        const lat = await calls(s, PREPARE, 'NodePrepareResourcesRequest', claims, 0);
        (p50s[i] ||= []).push(med(lat));
        const t2 = process.hrtime.bigint();
        const c2 = treeCpuByComm(s.proc.pid);
        const w2 = diff(w1, switchesByComm(s.proc.pid));
        for (const p of Object.keys(w2)) (sw[i][p] ||= []).push(w2[p] / CALLS);
        const idle = diff(c0, c1);
        const busy = diff(c1, c2);
        const k = Number(t2 - t1) / Number(t1 - t0);
        for (const p of Object.keys(busy)) {
          (acc[i][p] ||= []).push(Math.max(0, busy[p] - (idle[p] || 0) * k) / CALLS / 1000);
        }
        await sleep(1500);
        await calls(s, UNPREPARE, 'NodeUnprepareResourcesRequest', claims, 20);
        await sleep(2500);
      }
    }
    const names = [...new Set(acc.flatMap((a) => Object.keys(a)))].sort();
    const lines = [`CPU us per new claim (median of rounds, less idle), ${CALLS} back to back`,
      ['process', ...builds].join('\t')];
    for (const n of names) lines.push([n, ...acc.map((a) => (a[n] ? med(a[n]).toFixed(0) : '-'))].join('\t'));
    lines.push(['p50 of a call (median of rounds), ms', ...p50s.map((xs) => med(xs).toFixed(2))].join('\t'));
    lines.push(['total', ...acc.map((a) => Object.values(a).reduce((t, xs) => t + med(xs), 0).toFixed(0))].join('\t'));
    lines.push('context switches per new claim (median), by process, then by thread (name#index) with at least 0.5');
    const swNames = [...new Set(sw.flatMap((a) => Object.keys(a)))].sort();
    for (const n of swNames) {
      const v = sw.map((a) => (a[n] ? med(a[n]) : 0));
      if (!n.includes(':') || v.some((x) => x >= 0.5)) lines.push([n, ...v.map((x) => x.toFixed(1))].join('\t'));
    }
    fs.writeFileSync(path.join(out, 'cpu.txt'), `${lines.join('\n')}\n`);
    fs.writeFileSync(path.join(out, 'rounds.json'), JSON.stringify({ builds, cpu: acc, switches: sw, p50: p50s }));
    console.log(lines.join('\n'));
    if (mode === 'strace') {
      const { comm } = require('./run');
      for (const [i, s] of servers.entries()) {
        for (const pid of tree(s.proc.pid).filter((x) => /^kp-/.test(comm(x)))) {
          const f = path.join(out, `strace-${i}-${comm(pid)}.txt`);
          const p = spawn('strace', ['-c', '-f', '-o', f, '-p', String(pid)], { stdio: ['ignore', 'ignore', 'inherit'] });
          await sleep(1500);
          const claims = s.env.claims(CALLS, `st${pid}`);
          await calls(s, PREPARE, 'NodePrepareResourcesRequest', claims, 0);
          p.kill('SIGINT');
          await new Promise((x) => p.on('close', x));
          await sleep(1000);
          await calls(s, UNPREPARE, 'NodeUnprepareResourcesRequest', claims, 20);
          await sleep(2500);
        }
      }
    }
    if (perf) {
      for (const [i, s] of servers.entries()) {
        const pids = tree(s.proc.pid);
        const p = spawn('perf', ['record', '-F', '4999', '-g', '-o', path.join(out, `perf-${i}.data`), '-p', pids.join(',')], { stdio: ['ignore', 'ignore', 'inherit'] });
        await sleep(1500);
        const claims = s.env.claims(CALLS, 'perf');
        await calls(s, PREPARE, 'NodePrepareResourcesRequest', claims, 0);
        p.kill('SIGINT');
        await new Promise((x) => p.on('close', x));
      }
    }
  } finally {
    for (const s of servers) await s.stop();
  }
})().catch((e) => { console.error(e); process.exit(1); });
