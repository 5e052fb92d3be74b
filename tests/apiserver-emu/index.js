'use strict';
// kube-apiserver emulator for the kubeletplugin tests and demo.
//
//   const { startEmulator } = require('./tests/apiserver-emu');
//   const emu = await startEmulator({ versions: ['v1beta1'] });  // "1.32-like"
//   ... emu.url, emu.caFile, emu.tokens[0] ...
//   await emu.stop();
//
// Everything the tests steer (faults, tokens, nodes, claims, history, the
// request log) is a plain method on the returned object; the same methods are
// reachable over a plain-HTTP control port (controlPort option) for the demo.

const https = require('node:https');
const http = require('node:http');
const fs = require('node:fs');
const crypto = require('node:crypto');
const { emulatorPki, issueClientCert } = require('./certs.js');
const { Store, clone, uid, now, generateName } = require('./store.js');
const { Faults, checkRate } = require('./faults.js');
const G = require('./gates.js');
const { createHandler, removeSlice, LIFECYCLE } = require('./server.js');
const C = require('./convert.js');
const S = require('./selectors.js');
const Q = require('./quantity.js');
const V = require('./validate.js');

function defaultKubeVersion(versions) {
  if (versions.includes('v1')) return '1.34.0';
  if (versions.includes('v1beta2')) return '1.33.0';
  return '1.32.0';
}

// A beta version is not served from its removal release on (v1beta1 from
// 1.38: "unavailable in v1.38+"; v1beta2 from 1.39).
function servedVersions(asked, kubeVersion) {
  const minor = Number(kubeVersion.split('.')[1]);
  const versions = asked.filter((v) => !LIFECYCLE[v] || minor < LIFECYCLE[v][2]);
  // versions: [] asks for no resource.k8s.io at all (DRA off); a list
  // whose every version is gone by kubeVersion is a test's mistake.
  if (versions.length === 0 && asked.length > 0) throw new Error(`none of ${asked.join(', ')} is served by ${kubeVersion}`);
  return versions;
}

function newToken() { return crypto.randomBytes(24).toString('base64url'); }

