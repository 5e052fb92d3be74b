'use strict';
// bench/example-prof.js - the example driver's nodeserver under strace
// and perf, with many claims in the library's journal (bench/example.js
// measures times, this counts syscalls and samples). Starts the example
// server of bench/example.js (its emulator, fake sysfs, tmpfs CDI
// directory, the journal's state directory on /tmp), prepares N claims
// (paced within the CDI budget), then, by default:
//   strace -c -f on the nodeserver over 30 prepares of a new claim each
//   (strace-new.txt) and 30 of a known claim (strace-known.txt);
//   perf record -g over 40 prepares of a new claim (perf.data).
// With "known": known claims (prepared before, 1 a call: the journal
// answers) in bench/run.js's closed loops, on the example and on kp
// (kp_testdriver, no-work hooks, fresh UIDs) for comparison:
//   strace -c -f of the nodeserver and, apart, of the supervisor over
//   SEQ sequential calls (strace-{example,kp}-{nodeserver,supervisor}.txt;
//   the calls' count in summary.txt, to divide by, with each process's
//   CPU per call from an untraced run before);
//   perf record -g of the nodeserver and the supervisor together over
//   4 s at 8 connections (perf-{example,kp}.data; KP_PERF_DWARF=1: DWARF
//   call graphs).
// Run as root, with strace and perf installed:
//   node bench/example-prof.js BUILD OUTDIR [N (default 200)] [known]
// e.g. once for build/ and once for a build of main, then
//   perf report -i OUTDIR/perf.data --sort dso --stdio -g none
//   perf report -i OUTDIR/perf-example.data --comm kp-nodeserver --no-children --sort sym --stdio -g none
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { spawn } = require('node:child_process');

const PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const M = 30;		// prepares under strace, each kind
const PERF_CALLS = 40;
const SEQ = 2000;	// known: sequential calls under strace
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const [build, out, nStr, mode] = process.argv.slice(2);
if (!build || !out || (mode !== undefined && mode !== 'known')) {
  console.error('usage: node bench/example-prof.js BUILD OUTDIR [N] [known]');
  process.exit(2);
}
// run.js's load generator is the one of KP_BUILD.
process.env.KP_BUILD = path.resolve(build);
const { Server, loadgen, requestFile, requests, tree, comm, schedSecs } = require('./run');
const { exampleServer } = require('./example');
const { proto } = require('../tests/kubelet-sim');
const { newClient, rawUnary } = require('../tests/kubelet-sim/grpc-util');

const encode = (cs) => proto.encode(proto.typeName('v1', 'NodePrepareResourcesRequest'),
  { claims: cs.map(({ namespace, name, uid }) => ({ namespace, name, uid })) });

// The pid of the process named name under pid.
const descendant = (pid, name) => tree(pid).find((p) => comm(p) === name) ?? null;

