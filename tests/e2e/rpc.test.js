'use strict';
// rpc.test.js - the gRPC adapter (rpc/) against an independent client,
// @grpc/grpc-js, through tests/e2e/bin/rpc_echo.c.
//
//   cmake -S . -B build && cmake --build build
//   KP_BUILD=build node --test tests/e2e/rpc.test.js
//
// KP_BUILD may point at a sanitizer build (cmake -DKP_SANITIZE=ON); the
// server's exit status then also covers LeakSanitizer.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');

const ROOT = path.resolve(__dirname, '..', '..');
const BUILD = path.resolve(ROOT, process.env.KP_BUILD || 'build');
const BIN = path.join(BUILD, 'tests', 'rpc_echo');
const MAX = 4 * 1024 * 1024;
const GRPC_JS = require.resolve('@grpc/grpc-js');
const S = grpc.status;
// KP_RPC_WRAP="valgrind --error-exitcode=99 --leak-check=full" runs the
// server under a wrapper (timing-sensitive tests may then need slack).
const WRAP = (process.env.KP_RPC_WRAP || '').split(' ').filter(Boolean);
const id = (x) => x;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Servers still running when the file ends (a test failed before its
// stop()): killed, so that a wedged one does not spin on through the
// rest of the suite.
const started = new Set();
test.after(() => {
	for (const p of started)
		if (p.exitCode === null && p.signalCode === null)
			p.kill('SIGKILL');
});

// Start rpc_echo; resolves once it printed READY.
async function start(args = []) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-rpc-'));
	fs.chmodSync(dir, 0o755);	// the uid 65534 client must reach it
	const sock = path.join(dir, 's.sock');
	const argv = [...WRAP, BIN, '--socket', sock, ...args];
	const proc = spawn(argv[0], argv.slice(1), {
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const srv = { proc, sock, dir, stderr: '', clients: [] };
	started.add(proc);
	proc.on('close', () => started.delete(proc));
	proc.stderr.on('data', (d) => { srv.stderr += d; });
	// 'close', not 'exit': all of stderr has been read by then.
	srv.exited = new Promise((r) => proc.on('close', (code, sig) =>
	    r({ code, sig })));
	await new Promise((resolve, reject) => {
		let out = '';
		const t = setTimeout(() => reject(new Error(
		    'rpc_echo not READY: ' + srv.stderr)), 20000);
		proc.stdout.on('data', (d) => {
			out += d;
			if (out.includes('READY')) {
				clearTimeout(t);
				resolve();
			}
		});
		proc.on('exit', (code) => {
			clearTimeout(t);
			reject(new Error(`rpc_echo exited ${code}: ` +
			    srv.stderr));
		});
	});
	srv.client = () => {
		const c = new grpc.Client('unix:' + sock,
		    grpc.credentials.createInsecure());
		srv.clients.push(c);
		return c;
	};
	return srv;
}

// SIGTERM the server and check it exits 0 (so sanitizer reports fail).
async function stop(srv) {
	for (const c of srv.clients)
		c.close();
	if (srv.proc.exitCode === null && srv.proc.signalCode === null)
		srv.proc.kill('SIGTERM');
	const r = await srv.exited;
	fs.rmSync(srv.dir, { recursive: true, force: true });
	assert.deepEqual(r, { code: 0, sig: null },
	    'rpc_echo exit status; stderr:\n' + srv.stderr);
}

// One unary call; resolves { err, value, ms }, never rejects.
function unary(client, method, body, { deadlineMs = 10000, cb } = {}) {
	const t0 = Date.now();
	return new Promise((resolve) => {
		const call = client.makeUnaryRequest(method, id, id,
		    Buffer.from(body), new grpc.Metadata(),
		    { deadline: Date.now() + deadlineMs }, (err, value) =>
		    resolve({ err, value, ms: Date.now() - t0 }));
		if (cb)
			cb(call);
	});
}

async function stats(client) {
	const r = await unary(client, '/test.Echo/Stats', '');
	assert.equal(r.err, null);
	return JSON.parse(r.value.toString());
}

async function until(what, fn, ms = 5000) {
	const end = Date.now() + ms;
	for (;;) {
		if (await fn())
			return;
		if (Date.now() > end)
			assert.fail('timed out waiting for ' + what);
		await sleep(20);
	}
}

test('echo round trip, binary with zero bytes', async () => {
	const srv = await start();
	const c = srv.client();
	const body = Buffer.from([0, 1, 0, 255, 0, 0x7f, 0]);
	const r = await unary(c, '/test.Echo/Echo', body);
	assert.equal(r.err, null);
	assert.deepEqual(r.value, body);
	const empty = await unary(c, '/test.Echo/Echo', Buffer.alloc(0));
	assert.equal(empty.err, null);
	assert.equal(empty.value.length, 0);
	const big = Buffer.alloc(1 << 20, 0xa5);
	const r2 = await unary(c, '/test.Echo/Echo', big);
	assert.equal(r2.err, null);
	assert.ok(r2.value.equals(big));
	await stop(srv);
});

test('unknown method gets UNIMPLEMENTED at once', async () => {
	const srv = await start();
	const c = srv.client();
	for (const m of ['/test.Echo/Nope', '/other.Svc/Echo', '/x']) {
		const r = await unary(c, m, 'x', { deadlineMs: 10000 });
		assert.equal(r.err?.code, S.UNIMPLEMENTED, m);
		assert.ok(r.ms < 2000, `${m} took ${r.ms} ms`);
	}
	// The generic request is re-armed: still works after several.
	assert.equal((await unary(c, '/test.Echo/Echo', 'a')).err, null);
	await stop(srv);
});

test('answer from another thread after the handler returned', async () => {
	const srv = await start(['--workers', '1']);
	const c = srv.client();
	const [a, b] = await Promise.all([
	    unary(c, '/test.Echo/Later', '200'),
	    unary(c, '/test.Echo/Echo', 'not blocked')]);
	assert.equal(a.value?.toString(), 'later 200');
	// The single worker was free while the answer was pending.
	assert.ok(b.ms < a.ms, `echo ${b.ms} ms, later ${a.ms} ms`);
	await stop(srv);
});

test('handler failure status and message reach the client', async () => {
	const srv = await start();
	const r = await unary(srv.client(), '/test.Echo/Fail', 'x');
	assert.equal(r.err?.code, S.INTERNAL);
	assert.equal(r.err?.details, 'boom');
	await stop(srv);
});

test('4 MiB + 1 request: RESOURCE_EXHAUSTED, server keeps serving',
    async () => {
	const srv = await start();
	const c = srv.client();
	const r = await unary(c, '/test.Echo/Echo', Buffer.alloc(MAX + 1));
	assert.equal(r.err?.code, S.RESOURCE_EXHAUSTED);
	// The limit is inclusive: exactly 4 MiB is served.
	const exact = Buffer.alloc(MAX, 7);
	const ok = await unary(c, '/test.Echo/Echo', exact);
	assert.equal(ok.err, null);
	assert.equal(ok.value.length, MAX);
	const again = await unary(srv.client(), '/test.Echo/Echo', 'still');
	assert.equal(again.value.toString(), 'still');
	await stop(srv);
});

function rawConnect(sock, bytes, holdMs = 300) {
	return new Promise((resolve) => {
		const s = net.connect(sock, () => {
			if (bytes)
				s.write(bytes);
			setTimeout(() => { s.destroy(); resolve(); }, holdMs);
		});
		s.on('error', () => resolve());
		s.on('data', () => {});
	});
}

test('garbage on the socket does not kill the server', async () => {
	const srv = await start();
	const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
	// A client that sent half a preface and hangs must not block others.
	const stuck = net.connect(srv.sock, () =>
	    stuck.write(preface.subarray(0, 10)));
	stuck.on('error', () => {});
	await rawConnect(srv.sock, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
	await rawConnect(srv.sock, Buffer.concat([preface,
	    Buffer.from([0, 0, 4, 0xff, 0xff, 0, 0, 0, 1, 1, 2, 3, 4])]));
	// A HEADERS frame with a broken HPACK block.
	await rawConnect(srv.sock, Buffer.concat([preface,
	    Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
	    Buffer.from([0, 0, 5, 1, 4, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff,
	    0xff])]));
	await rawConnect(srv.sock, require('node:crypto').randomBytes(65536));
	await rawConnect(srv.sock, null, 0);
	const r = await unary(srv.client(), '/test.Echo/Echo', 'alive');
	assert.equal(r.err, null);
	assert.equal(r.value.toString(), 'alive');
	assert.equal(srv.proc.exitCode, null);
	stuck.destroy();
	await stop(srv);
});

// A raw HTTP/2 peer: preface and SETTINGS, then it never reads a frame
// (so it never answers a PING). Resolves the ms until the server closed
// it, or null if still open after holdMs.
function deafPeer(sock, holdMs) {
	return new Promise((resolve) => {
		const t0 = Date.now();
		const s = net.connect(sock, () => s.write(Buffer.concat([
		    Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
		    Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])])));
		const t = setTimeout(() => { s.destroy(); resolve(null); },
		    holdMs);
		s.on('error', () => {});
		s.on('data', () => {});
		s.on('close', () => { clearTimeout(t); resolve(Date.now() - t0); });
	});
}

// A raw HTTP/2 peer that acknowledges the server's PINGs for answerMs,
// then goes deaf. Resolves { pings, closedAfter } (ms after going deaf,
// or null if still open holdMs later).
function pingPeer(sock, answerMs, holdMs) {
	return new Promise((resolve) => {
		const t0 = Date.now();
		let buf = Buffer.alloc(0), pings = 0, deafAt = null;
		const s = net.connect(sock, () => s.write(Buffer.concat([
		    Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
		    Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])])));
		const done = (v) => { clearTimeout(t); resolve({ pings, ...v }); };
		const t = setTimeout(() => { s.destroy(); done({ closedAfter:
		    null }); }, answerMs + holdMs);
		s.on('error', () => {});
		s.on('close', () => done({ closedAfter: deafAt === null ? -1 :
		    Date.now() - deafAt }));
		s.on('data', (d) => {
			buf = Buffer.concat([buf, d]);
			while (buf.length >= 9 && buf.length >= 9 + buf.readUIntBE(0, 3)) {
				const len = buf.readUIntBE(0, 3);
				const type = buf[3], flags = buf[4];
				const payload = buf.subarray(9, 9 + len);
				buf = buf.subarray(9 + len);
				if (Date.now() - t0 > answerMs) {
					if (deafAt === null)
						deafAt = Date.now();
					continue;
				}
				if (type === 6 && !(flags & 1)) {
					pings++;
					s.write(Buffer.concat([Buffer.from([0, 0, 8, 6, 1,
					    0, 0, 0, 0]), payload]));
				}
			}
		});
	});
}

