'use strict';
// bench/pubget.js - the publisher's claim look-up path, before and after:
// the example server of bench/example.js (pci-driver, API-server
// emulator) once per build, all running at once, every measurement
// visiting them in turn (interleaved, so background load hits them
// alike). Per build:
//   1 new claim per call, back to back (25 ms apart, within the CDI
//   budget): p50 and p90 of the call, the publisher's CPU per call (its
//   threads' schedstat, ns)
//   100 new claims in one call (the CDI budget refilled between calls):
//   p50 and p90, the publisher's CPU per GET
// and with --perf DIR, for each build: perf record (DWARF call graphs)
// of the publisher (--perf-event EV: of EV, not cpu-clock at 9999 Hz)
// over 10 calls of 100 new claims and over 40 calls of
// one, perf trace of the publisher around one call of one new claim; and
// with --stat EVENTS (perf stat -e, e.g. context-switches or uprobes on
// libc's malloc: exact counts where CPU time is noise), the publisher's
// counts per GET over 5 calls of 100 new claims and 40 calls of one.
// Run as root:
//   node bench/pubget.js [--single N] [--hundred N] [--perf DIR] [--stat EVENTS] NAME=BUILD...
// e.g. node bench/pubget.js before=../main-before/build after=build
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { spawn } = require('node:child_process');
const { exampleServer } = require('./example');
const { Server, tree, comm, schedSecs } = require('./run');
const { proto } = require('../tests/kubelet-sim');
const { newClient, rawUnary } = require('../tests/kubelet-sim/grpc-util');

const PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const UNPREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources';
const CDI_MS = 20;		// bench/example.js: a CDI token
const CDI_REFILL_MS = 2200;	// its burst of 100, refilled
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((s.length - 1) * p))] : NaN;
};

function parse(argv) {
  const o = { single: 40, hundred: 20, perf: null, perfEvent: null, stat: null, builds: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--single') o.single = Number(argv[++i]);
    else if (a === '--hundred') o.hundred = Number(argv[++i]);
    else if (a === '--perf') o.perf = argv[++i];
    else if (a === '--stat') o.stat = argv[++i];
    else if (a === '--perf-event') o.perfEvent = argv[++i];
    else if (/^[\w@.-]+=/.test(a)) {
      const [name, build] = [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)];
      o.builds.push({ name, build: path.resolve(build) });
    } else throw new Error(`usage: node bench/pubget.js [--single N] [--hundred N] [--perf DIR] [--stat EVENTS] NAME=BUILD...; not ${a}`);
  }
  if (!o.builds.length) throw new Error('usage: node bench/pubget.js [--single N] [--hundred N] [--perf DIR] [--stat EVENTS] NAME=BUILD...');
  return o;
}

const encode = (type, claims) => proto.encode(proto.typeName('v1', type),
  { claims: claims.map(({ namespace, name, uid }) => ({ namespace, name, uid })) });

// One call of the claims: its wall time in ms and the publisher's CPU in
// us; every claim must be prepared.
async function call(s, claims) {
  const enc = encode('NodePrepareResourcesRequest', claims);
  const c0 = schedSecs(s.pub);
  const t0 = process.hrtime.bigint();
  const r = await rawUnary(s.client, PREPARE, enc, 30000);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const us = (schedSecs(s.pub) - c0) * 1e6;
  if (r.code !== 0) throw new Error(`${s.name}: ${r.details}`);
  const m = proto.decode(proto.typeName('v1', 'NodePrepareResourcesResponse'), r.buffer);
  const errs = Object.values(m.claims || {}).filter((c) => c.error);
  if (errs.length) throw new Error(`${s.name}: ${errs.length} claims failed: ${errs[0].error}`);
  return { ms, us };
}

// A 100-claim call, then its claims unprepared again (a driver holds at
// most 1024 CDI specs) and the CDI budget refilled before the next.
async function hundred(s, prefix) {
  await sleep(s.ready - Date.now());
  const claims = s.env.claims(100, prefix);
  const r = await call(s, claims);
  const u = await rawUnary(s.client, UNPREPARE, encode('NodeUnprepareResourcesRequest', claims), 30000);
  if (u.code !== 0) throw new Error(`${s.name}: unprepare: ${u.details}`);
  s.ready = Date.now() + CDI_REFILL_MS;
  return r;
}

// cmd attached to the publisher around fn().
async function attached(cmd, args, fn) {
  const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  await sleep(1500);
  await fn();
  await sleep(100);
  p.kill('SIGINT');
  await new Promise((r) => p.on('close', r));
}