// startEmulator options (all optional):
//   port               HTTPS port (0 = random)
//   versions           served resource.k8s.io versions, default all three
//   kubeVersion        emulated release "1.N.P"; default from versions
//   featureGates       {DRADeviceTaints: false, ...}: gates that are off
//                      drop their fields on write (gates.js)
//                      (v1 -> 1.34, v1beta2 -> 1.33, else 1.32); drives
//                      deprecation warnings, `devices: null`, messages
//   nodes              node names to create (string or {name, uid, labels})
//   tokens             [{token, user, groups}]; default one random token for
//                      user "system:serviceaccount:kube-system:dra-plugin"
//   tokenFile          path the current (first) token is written to
//   dir                where the PKI goes (default: a temp dir)
//   controlPort        start the plain-HTTP control endpoint on this port
//   historySize        watch-cache event window (default 500)
//   initialResourceVersion  first RV (default 1000)
//   bookmarkIntervalMs periodic BOOKMARK interval (default 60000)
//   anonymousAuth      treat requests without credentials as
//                      system:anonymous (403 except /version,/healthz) instead of 401
//   unservedNotFound   'text' (default, as Go's http.NotFound) or 'status'
//   preconditionMessage 'early' (default, rest.BeforeDelete wording) or 'storage'
async function startEmulator(opts = {}) {
  const asked = opts.versions || ['v1', 'v1beta2', 'v1beta1'];
  for (const v of asked) if (!C.VERSIONS.includes(v)) throw new Error(`unknown version ${v}`);
  const kubeVersion = opts.kubeVersion || defaultKubeVersion(asked);
  const versions = servedVersions(asked, kubeVersion);
  G.checkGates(opts.featureGates);
  const emu = {
    opts: {
      bookmarkIntervalMs: 60000, historySize: 500, initialResourceVersion: 1000, anonymousAuth: false,
      unservedNotFound: 'text', preconditionMessage: 'early', ...opts, versions, kubeVersion,
    },
    minor: Number(kubeVersion.split('.')[1]),
    featureGates: { ...(opts.featureGates || {}) },
    store: null,
    tokens: new Map(),
    faults: new Faults(),
    log: [],
    requestSeq: 0,
    watches: new Set(),
    hung: new Set(),
    errors: [],
    sockets: new Set(),
    tlsFault: false,
    tlsConnections: 0, // TLS connections accepted (handshakes done), for the bench
    tlsFailures: 0,
    port: opts.port || 0,
  };
  emu.store = new Store({ historySize: emu.opts.historySize, initialRV: emu.opts.initialResourceVersion });
  const pki = emulatorPki(opts.dir);
  // A temporary PKI (no dir given) is ours to remove at stop: it holds
  // the CA's private key.
  const ownPki = !opts.dir;
  const tokenList = opts.tokens || [{ token: newToken(), user: 'system:serviceaccount:kube-system:dra-plugin', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system'] }];
  for (const t of tokenList) emu.tokens.set(t.token, { user: t.user, groups: t.groups || [] });
  const writeTokenFile = () => { if (opts.tokenFile) fs.writeFileSync(opts.tokenFile, [...emu.tokens.keys()][0] + '\n', { mode: 0o644 }); };
  writeTokenFile();

  let server = null;
  const handler = createHandler(emu);
  async function listen() {
    server = https.createServer({
      key: pki.keyPem, cert: pki.certPem, ca: pki.caPem, requestCert: true, rejectUnauthorized: false,
    }, handler);
    server.keepAliveTimeout = 60000;
    server.on('connection', (s) => {
      // tlsFault: the handshake of a new connection fails (plain text
      // where the ServerHello belongs), as behind a broken proxy.
      if (emu.tlsFault) { emu.tlsFailures++; s.end('HTTP/1.1 400 Bad Request\r\n\r\n'); return; }
      emu.sockets.add(s);
      s.on('close', () => emu.sockets.delete(s));
    });
    server.on('secureConnection', (s) => { emu.tlsConnections++; emu.sockets.add(s); s.on('close', () => emu.sockets.delete(s)); });
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(emu.port, '127.0.0.1', () => { server.off('error', reject); resolve(); });
    });
    emu.port = server.address().port;
  }
  async function close() {
    if (!server) return;
    const s = server;
    server = null;
    for (const w of [...emu.watches]) w.close('reset');
    const closed = new Promise((r) => s.close(() => r()));
    for (const sock of emu.sockets) sock.destroy();
    emu.sockets.clear();
    await closed;
  }
  await listen();

  let control = null;
  const api = {
    get url() { return `https://127.0.0.1:${emu.port}`; },
    get port() { return emu.port; },
    caFile: pki.caFile,
    caPem: pki.caPem,
    pkiDir: pki.dir,
    get tokens() { return [...emu.tokens.keys()]; },
    get token() { return [...emu.tokens.keys()][0]; },
    get resourceVersion() { return emu.store.rv; },
    kubeVersion,
    versions,
    emu, // internals, for white-box assertions

    // --- lifecycle -----------------------------------------------------------
    async stop() {
      await close();
      for (const r of emu.hung) r.destroy();
      if (control) await new Promise((r) => control.close(() => r()));
      control = null;
      if (ownPki) fs.rmSync(pki.dir, { recursive: true, force: true });
    },
    // restart closes every connection and listens again on the same port with
    // the same CA and tokens; freshStore starts from an empty store (like an
    // etcd wipe: RVs restart at initialResourceVersion); kubeVersion: back
    // as that release (an upgrade: the stored objects kept, the versions
    // served and the validation that release's).
    async restart({ freshStore = false, downMs = 0, kubeVersion: kv } = {}) {
      await close();
      if (freshStore) emu.store = new Store({ historySize: emu.opts.historySize, initialRV: emu.opts.initialResourceVersion });
      if (kv) {
        emu.opts.versions = api.versions = servedVersions(asked, kv);
        emu.opts.kubeVersion = api.kubeVersion = kv;
        emu.minor = Number(kv.split('.')[1]);
      }
      if (downMs) await new Promise((r) => setTimeout(r, downMs));
      await listen();
    },

    // --- auth ----------------------------------------------------------------
    addToken(token = newToken(), user = 'test-user', groups = []) { emu.tokens.set(token, { user, groups }); return token; },
    removeToken(token) { emu.tokens.delete(token); },
    // rotateToken replaces `old` (default: the first token) by a new one for
    // the same user; the old one is rejected at once (401). The token file,
    // if configured, gets the new token.
    rotateToken(old = api.token, fresh = newToken()) {
      const u = emu.tokens.get(old) || { user: 'system:serviceaccount:kube-system:dra-plugin', groups: [] };
      const entries = [...emu.tokens.entries()].map(([t, v]) => (t === old ? [fresh, u] : [t, v]));
      if (!emu.tokens.has(old)) entries.unshift([fresh, u]);
      emu.tokens = new Map(entries);
      writeTokenFile();
      return fresh;
    },
    issueClientCert(user, groups = []) { return issueClientCert(pki, user, groups); },

    // --- nodes and claims ------------------------------------------------------
    addNode(name, { uid: u = uid(), labels = { 'kubernetes.io/hostname': name } } = {}) {
      const n = { name, uid: u, labels, creationTimestamp: now(), resourceVersion: String(emu.store.nextRV()) };
      emu.store.nodes.set(name, n);
      return clone(n);
    },
    removeNode(name) { emu.store.bump(); return emu.store.nodes.delete(name); },
    getNode(name) { return clone(emu.store.nodes.get(name)); },
    // addClaim stores a v1-shaped ResourceClaim. Shorthand fields:
    //   { namespace, name, uid?, requests?: [name | request], allocation?:
    //     { results: [{request, driver, pool, device, adminAccess?, shareID?,
    //                  consumedCapacity?, tolerations?, bindingConditions?,
    //                  bindingFailureConditions?}] (stored as given, not
    //                  checked against the published devices; a kube
    //                  version older than a field drops it when served),
    //       config?: [{source, requests, opaque: {driver, parameters}}],
    //       nodeSelector? }, reservedFor? }
    // Omit allocation for an unallocated claim.
    addClaim(c) {
      const ns = c.namespace || (c.metadata && c.metadata.namespace) || 'default';
      const name = c.name || (c.metadata && c.metadata.name);
      const requests = (c.requests || (c.allocation ? [...new Set(c.allocation.results.map((r) => r.request))] : ['req-0']))
        .map((r) => (typeof r === 'string' ? { name: r, exactly: { deviceClassName: 'example.com', allocationMode: 'ExactCount', count: 1 } } : r));
      const claim = {
        metadata: {
          name, namespace: ns, uid: c.uid || uid(), resourceVersion: String(emu.store.nextRV()),
          creationTimestamp: now(), ...(c.metadata || {}),
        },
        spec: c.spec || { devices: { requests } },
        status: c.status || {},
      };
      claim.metadata.name = name;
      claim.metadata.namespace = ns;
      if (c.allocation) {
        const devices = { results: c.allocation.results };
        if (c.allocation.config) devices.config = c.allocation.config;
        claim.status.allocation = { devices };
        if (c.allocation.nodeSelector) claim.status.allocation.nodeSelector = c.allocation.nodeSelector;
      }
      if (c.reservedFor) claim.status.reservedFor = c.reservedFor;
      emu.store.claims.set(`${ns}/${name}`, claim);
      return clone(claim);
    },
    updateClaim(ns, name, fn) {
      const c = emu.store.claims.get(`${ns}/${name}`);
      if (!c) throw new Error(`no claim ${ns}/${name}`);
      const n = fn(clone(c)) || c;
      n.metadata.resourceVersion = String(emu.store.nextRV());
      emu.store.claims.set(`${ns}/${name}`, n);
      return clone(n);
    },
    setClaimUID(ns, name, newUid = uid()) { return api.updateClaim(ns, name, (c) => { c.metadata.uid = newUid; return c; }); },
    deallocateClaim(ns, name) { return api.updateClaim(ns, name, (c) => { delete c.status.allocation; return c; }); },
    deleteClaim(ns, name) { emu.store.bump(); return emu.store.claims.delete(`${ns}/${name}`); },
    getClaim(ns, name) { return clone(emu.store.claims.get(`${ns}/${name}`)); },
    // getEvents returns the stored events.k8s.io/v1 Events (events.js).
    getEvents() { return [...((emu.store.events && emu.store.events.values()) || [])].map(clone); },

    // --- slices (as another client would see or change them) --------------------
    // getSlices returns the stored slices encoded in `version` (default v1),
    // optionally filtered by a field selector string.
    getSlices({ fieldSelector = '', version = 'v1' } = {}) {
      const terms = S.parseFieldSelector(fieldSelector);
      return emu.store.listSlices()
        .filter((o) => S.matchFields(terms, { 'metadata.name': o.metadata.name, 'spec.nodeName': o.spec.nodeName || '', 'spec.driver': o.spec.driver }))
        .map((o) => C.encodeSlice(version, o, { minor: emu.minor }));
    },
    // createSlice stores a slice as another client (e.g. an older version
    // of the plugin) would create it: v1 JSON, metadata.generateName or
    // metadata.name, validated; an ADDED event goes to the watches.
    // Returns the stored object in v1.
    createSlice(obj) {
      const { obj: o } = C.decodeSlice('v1', clone(obj), { minor: emu.minor });
      const meta = o.metadata;
      meta.uid = uid();
      meta.creationTimestamp = now();
      meta.generation = 1;
      if (!meta.name) meta.name = generateName(meta.generateName);
      const errs = V.validateSlice(o, { minor: emu.minor, version: 'v1' });
      if (errs.length) throw new Error(`invalid slice: ${JSON.stringify(errs)}`);
      if (emu.store.slices.has(meta.name)) throw new Error(`slice ${meta.name} exists`);
      for (const d of o.spec.devices || []) delete d._noBasic;
      meta.resourceVersion = String(emu.store.nextRV());
      emu.store.slices.set(meta.name, o);
      emu.store.commit('ADDED', o);
      return C.encodeSlice('v1', o, { minor: emu.minor });
    },
    // deleteSlices removes slices behind the plugin's back, e.g. kubelet's
    // start-up DeleteCollection(spec.driver=D,spec.nodeName=N). Returns names.
    deleteSlices({ fieldSelector = '' } = {}) {
      const terms = S.parseFieldSelector(fieldSelector);
      const names = emu.store.listSlices()
        .filter((o) => S.matchFields(terms, { 'metadata.name': o.metadata.name, 'spec.nodeName': o.spec.nodeName || '', 'spec.driver': o.spec.driver }))
        .map((o) => o.metadata.name);
      for (const n of names) removeSlice(emu, n);
      return names;
    },
    // setFeatureGates({Gate: false, ...}) replaces the gates that are off
    // (gates.js); fields behind them are dropped from then on.
    setFeatureGates(g) { G.checkGates(g); emu.featureGates = { ...(g || {}) }; },
    // touchSlice makes a foreign write (labels change) so the plugin's cached
    // resourceVersion goes stale: its next PUT/DELETE gets 409.
    touchSlice(name) {
      const o = emu.store.slices.get(name);
      if (!o) throw new Error(`no slice ${name}`);
      const prev = clone(o);
      o.metadata.labels = { ...(o.metadata.labels || {}), 'emu/touched': String(Date.now()) };
      o.metadata.resourceVersion = String(emu.store.nextRV());
      emu.store.commit('MODIFIED', o, prev);
      return C.encodeSlice('v1', o, { minor: emu.minor });
    },

    // --- watches and history ------------------------------------------------------
    // tlsFault(true) closes every connection and fails the TLS handshake
    // of new ones until tlsFault(false); returns the failed handshakes.
    tlsFault(on = true) {
      emu.tlsFault = !!on;
      if (on) for (const sock of [...emu.sockets]) sock.destroy();
      return emu.tlsFailures;
    },
    dropWatches({ mode = 'end' } = {}) { const n = emu.watches.size; for (const w of [...emu.watches]) w.close(mode); return n; },
    activeWatches() { return emu.watches.size; },
    sendBookmarks() { for (const w of emu.watches) w.bookmark(); },
    compactHistory() { return emu.store.compact(); },
    bumpResourceVersion(n = 1) { return emu.store.bump(n); },

    // --- faults ---------------------------------------------------------------------
    // inject({ method, path, query, times, skip, action, status, reason,
    //          message, retryAfter, body, headers, delayMs }) -> rule id
    inject(rule) { return emu.faults.add(rule); },
    clearFaults(id) { emu.faults.clear(id); },
    faults() { return emu.faults.rules.map(({ pathRe, ...r }) => r); },

    // --- request log -------------------------------------------------------------------
    requests(filter = {}) {
      return emu.log.filter((e) => (!filter.method || e.method === filter.method)
        && (!filter.path || (filter.path instanceof RegExp ? filter.path.test(e.path) : e.path.includes(filter.path)))
        && (filter.since === undefined || e.time >= filter.since));
    },
    writes(filter = {}) { return api.requests(filter).filter((e) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(e.method)); },
    resetLog() { emu.log.length = 0; },
    checkRate(opts2, entries = emu.log) { return checkRate(entries, opts2); },
    async waitFor(pred, { timeoutMs = 5000, intervalMs = 20 } = {}) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const v = await pred();
        if (v) return v;
        if (Date.now() > end) throw new Error('waitFor: timed out');
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    },
    internalErrors() { return emu.errors.slice(); },
  };

  for (const n of opts.nodes || []) {
    if (typeof n === 'string') api.addNode(n); else api.addNode(n.name, n);
  }

  if (opts.controlPort !== undefined) {
    control = await startControl(api, opts.controlPort);
    api.controlUrl = `http://127.0.0.1:${control.address().port}`;
  }
  return api;
}