test('keepalive: PINGs continue on a long idle connection, so a peer ' +
    'that stops answering later is closed too', async () => {
	const srv = await start(['--keepalive-ms', '300']);
	const r = await pingPeer(srv.sock, 3000, 5000);
	assert.ok(r.pings >= 4, `only ${r.pings} PINGs answered in 3 s`);
	assert.ok(r.closedAfter !== null && r.closedAfter >= 0,
	    `closed after ${r.closedAfter} ms of deafness (pings ${r.pings})`);
	await stop(srv);
});

test('keepalive: a peer that does not answer PINGs is closed, an idle ' +
    'client that does is kept', async () => {
	const srv = await start(['--keepalive-ms', '500', '--v', '5']);
	const ms = await deafPeer(srv.sock, 8000);
	assert.ok(ms !== null && ms >= 400, `deaf peer closed after ${ms} ms`);
	// grpc-js answers PINGs: idle for many keepalive periods, its one
	// connection stays up (no reconnect, no state change).
	const c = srv.client();
	const r1 = await unary(c, '/test.Echo/Echo', 'one');
	assert.equal(r1.err, null);
	const ch = c.getChannel();
	let changes = 0;
	const watch = (st) => ch.watchConnectivityState(st,
	    Date.now() + 60000, (err) => {
		if (err)
			return;
		changes++;
	});
	watch(ch.getConnectivityState(false));
	await sleep(4000);
	assert.equal(changes, 0, 'the idle connection changed state');
	const r2 = await unary(c, '/test.Echo/Echo', 'two');
	assert.equal(r2.err, null);
	const handed = srv.stderr.match(/connection handed to gRPC/g) || [];
	assert.equal(handed.length, 2, 'the idle client reconnected');
	await stop(srv);
	// Without the short keepalive the same deaf peer stays (60 s default).
	const dflt = await start();
	assert.equal(await deafPeer(dflt.sock, 3000), null);
	await stop(dflt);
});