// perf stat -e events on the publisher around fn(): {event: count / per}.
async function counted(s, events, per, fn) {
  const out = path.join(s.dir, 'stat.csv');
  await attached('perf', ['stat', '-x', ',', '-o', out, '-e', events, '-p', String(s.pub)], fn);
  const r = {};
  for (const l of fs.readFileSync(out, 'utf8').split('\n')) {
    const f = l.split(',');
    if (f.length > 3 && /^\d/.test(f[0])) r[f[2]] = Number(f[0]) / per;
  }
  return r;
}

(async () => {
  const o = parse(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-pubget-'));
  const servers = [];
  console.log(`pubget: load average at start ${load()}`);
  try {
    for (const { name, build } of o.builds) {
      const dir = path.join(tmp, name);
      fs.mkdirSync(dir);
      const s = exampleServer(Server, dir, null, { BUILD: build }, { name });
      servers.push(s);
      await s.start();
      s.pub = tree(s.proc.pid).find((p) => comm(p) === 'kp-publisher');
      s.client = newClient(s.draSock);
      s.single = [];
      s.hundred = [];
      // The publisher's claim connections opened (4 threads, 100 GETs).
      s.ready = 0;
      await hundred(s, 'warm');
    }
    await sleep(CDI_REFILL_MS);
    for (let i = 0; i < o.single; i++) {
      for (const s of servers) s.single.push(await call(s, s.env.claims(1, 'one')));
      await sleep(CDI_MS + 5);
    }
    for (const s of servers) s.ready = Date.now() + CDI_REFILL_MS;
    for (let i = 0; i < o.hundred; i++) for (const s of servers) s.hundred.push(await hundred(s, 'hundred'));
    console.log(`pubget: load average after ${load()}`);
    console.log(`${'build'.padEnd(10)} ${'1 claim p50/p90 ms'.padEnd(20)} ${'pub CPU/call us p50'.padEnd(20)} `
      + `${'100 claims p50/p90 ms'.padEnd(22)} pub CPU/GET us p50 (min-max)`);
    for (const s of servers) {
      const f = (xs, k) => `${pct(xs.map((x) => x[k]), 0.5).toFixed(k === 'ms' ? 3 : 1)}/${pct(xs.map((x) => x[k]), 0.9).toFixed(k === 'ms' ? 3 : 1)}`;
      const per = s.hundred.map((x) => x.us / 100);
      console.log(`${s.name.padEnd(10)} ${f(s.single, 'ms').padEnd(20)} ${pct(s.single.map((x) => x.us), 0.5).toFixed(1).padEnd(20)} `
        + `${f(s.hundred, 'ms').padEnd(22)} ${pct(per, 0.5).toFixed(1)} (${Math.min(...per).toFixed(1)}-${Math.max(...per).toFixed(1)})`);
    }
    if (o.stat) {
      for (const s of servers) {
        const h = await counted(s, o.stat, 500, async () => { for (let i = 0; i < 5; i++) await hundred(s, 'stat'); });
        const one = await counted(s, o.stat, 40, async () => {
          for (let i = 0; i < 40; i++) {
            await call(s, s.env.claims(1, 'stat1'));
            await sleep(CDI_MS + 5);
          }
        });
        for (const [k, v] of Object.entries(h)) console.log(`${s.name}: ${k} per GET: ${v.toFixed(1)} (100 claims a call), ${(one[k] || 0).toFixed(1)} (1 claim a call)`);
      }
    }
    if (o.perf) {
      fs.mkdirSync(o.perf, { recursive: true });
      for (const s of servers) {
        const ev = o.perfEvent ? ['-e', o.perfEvent] : ['-F', '9999'];
        await attached('perf', ['record', ...ev, '--call-graph', 'dwarf,16384', '-o', path.join(o.perf, `${s.name}.perf.data`), '-p', String(s.pub)], async () => {
          for (let i = 0; i < 10; i++) await hundred(s, 'perf');
        });
        await attached('perf', ['record', '-F', '9999', '--call-graph', 'dwarf,16384', '-o', path.join(o.perf, `${s.name}.single.perf.data`), '-p', String(s.pub)], async () => {
          for (let i = 0; i < 40; i++) {
            await call(s, s.env.claims(1, 'perf1'));
            await sleep(CDI_MS + 5);
          }
        });
        await attached('perf', ['trace', '-o', path.join(o.perf, `${s.name}.trace.txt`), '-p', String(s.pub)], () => call(s, s.env.claims(1, 'trace')));
      }
      console.log(`pubget: perf data in ${o.perf}`);
    }
  } finally {
    for (const s of servers) {
      if (s.client) s.client.close();
      await s.stop();
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
})().catch((e) => { console.error(e); process.exit(1); });