// The control endpoint: POST /<method> with a JSON array of arguments (or a
// single object argument) calls api.<method>; GET /requests and GET /state
// read. Plain HTTP on 127.0.0.1: it is test infrastructure, not part of the
// emulated API.
const CONTROL_METHODS = ['addToken', 'removeToken', 'rotateToken', 'issueClientCert', 'addNode', 'removeNode', 'getNode',
  'addClaim', 'setClaimUID', 'deallocateClaim', 'deleteClaim', 'getClaim', 'getSlices', 'createSlice', 'deleteSlices', 'touchSlice', 'setFeatureGates',
  'dropWatches', 'tlsFault', 'activeWatches', 'sendBookmarks', 'compactHistory', 'bumpResourceVersion', 'inject', 'clearFaults', 'faults',
  'requests', 'writes', 'resetLog', 'checkRate', 'restart'];

function startControl(api, port) {
  const srv = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const reply = (code, v) => { res.writeHead(code, { 'Content-Type': 'application/json' }); res.end(JSON.stringify(v === undefined ? null : v) + '\n'); };
    try {
      const name = req.url.split('?')[0].replace(/^\/+/, '');
      if (req.method === 'GET' && name === 'state') {
        return reply(200, { url: api.url, port: api.port, resourceVersion: api.resourceVersion, tokens: api.tokens, versions: api.versions, kubeVersion: api.kubeVersion, watches: api.activeWatches() });
      }
      if (!CONTROL_METHODS.includes(name)) return reply(404, { error: `unknown control method ${name}` });
      let args = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : [];
      if (!Array.isArray(args)) args = [args];
      if (name === 'requests' || name === 'writes') args = args.map((f) => (f && f.path && f.pathRegex ? { ...f, path: new RegExp(f.path) } : f));
      reply(200, await api[name](...args));
    } catch (e) { reply(500, { error: String(e && e.message || e) }); }
  });
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port || 0, '127.0.0.1', () => resolve(srv));
  });
}

// kubeconfig renders a kubeconfig with paths relative to its own directory.
function kubeconfig({ server, caFile = 'ca.crt', tokenFile = 'token', name = 'apiserver-emu' }) {
  return `apiVersion: v1
kind: Config
clusters:
- name: ${name}
  cluster:
    server: ${server}
    certificate-authority: ${caFile}
users:
- name: ${name}
  user:
    tokenFile: ${tokenFile}
contexts:
- name: ${name}
  context:
    cluster: ${name}
    user: ${name}
current-context: ${name}
`;
}

module.exports = { startEmulator, kubeconfig, quantity: Q, checkRate };