test('peer uid not allowed: connection refused and logged', async () => {
	const srv = await start(['--allow-uid', '12345']);
	const r = await unary(srv.client(), '/test.Echo/Echo', 'x',
	    { deadlineMs: 2000 });
	assert.ok(r.err, 'call from a disallowed uid succeeded');
	assert.equal(r.err.code, S.UNAVAILABLE,
	    `code ${r.err.code} ${r.err.details}`);
	await until('refusal logged', () =>
	    /uid \d+ \(pid \d+\) refused/.test(srv.stderr));
	assert.match(srv.stderr, /refused: uid not allowed \(allowed: uid 12345; kp_allowed_peer_uid\(\), kp_socket_mode\(\)\)/);
	// A flood of refused connections is not a flood of log lines.
	await Promise.all(Array.from({ length: 40 }, () =>
	    rawConnect(srv.sock, null, 50)));
	const lines = srv.stderr.split('\n').filter((l) =>
	    /uid \d+ \(pid \d+\) refused/.test(l));
	assert.ok(lines.length <= 3, `${lines.length} refusal lines`);
	assert.equal(srv.proc.exitCode, null);
	await stop(srv);
});

// Run a client as another uid; prints the call's outcome as JSON.
function callAs(uid, sock) {
	const script = `
const grpc = require(${JSON.stringify(GRPC_JS)});
const c = new grpc.Client('unix:' + ${JSON.stringify(sock)},
    grpc.credentials.createInsecure());
c.makeUnaryRequest('/test.Echo/Echo', (x) => x, (x) => x,
    Buffer.from('hi'), new grpc.Metadata(), { deadline: Date.now() + 3000 },
    (err, v) => { console.log(JSON.stringify({ code: err ? err.code : 0,
    v: v ? v.toString() : null })); c.close(); });`;
	return new Promise((resolve, reject) => {
		const p = spawn(process.execPath, ['-e', script],
		    { uid, gid: uid, cwd: '/', stdio: ['ignore', 'pipe',
		    'inherit'] });
		let out = '';
		p.stdout.on('data', (d) => { out += d; });
		p.on('error', reject);
		p.on('exit', () => resolve(JSON.parse(out)));
	});
}