// The calls of the claim groups, gap ms apart; every claim must succeed.
async function prep(cl, groups, gap) {
  for (const g of groups) {
    const r = await rawUnary(cl, PREPARE, encode(g), 30000);
    if (r.code !== 0) throw new Error(r.details);
    const m = proto.decode(proto.typeName('v1', 'NodePrepareResourcesResponse'), r.buffer);
    const errs = Object.values(m.claims || {}).filter((c) => c.error);
    if (errs.length) throw new Error(errs[0].error);
    await sleep(gap);
  }
}
// cmd (strace or perf attached to a pid) around fn().
async function traced(cmd, args, fn) {
  const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  await sleep(1500);
  const r = await fn();
  p.kill('SIGINT');
  await new Promise((x) => p.on('close', x));
  return r;
}
// Known claims in the closed loops, on srv (load: run.js's { file,
// answers }): strace of its nodeserver and supervisor, then perf of both.
async function knownLoops(srv, load, tag) {
  const ns = descendant(srv.proc.pid, 'kp-nodeserver');
  const sup = descendant(srv.proc.pid, 'kp-monitor');
  const run = async (opts) => {
    const r = await loadgen(srv, srv.draSock, PREPARE, load.file, { ...opts, answers: load.answers });
    if (r.wrong) throw new Error(`${tag}: ${r.wrong} wrong answers`);
    return r;
  };
  const seq = { calls: SEQ, warmup: 20 };
  const summary = path.join(out, 'summary.txt');
  await run({ conns: 8, secs: 1 });
  // Untraced first: each process's CPU per call (schedstat).
  for (const [what, opts] of [['sequential', seq], ['8 conns', { conns: 8, secs: 2, warmup: 5 }]]) {
    const pids = tree(srv.proc.pid);
    const c0 = pids.map(schedSecs);
    const r = await run(opts);
    const per = pids.map((p, i) => `${comm(p)} ${((schedSecs(p) - c0[i]) / r.calls * 1e6).toFixed(1)}`);
    fs.appendFileSync(summary, `${tag}, ${what}: p50 ${(r.p50 * 1000).toFixed(0)} us, ${r.rate.toFixed(0)} calls/s; `
      + `CPU us/call: ${per.join(', ')}\n`);
  }
  for (const [name, pid] of [['nodeserver', ns], ['supervisor', sup]]) {
    await traced('strace', ['-c', '-f', '-o', path.join(out, `strace-${tag}-${name}.txt`), '-p', String(pid)], () => run(seq));
  }
  // KP_PERF_DWARF=1: DWARF call graphs (libc and libgrpc have no frame
  // pointers: -g leaves their callers unknown).
  const graph = process.env.KP_PERF_DWARF ? ['--call-graph', 'dwarf,16384'] : ['-g'];
  const r = await traced('perf', ['record', '-F', '2999', ...graph, '-o', path.join(out, `perf-${tag}.data`), '-p', `${ns},${sup}`],
    () => run({ conns: 8, secs: 4, warmup: 5 }));
  fs.appendFileSync(summary, `${tag}: ${SEQ + 20} calls under each strace; under perf `
    + `${r.rate.toFixed(0)} calls/s, p50 ${(r.p50 * 1000).toFixed(0)} us\n`);
}

async function kpLoops(dir) {
  const kp = new Server('kp', path.join(build, 'tests', 'kp_testdriver'), (x) => ['--driver-name', 'bench.example.com',
    '--registrar-socket', x.regSock, '--plugin-socket', x.draSock, '--max-connections', '16', '--quiet'], dir);
  await kp.start();
  try {
    await knownLoops(kp, { file: requestFile(dir, 'kp-1', requests(1)) }, 'kp');
  } finally {
    await kp.stop();
  }
}

(async () => {
  const N = Number(nStr || 200);
  fs.mkdirSync(out, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-jprof-'));
  const s = exampleServer(Server, dir, { concurrency: [8] }, { BUILD: path.resolve(build), loadgen, requestFile }, { name: 'ex' });
  s.logFile = path.join(out, 'stderr');
  await s.start();
  try {
    const cl = newClient(s.draSock);
    const e = s.env;
    const base = e.claims(N, 'base');
    for (let i = 0; i < base.length; i += 10) await prep(cl, [base.slice(i, i + 10)], 250);
    await sleep(2500);
    const ns = descendant(s.proc.pid, 'kp-nodeserver');
    const jf = path.join(e.state, 'kubeletplugin-journal.json');
    console.log(`nodeserver ${ns}, journal ${fs.statSync(jf).size} bytes, ${N + 20} claims`);
    if (mode === 'known') {
      cl.close();
      fs.rmSync(path.join(out, 'summary.txt'), { force: true });
      await knownLoops(s, s.closedLoad(1), 'example');
      fs.mkdirSync(path.join(dir, 'kp'));
      await kpLoops(path.join(dir, 'kp'));
      return;
    }
    await traced('strace', ['-c', '-f', '-o', path.join(out, 'strace-new.txt'), '-p', String(ns)], () => prep(cl, e.claims(M, 'new').map((c) => [c]), 25));
    await sleep(2500);
    await traced('strace', ['-c', '-f', '-o', path.join(out, 'strace-known.txt'), '-p', String(ns)], () => prep(cl, Array.from({ length: M }, (_, i) => [s.known[i % s.known.length]]), 25));
    await sleep(2500);
    await traced('perf', ['record', '-F', '4999', '-g', '-o', path.join(out, 'perf.data'), '-p', String(ns)], () => prep(cl, e.claims(PERF_CALLS, 'perf').map((c) => [c]), 25));
    cl.close();
  } finally {
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
})().catch((e) => { console.error(e); process.exit(1); });