test('uid 65534 client: refused unless allowed', {
	skip: process.getuid() !== 0 && 'needs root to switch uid',
}, async () => {
	const only0 = await start(['--allow-uid', '0']);
	const r1 = await callAs(65534, only0.sock);
	assert.equal(r1.code, S.UNAVAILABLE);
	// Root, allowed, still gets through.
	assert.equal((await unary(only0.client(), '/test.Echo/Echo', 'r'))
	    .err, null);
	await stop(only0);
	const both = await start(['--allow-uid', '0', '--allow-uid', '65534']);
	const r2 = await callAs(65534, both.sock);
	assert.deepEqual(r2, { code: 0, v: 'hi' });
	await stop(both);
});

async function parallelSlow(workers, n, ms) {
	const srv = await start(['--workers', String(workers)]);
	const c = srv.client();
	await unary(c, '/test.Echo/Echo', 'warm-up');
	const t0 = Date.now();
	const rs = await Promise.all(Array.from({ length: n }, () =>
	    unary(c, '/test.Echo/Slow', String(ms))));
	const elapsed = Date.now() - t0;
	for (const r of rs) {
		assert.equal(r.err, null);
		assert.equal(r.value.toString(), `slept ${ms}`);
	}
	const st = await stats(c);
	await stop(srv);
	return { elapsed, st };
}

test('workers=1: handlers strictly serialized', async () => {
	const { elapsed, st } = await parallelSlow(1, 3, 300);
	assert.equal(st.maxConcurrent, 1);
	assert.equal(st.done, 3);
	assert.ok(elapsed >= 880, `3 x 300 ms took only ${elapsed} ms`);
});

test('workers=4: handlers overlap', async () => {
	const { elapsed, st } = await parallelSlow(4, 3, 300);
	assert.equal(st.maxConcurrent, 3);
	assert.ok(elapsed < 850, `3 x 300 ms on 4 workers took ${elapsed} ms`);
});

test('client cancel reaches the handler', async () => {
	const srv = await start(['--workers', '2']);
	const c = srv.client();
	let call;
	const p = unary(c, '/test.Echo/Slow', '20000',
	    { deadlineMs: 60000, cb: (x) => { call = x; } });
	await until('handler running', async () =>
	    (await stats(c)).running === 1);
	const t0 = Date.now();
	call.cancel();
	const r = await p;
	assert.equal(r.err?.code, S.CANCELLED);
	await until('handler saw the cancel', async () =>
	    (await stats(c)).cancelled === 1, 2000);
	assert.ok(Date.now() - t0 < 2000);
	assert.equal((await stats(c)).running, 0);
	await stop(srv);
});

test('deadline reaches the handler', async () => {
	const srv = await start(['--workers', '2']);
	const c = srv.client();
	await unary(c, '/test.Echo/Echo', 'connect first');
	const r = await unary(c, '/test.Echo/Slow', '20000',
	    { deadlineMs: 500 });
	// The client's timer and the handler's CANCELLED answer race.
	assert.ok([S.DEADLINE_EXCEEDED, S.CANCELLED].includes(r.err?.code),
	    `code ${r.err?.code}`);
	assert.ok(r.ms >= 450 && r.ms < 2000, `took ${r.ms} ms`);
	await until('handler saw the deadline', async () =>
	    (await stats(c)).cancelled === 1, 2000);
	await until('handler logged it', () =>
	    /SLOW cancelled after \d+ ms/.test(srv.stderr), 2000);
	await stop(srv);
});

function traces(stderr) {
	const m = new Map();
	for (const line of stderr.split('\n')) {
		const f = line.match(/^TRACE (\d+) (\S+) (\S+) (\S+) (\S+)$/);
		if (!f)
			continue;
		if (!m.has(f[1]))
			m.set(f[1], []);
		m.get(f[1]).push(`${f[2]} ${f[3]} ${f[5]}`);
	}
	return m;
}

test('unary interceptors run in order; BEFORE can reject', async () => {
	const srv = await start(['--interceptors']);
	const c = srv.client();
	const r = await unary(c, '/test.Echo/Echo', 'i');
	assert.equal(r.err, null);
	const d = await unary(c, '/test.Echo/Denied', 'i');
	assert.equal(d.err?.code, S.PERMISSION_DENIED);
	assert.equal(d.err?.details, 'denied by interceptor B');
	const f = await unary(c, '/test.Echo/Fail', 'i');
	assert.equal(f.err?.code, S.INTERNAL);
	await stop(srv);
	const t = [...traces(srv.stderr).values()];
	assert.equal(t.length, 3);
	assert.deepEqual(t[0], ['A before status=0', 'B before status=0',
	    'A after status=0', 'B after status=0']);
	// B rejected: the handler and B's AFTER do not run; A sees the code.
	assert.deepEqual(t[1], ['A before status=0', 'B before status=0',
	    'A after status=7']);
	assert.doesNotMatch(srv.stderr, /HANDLER \/test.Echo\/Denied/);
	assert.deepEqual(t[2], ['A before status=0', 'B before status=0',
	    'A after status=13', 'B after status=13']);
	const ids = [...traces(srv.stderr).keys()].map(Number);
	assert.ok(ids[0] < ids[1] && ids[1] < ids[2], 'request ids increase');
});

test('without interceptors the Denied handler runs', async () => {
	const srv = await start();
	const r = await unary(srv.client(), '/test.Echo/Denied', 'ok');
	assert.equal(r.err, null);
	await stop(srv);
	assert.match(srv.stderr, /HANDLER \/test.Echo\/Denied/);
	assert.doesNotMatch(srv.stderr, /TRACE/);
});

function streamCall(client, n) {
	return new Promise((resolve) => {
		const msgs = [];
		const s = client.makeServerStreamRequest('/test.Echo/Stream', id,
		    id, Buffer.from(String(n)), new grpc.Metadata(),
		    { deadline: Date.now() + 10000 });
		s.on('data', (d) => msgs.push(d.toString()));
		s.on('error', () => {});
		s.on('status', (st) => resolve({ code: st.code, msgs }));
	});
}

test('server streaming with stream interceptor', async () => {
	const srv = await start(['--interceptors']);
	const c = srv.client();
	const r = await streamCall(c, 5);
	assert.equal(r.code, S.OK);
	assert.deepEqual(r.msgs, ['msg 0', 'msg 1', 'msg 2', 'msg 3', 'msg 4']);
	const none = await streamCall(c, 0);
	assert.equal(none.code, S.OK);
	assert.deepEqual(none.msgs, []);
	const bad = await streamCall(c, 'x');
	assert.equal(bad.code, S.INVALID_ARGUMENT);
	await stop(srv);
	const t = [...traces(srv.stderr).values()];
	assert.deepEqual(t[0], ['S before status=0', 'S send status=0',
	    'S send status=0', 'S send status=0', 'S send status=0',
	    'S send status=0', 'S after status=0']);
});

test('call logging: requests at the verbosity, failures always',
    async () => {
	const on = await start(['--verbosity', '2', '--v', '2']);
	await unary(on.client(), '/test.Echo/Echo', 'hello');
	await unary(on.client(), '/test.Echo/Fail', 'x');
	await stop(on);
	assert.match(on.stderr, /"handling request" requestID=1 method="\/test.Echo\/Echo" request="hello"/);
	assert.match(on.stderr, /"handling request succeeded" requestID=1 method="\/test.Echo\/Echo" response="hello"/);
	assert.match(on.stderr, /^E.*"handling request failed" err="rpc error: code = Internal desc = boom" requestID=2/m);

	const quiet = await start(['--verbosity', '5', '--v', '2']);
	await unary(quiet.client(), '/test.Echo/Echo', 'hello');
	await unary(quiet.client(), '/test.Echo/Fail', 'x');
	await stop(quiet);
	assert.doesNotMatch(quiet.stderr, /"handling request"/);
	assert.match(quiet.stderr, /"handling request failed"/);

	const off = await start(['--verbosity', '-1', '--v', '10']);
	await unary(off.client(), '/test.Echo/Fail', 'x');
	await stop(off);
	assert.doesNotMatch(off.stderr, /"handling request"/);
	assert.match(off.stderr, /"handling request failed"/);
});

test('SIGTERM with calls in flight: quick clean exit 0', async () => {
	const srv = await start(['--workers', '2', '--v', '3']);
	const c = srv.client();
	const calls = [0, 1, 2].map(() => unary(c, '/test.Echo/Slow', '20000',
	    { deadlineMs: 60000 }));
	const st = streamCall(c, 3);
	await until('two handlers running', async () =>
	    (await stats(c)).running === 2);
	const t0 = Date.now();
	srv.proc.kill('SIGTERM');
	const r = await srv.exited;
	const ms = Date.now() - t0;
	assert.deepEqual(r, { code: 0, sig: null }, srv.stderr);
	assert.ok(ms < 3000, `exit took ${ms} ms`);
	for (const x of await Promise.all(calls))
		assert.ok(x.err, 'a call in flight succeeded');
	await st;
	assert.match(srv.stderr, /terminated gracefully/);
	await stop(srv);
});

test('SIGTERM waits for a pending answer, which then does not crash',
    async () => {
	const srv = await start(['--v', '4']);
	const c = srv.client();
	const p = unary(c, '/test.Echo/Later', '700', { deadlineMs: 60000 });
	await until('Later handled', () =>
	    /"handling request".*Later/.test(srv.stderr));
	const t0 = Date.now();
	srv.proc.kill('SIGTERM');
	const r = await srv.exited;
	const ms = Date.now() - t0;
	assert.deepEqual(r, { code: 0, sig: null }, srv.stderr);
	assert.ok(ms >= 300 && ms < 3000, `exit took ${ms} ms`);
	assert.ok((await p).err, 'the cancelled call succeeded');
	assert.match(srv.stderr, /LATER replying[^]*terminated gracefully/);
	await stop(srv);
});

test('stress: many clients, mixed calls, cancels and streams', async () => {
	const srv = await start(['--workers', '4', '--verbosity', '-1']);
	const clients = Array.from({ length: 8 }, () => srv.client());
	const jobs = [];
	for (let i = 0; i < 400; i++) {
		const c = clients[i % clients.length];
		const body = Buffer.from(`payload ${i}\0`);
		if (i % 10 === 3) {
			jobs.push(unary(c, '/test.Echo/Slow', '50', {
			    cb: (call) => setTimeout(() => call.cancel(),
			    i % 30) }).then((r) => assert.ok(
			    r.err === null || r.err.code === S.CANCELLED)));
		} else if (i % 10 === 7) {
			jobs.push(streamCall(c, 20).then((r) => {
				assert.equal(r.code, S.OK);
				assert.equal(r.msgs.length, 20);
			}));
		} else if (i % 10 === 9) {
			jobs.push(unary(c, '/test.Nope/X', body).then((r) =>
			    assert.equal(r.err?.code, S.UNIMPLEMENTED)));
		} else {
			jobs.push(unary(c, '/test.Echo/Echo', body).then((r) =>
			    assert.ok(r.value?.equals(body))));
		}
	}
	await Promise.all(jobs);
	await stop(srv);
});
