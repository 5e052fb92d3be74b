'use strict';
// The HTTP(S) request handler: authentication, fault injection, the request
// log, discovery, nodes, resourceslices and resourceclaims. Everything that
// is state lives in `emu` (see index.js), so a restart keeps or drops it.

const crypto = require('node:crypto');
const { URL } = require('node:url');
const E = require('./errors.js');
const C = require('./convert.js');
const V = require('./validate.js');
const G = require('./gates.js');
const Q = require('./quantity.js');
const S = require('./selectors.js');
const { clone, uid, now, generateName } = require('./store.js');
const { statusFor } = require('./faults.js');
const { routeEvents } = require('./events.js');

const GROUP = 'resource.k8s.io';
const MAX_BODY = 3 * 1024 * 1024; // MaxRequestBodyBytes
const RESOURCE_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
// Introduced/deprecated/removed minors of the beta versions (prerelease
// lifecycle: deprecated three releases after introduction, removed at six).
const LIFECYCLE = { v1beta1: [32, 35, 38], v1beta2: [33, 36, 39] };

class HttpError extends Error {
  constructor(status, headers) { super(status.message || 'error'); this.status = status; this.headers = headers; }
}

// --- response helpers ----------------------------------------------------------

function warningHeader(msg) { return `299 - "${msg.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`; }

function send(ctx, code, body, headers = {}) {
  const { res } = ctx;
  if (res.headersSent || res.destroyed) return;
  ctx.entry.status = code;
  const h = { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Audit-Id': ctx.auditId, ...headers };
  if (ctx.warnings.length) h.Warning = ctx.warnings.map(warningHeader);
  let text = typeof body === 'string' ? body : JSON.stringify(body) + '\n';
  // Fault rules that spoil the real answer (faults.js): cut it off
  // after half its bytes (the connection dies), or garble it.
  const mangle = ctx.mangle;
  if (mangle === 'garble') text = text.slice(0, Math.floor(text.length / 2)).replace(/"/g, "'") + '\u0000}]{';
  h['Content-Length'] = Buffer.byteLength(text);
  res.writeHead(code, h);
  if (mangle === 'truncate') {
    const buf = Buffer.from(text);
    res.write(buf.subarray(0, Math.floor(buf.length / 2)), () => setTimeout(() => res.destroy(), 20));
    return;
  }
  res.end(text);
}

// A 200 answer of `bytes` bytes of valid JSON (a Status padded in a
// field): more than a client's body limit.
function sendAmplify(ctx, bytes) {
  const n = Math.floor(bytes / 3);
  ctx.entry.status = 200;
  const body = `{"kind":"Status","apiVersion":"v1","pad":[${'[],'.repeat(n)}[]]}\n`;
  ctx.res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  ctx.res.end(body);
}

function sendHuge(ctx, bytes) {
  const { res } = ctx;
  ctx.entry.status = 200;
  const head = Buffer.from('{"kind":"Status","apiVersion":"v1","pad":"');
  const tail = Buffer.from('"}\n');
  const chunk = Buffer.alloc(1 << 20, 0x61);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': head.length + bytes + tail.length });
  res.write(head);
  let left = bytes;
  const more = () => {
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      left -= n;
      if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) { res.once('drain', more); return; }
    }
    res.end(tail);
  };
  res.on('error', () => {});
  more();
}

function sendStatus(ctx, st, headers) { send(ctx, st.code, st, headers); }

// The real server's last delegate is Go's http.NotFound: plain text, not a
// Status. Unserved group versions and unknown paths end there.
function sendPlain404(ctx) {
  if (ctx.emu.opts.unservedNotFound === 'status') {
    return sendStatus(ctx, E.status(404, 'NotFound', 'the server could not find the requested resource', {}));
  }
  ctx.entry.status = 404;
  ctx.res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Audit-Id': ctx.auditId, 'Content-Length': 19 });
  ctx.res.end('404 page not found\n');
}

// --- authentication ------------------------------------------------------------

function authenticate(ctx) {
  const { req, emu } = ctx;
  const sock = req.socket;
  if (sock.authorized) {
    const cert = sock.getPeerCertificate();
    if (cert && cert.subject && cert.subject.CN) {
      const o = cert.subject.O;
      return { name: cert.subject.CN, groups: [...(Array.isArray(o) ? o : o ? [o] : []), 'system:authenticated'], via: 'x509' };
    }
  }
  const auth = req.headers.authorization;
  if (auth !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    const u = m && emu.tokens.get(m[1]);
    if (!u) throw new HttpError(E.unauthorized());
    return { name: u.user, groups: [...(u.groups || []), 'system:authenticated'], via: 'token' };
  }
  if (emu.opts.anonymousAuth) return { name: 'system:anonymous', groups: ['system:unauthenticated'], via: 'anonymous' };
  throw new HttpError(E.unauthorized());
}

const PUBLIC_PATHS = ['/version', '/version/', '/healthz', '/livez', '/readyz'];

// --- discovery -------------------------------------------------------------------

function served(emu) { return C.VERSIONS.filter((v) => emu.opts.versions.includes(v)); }

function groupDoc(emu) {
  const vs = served(emu).map((v) => ({ groupVersion: `${GROUP}/${v}`, version: v }));
  return { name: GROUP, versions: vs, preferredVersion: vs[0] };
}

function resourceList(emu, version) {
  return {
    kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${GROUP}/${version}`,
    resources: [
      { name: 'resourceclaims', singularName: 'resourceclaim', namespaced: true, kind: 'ResourceClaim', verbs: RESOURCE_VERBS, storageVersionHash: 'emu-rc' },
      { name: 'resourceclaims/status', singularName: '', namespaced: true, kind: 'ResourceClaim', verbs: ['get', 'patch', 'update'] },
      { name: 'resourceslices', singularName: 'resourceslice', namespaced: false, kind: 'ResourceSlice', verbs: RESOURCE_VERBS, storageVersionHash: 'emu-rs' },
    ],
  };
}

function versionDoc(emu) {
  const [major, minor, patch] = emu.opts.kubeVersion.split('.');
  const doc = {
    major, minor, gitVersion: `v${major}.${minor}.${patch || 0}`, gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean', buildDate: '2025-01-01T00:00:00Z', goVersion: 'go1.23.4', compiler: 'gc', platform: 'linux/amd64',
  };
  if (Number(minor) >= 33) Object.assign(doc, { emulationMajor: major, emulationMinor: minor, minCompatibilityMajor: major, minCompatibilityMinor: String(Number(minor) - 1) });
  return doc;
}

// --- request body ----------------------------------------------------------------

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) { reject(new HttpError(E.status(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_BODY}`))); req.destroy(); return; }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseJSONBody(ctx, what) {
  if (!ctx.rawBody.length) return undefined;
  try { return JSON.parse(ctx.rawBody.toString('utf8')); } catch (e) {
    throw new HttpError(E.badRequest(`${what}: ${e.message}`));
  }
}

// --- main handler ----------------------------------------------------------------

// A request target that WHATWG URL parsing leaves as it is: an origin-form
// path of unreserved characters and slashes (no "." or ".." segment, no
// leading "//", which URL would read as a host), then an optional query of
// characters URL does not percent-encode; no fragment. Anything else goes
// through `new URL`, whose normalization is the reference.
const PLAIN_PATH = /^\/(?!\/)[A-Za-z0-9._~\-/]*$/;
const DOT_SEGMENT = /(^|\/)\.\.?(\/|$)/;
const PLAIN_QUERY = /^[A-Za-z0-9._~\-=&%+,:*!()/@$;]*$/;

// parseTarget returns { pathname, query } of req.url as
// `new URL(target, 'https://x')` and Object.fromEntries(searchParams) do,
// without building a URL object for the common plain target.
function parseTarget(target) {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const search = q < 0 ? '' : target.slice(q + 1);
  if (PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path) && (search === '' || PLAIN_QUERY.test(search))) {
    return { pathname: path, query: search === '' ? {} : Object.fromEntries(new URLSearchParams(search)) };
  }
  const url = new URL(target, 'https://x');
  return { pathname: url.pathname, query: Object.fromEntries(url.searchParams) };
}

// A request without Content-Length or Transfer-Encoding has no body
// (RFC 9112 6.3): nothing to wait for.
function hasBody(req) {
  const h = req.headers;
  return h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
}

const NO_BODY = Buffer.alloc(0);

function createHandler(emu) {
  return async function handle(req, res) {
    const { pathname, query } = parseTarget(req.url);
    const url = { pathname };
    const entry = {
      id: ++emu.requestSeq, time: Date.now(), method: req.method, path: url.pathname, query, user: null,
      status: 0, durationMs: 0, body: undefined, watch: false, fault: null, userAgent: req.headers['user-agent'] || '',
    };
    emu.log.push(entry);
    const ctx = { emu, req, res, url, query, entry, warnings: [], auditId: crypto.randomUUID(), rawBody: NO_BODY };
    res.on('close', () => { entry.durationMs = Date.now() - entry.time; });
    try {
      if (hasBody(req)) ctx.rawBody = await readBody(req);
      if (ctx.rawBody.length) {
        const t = ctx.rawBody.toString('utf8');
        try { entry.body = JSON.parse(t); } catch { entry.body = t; }
      }
      // Authentication runs first (the log names the user), but its 401 is
      // sent after network-level faults (reset/hang/delay) had their chance,
      // and before injected statuses, as authn precedes APF's 429 upstream.
      let user;
      let authErr;
      try { user = authenticate(ctx); entry.user = user.name; } catch (e) { authErr = e; }
      const rule = emu.faults.match(req.method, url.pathname, query, { skipStatus: !!authErr });
      if (rule) {
        entry.fault = rule.id;
        if (rule.action === 'reset') { entry.status = 0; req.socket.destroy(); return; }
        if (rule.action === 'hang') { entry.status = 0; emu.hung.add(res); res.on('close', () => emu.hung.delete(res)); return; }
        if (rule.action === 'delay') await new Promise((r) => setTimeout(r, rule.delayMs || 0));
        if (rule.action === 'status') { const s = statusFor(rule); send(ctx, s.code, s.body, s.headers); return; }
        if (rule.action === 'huge') { sendHuge(ctx, rule.bytes || 65 * 1024 * 1024); return; }
        if (rule.action === 'amplify') { sendAmplify(ctx, rule.bytes || 3.5 * 1024 * 1024); return; }
        if (rule.action === 'truncate' || rule.action === 'garble') ctx.mangle = rule.action;
      }
      if (authErr) throw authErr;
      ctx.user = user;
      if (user.via === 'anonymous' && !PUBLIC_PATHS.includes(url.pathname)) {
        throw new HttpError(E.forbidden(`forbidden: User "system:anonymous" cannot ${req.method.toLowerCase()} path "${url.pathname}"`));
      }
      await route(ctx);
    } catch (err) {
      if (err instanceof HttpError) sendStatus(ctx, err.status, err.headers);
      else {
        emu.errors.push(err);
        sendStatus(ctx, E.internalError(String(err && err.stack || err)));
      }
    }
  };
}

async function route(ctx) {
  const { emu, req, url } = ctx;
  const p = url.pathname.replace(/\/+$/, '') || '/';
  const parts = p.split('/').filter(Boolean);
  const m = req.method;
  if (p === '/version') return m === 'GET' ? send(ctx, 200, versionDoc(emu)) : sendStatus(ctx, E.methodNotAllowed());
  if (['/healthz', '/livez', '/readyz'].includes(p)) {
    ctx.entry.status = 200;
    ctx.res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    return ctx.res.end('ok');
  }
  if (p === '/api') {
    return send(ctx, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${emu.port}` }] });
  }
  if (parts[0] === 'api' && parts[1] === 'v1') return routeCore(ctx, parts.slice(2));
  if (p === '/apis') {
    const groups = served(emu).length ? [groupDoc(emu)] : [];
    return send(ctx, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups });
  }
  if (parts[0] === 'apis' && parts[1] === 'events.k8s.io') {
    return routeEvents(ctx, parts.slice(2), { send, sendStatus, HttpError, parseJSONBody, mergePatch, jsonPatch });
  }
  if (parts[0] === 'apis' && parts[1] === GROUP) {
    const vs = served(emu);
    if (parts.length === 2) return vs.length ? send(ctx, 200, { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(emu) }) : sendPlain404(ctx);
    const version = parts[2];
    if (!vs.includes(version)) return sendPlain404(ctx);
    return routeResource(ctx, version, parts.slice(3));
  }
  return sendPlain404(ctx);
}

function notFoundInGroup(ctx) {
  sendStatus(ctx, E.status(404, 'NotFound', 'the server could not find the requested resource', {}));
}

// --- core/v1: nodes ----------------------------------------------------------------

function encodeNode(n, bare) {
  const o = bare ? {} : { kind: 'Node', apiVersion: 'v1' };
  o.metadata = C.encodeMeta({ name: n.name, uid: n.uid, resourceVersion: n.resourceVersion, creationTimestamp: n.creationTimestamp, labels: n.labels });
  o.spec = {};
  o.status = { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }] };
  return o;
}

function routeCore(ctx, rest) {
  const { emu, req } = ctx;
  if (rest.length === 0) {
    return send(ctx, 200, {
      kind: 'APIResourceList', groupVersion: 'v1',
      resources: [{ name: 'nodes', singularName: 'node', namespaced: false, kind: 'Node', verbs: RESOURCE_VERBS, shortNames: ['no'] }],
    });
  }
  if (rest[0] !== 'nodes') return notFoundInGroup(ctx);
  if (req.method !== 'GET') return sendStatus(ctx, E.methodNotAllowed());
  if (rest.length === 1) {
    const items = [...emu.store.nodes.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map((n) => encodeNode(n, true));
    return send(ctx, 200, { kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: String(emu.store.rv) }, items });
  }
  const n = emu.store.nodes.get(rest[1]);
  if (!n) return sendStatus(ctx, E.notFound('nodes', rest[1], ''));
  return send(ctx, 200, encodeNode(n));
}

// --- resource.k8s.io ---------------------------------------------------------------

function deprecationWarning(emu, version) {
  const lc = LIFECYCLE[version];
  if (!lc || emu.minor < lc[1]) return null;
  const repl = served(emu).includes('v1') || emu.minor >= 34 ? 'v1' : null;
  let msg = `${GROUP}/${version} ResourceSlice is deprecated in v1.${lc[1]}+, unavailable in v1.${lc[2]}+`;
  if (repl) msg += `; use ${GROUP}/${repl} ResourceSlice`;
  return msg;
}

async function routeResource(ctx, version, rest) {
  const { req } = ctx;
  const m = req.method;
  if (rest.length === 0) return send(ctx, 200, resourceList(ctx.emu, version));
  let watchPath = false;
  if (rest[0] === 'watch') { watchPath = true; rest = rest.slice(1); }
  if (rest[0] === 'resourceslices') {
    const w = deprecationWarning(ctx.emu, version);
    if (w) ctx.warnings.push(w);
    if (rest.length === 1) {
      if (m === 'GET') return (watchPath || isWatch(ctx.query)) ? watchSlices(ctx, version) : listSlices(ctx, version);
      if (watchPath) return sendStatus(ctx, E.methodNotAllowed());
      if (m === 'POST') return createSlice(ctx, version);
      if (m === 'DELETE') return deleteCollection(ctx, version);
      return sendStatus(ctx, E.methodNotAllowed());
    }
    if (rest.length === 2) {
      const name = rest[1];
      if (watchPath) return m === 'GET' ? watchSlices(ctx, version, name) : sendStatus(ctx, E.methodNotAllowed());
      if (m === 'GET') return getSlice(ctx, version, name);
      if (m === 'PUT') return updateSlice(ctx, version, name);
      if (m === 'PATCH') return patchSlice(ctx, version, name);
      if (m === 'DELETE') return deleteSlice(ctx, version, name);
      return sendStatus(ctx, E.methodNotAllowed());
    }
    return notFoundInGroup(ctx);
  }
  if (rest[0] === 'resourceclaims' && rest.length === 1) return listClaims(ctx, version, null);
  if (rest[0] === 'namespaces' && rest[2] === 'resourceclaims') {
    const w = deprecationWarning(ctx.emu, version);
    if (w) ctx.warnings.push(w.replace(/ResourceSlice/g, 'ResourceClaim'));
    if (m !== 'GET') return sendStatus(ctx, E.methodNotAllowed());
    if (rest.length === 3) return listClaims(ctx, version, rest[1]);
    if (rest.length === 4 || (rest.length === 5 && rest[4] === 'status')) return getClaim(ctx, version, rest[1], rest[3]);
  }
  return notFoundInGroup(ctx);
}

function isWatch(q) { return q.watch === 'true' || q.watch === '1'; }

// sliceFields is GetAttrs of the resourceslice strategy: the only field
// labels, with spec.nodeName "" when unset.
function sliceFields(o) {
  return { 'metadata.name': o.metadata.name, 'spec.nodeName': o.spec.nodeName || '', 'spec.driver': o.spec.driver };
}

function parseSelectors(ctx) {
  let fields;
  let labels;
  try {
    fields = S.parseFieldSelector(ctx.query.fieldSelector || '');
    labels = S.parseLabelSelector(ctx.query.labelSelector || '');
  } catch (e) { throw new HttpError(E.badRequest(e.message)); }
  for (const t of fields) {
    if (!['metadata.name', 'spec.nodeName', 'spec.driver'].includes(t.key)) {
      throw new HttpError(E.badRequest(`field label not supported: ${t.key}`));
    }
  }
  return (o) => S.matchFields(fields, sliceFields(o)) && S.matchLabels(labels, o.metadata.labels || {});
}

function encodeOpts(ctx, extra = {}) { return { minor: ctx.emu.minor, ...extra }; }

function listSlices(ctx, version) {
  const { emu, query } = ctx;
  const match = parseSelectors(ctx);
  let items = emu.store.listSlices().filter(match);
  const meta = { resourceVersion: String(emu.store.rv) };
  const limit = Number(query.limit || 0);
  let start = '';
  if (query.continue) {
    let tok;
    try { tok = JSON.parse(Buffer.from(query.continue, 'base64').toString('utf8')); } catch { tok = null; }
    if (!tok || tok.v !== 'meta.k8s.io/v1' || typeof tok.start !== 'string') throw new HttpError(E.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)'));
    if (tok.rv < emu.store.windowStart) {
      throw new HttpError(E.expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.'));
    }
    start = tok.start;
    meta.resourceVersion = String(tok.rv);
  }
  if (start) items = items.filter((o) => o.metadata.name >= start);
  // resourceVersion=0 is served from the watch cache, which ignores limit.
  if (limit > 0 && query.resourceVersion !== '0' && items.length > limit) {
    const last = items[limit - 1].metadata.name;
    meta.continue = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: Number(meta.resourceVersion), start: last + '\u0000' })).toString('base64');
    meta.remainingItemCount = items.length - limit;
    items = items.slice(0, limit);
  }
  send(ctx, 200, {
    kind: 'ResourceSliceList', apiVersion: `${GROUP}/${version}`, metadata: meta,
    items: items.map((o) => C.encodeSlice(version, o, encodeOpts(ctx, { bare: true }))),
  });
}

function getSlice(ctx, version, name) {
  const o = ctx.emu.store.slices.get(name);
  if (!o) throw new HttpError(E.notFound('resourceslices', name));
  send(ctx, 200, C.encodeSlice(version, o, encodeOpts(ctx)));
}

function isDryRun(q) { return q.dryRun === 'All'; }

// decodeBody decodes a create/update body in `version`, adding unknown-field
// warnings (or failing with fieldValidation=Strict).
function decodeBody(ctx, version, body) {
  if (body === undefined) throw new HttpError(E.badRequest('the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf'));
  const strict = ctx.query.fieldValidation === 'Strict';
  const kind = body && body.kind;
  const apiVersion = body && body.apiVersion;
  if (apiVersion && apiVersion !== `${GROUP}/${version}`) {
    const gv = apiVersion;
    if (typeof gv === 'string' && gv.startsWith(`${GROUP}/`) && C.VERSIONS.includes(gv.split('/')[1]) && ctx.emu.opts.versions.includes(gv.split('/')[1])) {
      throw new HttpError(E.badRequest(`the API version in the data (${gv}) does not match the expected API version (${GROUP}/${version})`));
    }
    throw new HttpError(E.badRequest(`ResourceSlice in version "${version}" cannot be handled as a ResourceSlice: no kind "${kind || 'ResourceSlice'}" is registered for version "${gv}" in scheme "pkg/api/legacyscheme/scheme.go:30"`));
  }
  if (kind && kind !== 'ResourceSlice') {
    throw new HttpError(E.badRequest(`ResourceSlice in version "${version}" cannot be handled as a ResourceSlice: no kind "${kind}" is registered for version "${GROUP}/${version}" in scheme "pkg/api/legacyscheme/scheme.go:30"`));
  }
  try {
    const { obj, warnings } = C.decodeSlice(version, body, { minor: ctx.emu.minor, strict });
    if (ctx.query.fieldValidation !== 'Ignore') ctx.warnings.push(...warnings);
    return obj;
  } catch (e) {
    if (e instanceof C.DecodeError) {
      throw new HttpError(E.badRequest(`ResourceSlice in version "${version}" cannot be handled as a ResourceSlice: ${e.message}`));
    }
    throw e;
  }
}

function stripInternal(o) {
  for (const d of o.spec.devices || []) delete d._noBasic;
  return o;
}

// semanticSpec compares specs like apiequality.Semantic: quantities by value.
function semanticSpec(spec) {
  return JSON.stringify(spec, (k, v) => {
    if (v && typeof v === 'object' && !Array.isArray(v) && typeof v.value === 'string' && Object.keys(v).length <= 2) {
      try { return { ...v, value: Q.canonical(Q.parse(v.value)) }; } catch { return v; }
    }
    return v;
  });
}

function invalid(ctx, name, errs) {
  throw new HttpError(E.invalidStatus('ResourceSlice', name, errs));
}

function createSlice(ctx, version) {
  const { emu } = ctx;
  const body = parseJSONBody(ctx, `ResourceSlice in version "${version}" cannot be handled as a ResourceSlice`);
  const o = decodeBody(ctx, version, body);
  const meta = o.metadata;
  const clientRV = meta.resourceVersion;
  // BeforeCreate: cluster-scoped objects lose any namespace; system fields
  // are (re)set; the strategy sets generation=1.
  delete meta.namespace;
  delete meta.selfLink;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete meta.managedFields;
  meta.uid = uid();
  meta.creationTimestamp = now();
  meta.generation = 1;
  G.dropDisabledFields(o, null, emu.featureGates);
  const generated = !meta.name && meta.generateName;
  let attempts = generated ? 8 : 1;
  for (;;) {
    if (generated) meta.name = generateName(meta.generateName);
    const errs = V.validateSlice(o, { minor: emu.minor, version, generatedFrom: meta.generateName || undefined });
    if (errs.length) invalid(ctx, meta.name || '', errs);
    if (emu.store.slices.has(meta.name)) {
      if (--attempts > 0) continue;
      throw new HttpError(E.alreadyExists('resourceslices', meta.name));
    }
    break;
  }
  if (clientRV) throw new HttpError(E.internalError('resourceVersion should not be set on objects to be created'));
  stripInternal(o);
  if (emu.opts.driverNameWarning !== false && o.spec.driver !== o.spec.driver.toLowerCase()) ctx.warnings.push('driver names should be lowercase');
  if (isDryRun(ctx.query)) {
    meta.resourceVersion = '';
    return send(ctx, 201, C.encodeSlice(version, o, encodeOpts(ctx)));
  }
  meta.resourceVersion = String(emu.store.nextRV());
  emu.store.slices.set(meta.name, o);
  emu.store.commit('ADDED', o);
  send(ctx, 201, C.encodeSlice(version, o, encodeOpts(ctx)));
}

// applyUpdate runs BeforeUpdate + validation + the no-op check for an
// already decoded object `o` replacing the stored `old`.
function applyUpdate(ctx, version, name, o, old) {
  const { emu } = ctx;
  const meta = o.metadata;
  if (meta.resourceVersion && meta.resourceVersion !== old.metadata.resourceVersion) {
    throw new HttpError(E.conflict('resourceslices', name));
  }
  delete meta.namespace;
  delete meta.selfLink;
  delete meta.managedFields;
  meta.generation = old.metadata.generation;
  if (!meta.uid) meta.uid = old.metadata.uid;
  meta.creationTimestamp = old.metadata.creationTimestamp;
  G.dropDisabledFields(o, old, emu.featureGates);
  if (semanticSpec(o.spec) !== semanticSpec(old.spec)) meta.generation = old.metadata.generation + 1;
  const errs = V.validateSlice(o, { minor: emu.minor, version, old });
  if (errs.length) invalid(ctx, name, errs);
  stripInternal(o);
  if (emu.opts.driverNameWarning !== false && o.spec.driver !== o.spec.driver.toLowerCase()) ctx.warnings.push('driver names should be lowercase');
  meta.resourceVersion = old.metadata.resourceVersion;
  // etcd skips a write whose bytes equal the stored ones: same RV, no event.
  if (JSON.stringify(C.encodeSlice('v1', o, { minor: 99 })) === JSON.stringify(C.encodeSlice('v1', old, { minor: 99 }))) {
    return send(ctx, 200, C.encodeSlice(version, old, encodeOpts(ctx)));
  }
  if (isDryRun(ctx.query)) return send(ctx, 200, C.encodeSlice(version, o, encodeOpts(ctx)));
  meta.resourceVersion = String(emu.store.nextRV());
  emu.store.slices.set(name, o);
  emu.store.commit('MODIFIED', o, old);
  send(ctx, 200, C.encodeSlice(version, o, encodeOpts(ctx)));
}

function updateSlice(ctx, version, name) {
  const body = parseJSONBody(ctx, `ResourceSlice in version "${version}" cannot be handled as a ResourceSlice`);
  const o = decodeBody(ctx, version, body);
  if (o.metadata.name && o.metadata.name !== name) {
    throw new HttpError(E.badRequest(`the name of the object (${o.metadata.name}) does not match the name on the URL (${name})`));
  }
  o.metadata.name = name;
  const old = ctx.emu.store.slices.get(name);
  if (!old) throw new HttpError(E.notFound('resourceslices', name)); // AllowCreateOnUpdate=false
  applyUpdate(ctx, version, name, o, clone(old));
}

// --- PATCH: JSON merge patch (RFC 7386), JSON patch (RFC 6902); strategic
// merge patch behaves as merge patch for these types (devices is atomic).

function mergePatch(target, patch) {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return clone(patch);
  const out = target && typeof target === 'object' && !Array.isArray(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function jsonPointer(doc, ptr) {
  if (ptr === '') return { parent: null, key: null };
  const toks = ptr.split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  let cur = doc;
  for (const t of toks.slice(0, -1)) {
    cur = Array.isArray(cur) ? cur[Number(t)] : cur && cur[t];
    if (cur === undefined) throw new Error(`missing path: ${ptr}`);
  }
  return { parent: cur, key: toks[toks.length - 1] };
}

function jsonPatch(doc, ops) {
  doc = clone(doc);
  for (const op of ops) {
    const { parent, key } = jsonPointer(doc, op.path);
    const idx = Array.isArray(parent) ? (key === '-' ? parent.length : Number(key)) : key;
    switch (op.op) {
      case 'add':
        if (Array.isArray(parent)) parent.splice(idx, 0, clone(op.value)); else parent[idx] = clone(op.value);
        break;
      case 'remove':
        if (parent == null || !(idx in parent)) throw new Error(`unable to remove nonexistent key: ${key}`);
        if (Array.isArray(parent)) parent.splice(idx, 1); else delete parent[idx];
        break;
      case 'replace':
        if (parent == null || !(idx in parent)) throw new Error(`replace operation does not apply: doc is missing key: ${op.path}`);
        parent[idx] = clone(op.value);
        break;
      case 'test':
        if (JSON.stringify(parent[idx]) !== JSON.stringify(op.value)) throw new Error(`testing value ${op.path} failed`);
        break;
      default: throw new Error(`Unexpected kind: ${op.op}`);
    }
  }
  return doc;
}

function patchSlice(ctx, version, name) {
  const ct = (ctx.req.headers['content-type'] || '').split(';')[0].trim();
  const types = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];
  if (!types.includes(ct)) {
    throw new HttpError(E.status(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${types.join(', ')}`));
  }
  const old = ctx.emu.store.slices.get(name);
  if (!old) throw new HttpError(E.notFound('resourceslices', name));
  const patch = parseJSONBody(ctx, 'error decoding patch');
  const current = C.encodeSlice(version, old, encodeOpts(ctx));
  let patched;
  try {
    patched = ct === 'application/json-patch+json' ? jsonPatch(current, patch) : mergePatch(current, patch);
  } catch (e) { throw new HttpError(E.status(422, 'Invalid', e.message)); }
  const o = decodeBody(ctx, version, patched);
  if (o.metadata.name !== name) throw new HttpError(E.badRequest(`the name of the object (${o.metadata.name}) does not match the name on the URL (${name})`));
  applyUpdate(ctx, version, name, o, clone(old));
}

function decodeDeleteOptions(ctx) {
  const body = parseJSONBody(ctx, 'DeleteOptions');
  try { return C.decodeDeleteOptions(body); } catch (e) {
    throw new HttpError(E.badRequest(`couldn't get version/kind; json parse error: ${e.message}`));
  }
}

// removeSlice deletes one stored slice; the deleted object carries the
// revision of the delete, as the DELETED watch event does.
function removeSlice(emu, name) {
  const old = emu.store.slices.get(name);
  emu.store.slices.delete(name);
  const gone = clone(old);
  gone.metadata.resourceVersion = String(emu.store.nextRV());
  emu.store.commit('DELETED', gone, old);
  return gone;
}

function deleteSlice(ctx, version, name) {
  const { emu } = ctx;
  const opts = decodeDeleteOptions(ctx);
  const o = emu.store.slices.get(name);
  if (!o) throw new HttpError(E.notFound('resourceslices', name));
  const pre = opts.preconditions || {};
  // rest.BeforeDelete checks preconditions early, naming the Kind; the
  // storage-level message only appears when an update races the delete.
  const storageStyle = emu.opts.preconditionMessage === 'storage';
  const key = `/registry/${GROUP}/resourceslices/${name}`;
  if (pre.uid !== undefined && pre.uid !== o.metadata.uid) {
    const msg = storageStyle
      ? `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${o.metadata.uid}`
      : `the UID in the precondition (${pre.uid}) does not match the UID in record (${o.metadata.uid}). The object might have been deleted and then recreated`;
    throw new HttpError(storageStyle ? E.conflict('resourceslices', name, msg) : E.conflict('ResourceSlice', name, msg));
  }
  if (pre.resourceVersion !== undefined && pre.resourceVersion !== o.metadata.resourceVersion) {
    const msg = storageStyle
      ? `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${o.metadata.resourceVersion}`
      : `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${o.metadata.resourceVersion}). The object might have been modified`;
    throw new HttpError(storageStyle ? E.conflict('resourceslices', name, msg) : E.conflict('ResourceSlice', name, msg));
  }
  if (isDryRun(ctx.query) || (opts.dryRun || []).includes('All')) return send(ctx, 200, C.encodeSlice(version, o, encodeOpts(ctx)));
  const gone = removeSlice(emu, name);
  send(ctx, 200, C.encodeSlice(version, gone, encodeOpts(ctx)));
}

function deleteCollection(ctx, version) {
  const { emu } = ctx;
  decodeDeleteOptions(ctx);
  const match = parseSelectors(ctx);
  const rv = String(emu.store.rv);
  const victims = emu.store.listSlices().filter(match);
  const items = isDryRun(ctx.query) ? victims : victims.map((o) => removeSlice(emu, o.metadata.name));
  send(ctx, 200, {
    kind: 'ResourceSliceList', apiVersion: `${GROUP}/${version}`, metadata: { resourceVersion: rv },
    items: items.map((o) => C.encodeSlice(version, o, encodeOpts(ctx, { bare: true }))),
  });
}

// --- watch ---------------------------------------------------------------------------

function watchSlices(ctx, version, onlyName) {
  const { emu, query, res, req } = ctx;
  ctx.entry.watch = true;
  let match = parseSelectors(ctx);
  if (onlyName) { const m0 = match; match = (o) => m0(o) && o.metadata.name === onlyName; }
  const bookmarks = query.allowWatchBookmarks === 'true' || query.allowWatchBookmarks === '1';
  const sendInitial = query.sendInitialEvents === 'true';
  if (sendInitial && (query.resourceVersionMatch !== 'NotOlderThan' || !bookmarks)) {
    const errs = [];
    if (query.resourceVersionMatch !== 'NotOlderThan') errs.push(E.forbiddenField('resourceVersionMatch', "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
    if (!bookmarks) errs.push(E.forbiddenField('allowWatchBookmarks', 'sendInitialEvents requires setting allowWatchBookmarks to true'));
    throw new HttpError(E.invalidStatus('ListOptions', '', errs, 'meta.k8s.io'));
  }
  let timeout = Number(query.timeoutSeconds);
  if (!(timeout > 0)) timeout = 1800 + Math.random() * 1800;
  const rvParam = query.resourceVersion || '';

  ctx.entry.status = 200;
  const h = { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Audit-Id': ctx.auditId, 'Transfer-Encoding': 'chunked' };
  if (ctx.warnings.length) h.Warning = ctx.warnings.map(warningHeader);
  res.writeHead(200, h);
  res.flushHeaders();

  const w = { res, version, closed: false, timers: [], queue: [], live: false, lastRV: 0 };
  const write = (type, object) => { if (!w.closed) res.write(JSON.stringify({ type, object }) + '\n'); };
  const enc = (o) => C.encodeSlice(version, o, encodeOpts(ctx));
  const finish = (mode = 'end') => {
    if (w.closed) return;
    w.closed = true;
    for (const t of w.timers) clearTimeout(t), clearInterval(t);
    emu.store.listeners.delete(onEvent);
    emu.store.waiters.delete(onWait);
    emu.watches.delete(w);
    if (mode === 'reset') res.destroy(); else res.end();
  };
  w.close = finish;
  w.bookmark = () => { if (bookmarks && w.live) write('BOOKMARK', C.bookmarkSlice(version, emu.store.rv, emu.minor)); };
  emu.watches.add(w);
  req.on('close', () => finish());
  res.on('close', () => finish());

  const dispatch = (ev) => {
    const was = ev.prev ? match(ev.prev) : false;
    const is = match(ev.obj);
    let type = ev.type;
    if (ev.type === 'DELETED') { if (!is && !was) return; }
    else if (ev.type === 'MODIFIED') {
      if (is && !was) type = 'ADDED';
      else if (!is && was) { type = 'DELETED'; return write(type, enc({ ...ev.obj, spec: ev.prev.spec, metadata: { ...ev.prev.metadata, resourceVersion: ev.obj.metadata.resourceVersion } })); }
      else if (!is) return;
    } else if (!is) return;
    write(type, enc(ev.obj));
  };
  const onEvent = (ev) => { if (w.live) dispatch(ev); else w.queue.push(ev); };
  let onWait = () => {};
  emu.store.listeners.add(onEvent);

  const goLive = (fromRV) => {
    for (const ev of emu.store.eventsAfter(fromRV)) dispatch(ev);
    w.live = true;
    w.queue.length = 0; // everything queued so far is in the history just replayed
  };
  w.timers.push(setTimeout(() => finish(), timeout * 1000));
  if (bookmarks) {
    w.timers.push(setInterval(() => w.bookmark(), emu.opts.bookmarkIntervalMs));
    // The watch cache also sends a bookmark shortly before the deadline.
    if (timeout > 2.5) w.timers.push(setTimeout(() => w.bookmark(), (timeout - 2) * 1000));
  }

  if (rvParam === '' || rvParam === '0' || sendInitial) {
    const from = emu.store.rv;
    for (const o of emu.store.listSlices().filter(match)) write('ADDED', enc(o));
    if (sendInitial) write('BOOKMARK', C.bookmarkSlice(version, from, emu.minor, { 'k8s.io/initial-events-end': 'true' }));
    w.live = true;
    for (const ev of w.queue.splice(0)) dispatch(ev);
    return;
  }
  const rv = Number(rvParam);
  if (!Number.isInteger(rv) || rv < 0) {
    finish();
    return;
  }
  if (rv < emu.store.windowStart) {
    write('ERROR', E.expired(`too old resource version: ${rv} (${emu.store.windowStart})`));
    return finish();
  }
  if (rv > emu.store.rv) {
    // Wait up to 3 s for the cache to catch up, then 504 "Too large".
    const giveUp = setTimeout(() => {
      write('ERROR', E.status(504, 'Timeout', `Too large resource version: ${rv}, current: ${emu.store.rv}`,
        { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 }));
      finish();
    }, 3000);
    w.timers.push(giveUp);
    onWait = () => { if (emu.store.rv >= rv) { clearTimeout(giveUp); emu.store.waiters.delete(onWait); goLive(rv); } };
    emu.store.waiters.add(onWait);
    return;
  }
  goLive(rv);
}

// --- resourceclaims ---------------------------------------------------------------------

// The answer's JSON text of each stored claim, per version, kept until the
// claim changes. Stored claims are replaced (addClaim, updateClaim) or get
// a new resourceVersion, never edited in place otherwise, so the object and
// its resourceVersion name the text.
const claimTexts = new WeakMap();

function claimText(version, c, minor) {
  const rv = c.metadata.resourceVersion;
  let e = claimTexts.get(c);
  if (!e || e.rv !== rv) {
    e = { rv, byVersion: new Map() };
    claimTexts.set(c, e);
  }
  let text = e.byVersion.get(version);
  if (text === undefined) {
    text = JSON.stringify(C.encodeClaim(version, c, { minor })) + '\n';
    e.byVersion.set(version, text);
  }
  return text;
}

function getClaim(ctx, version, ns, name) {
  const c = ctx.emu.store.claims.get(`${ns}/${name}`);
  if (!c) throw new HttpError(E.notFound('resourceclaims', name));
  send(ctx, 200, claimText(version, c, ctx.emu.minor));
}

function listClaims(ctx, version, ns) {
  if (ctx.req.method !== 'GET') return sendStatus(ctx, E.methodNotAllowed());
  const items = [...ctx.emu.store.claims.values()]
    .filter((c) => ns === null || c.metadata.namespace === ns)
    .sort((a, b) => (`${a.metadata.namespace}/${a.metadata.name}` < `${b.metadata.namespace}/${b.metadata.name}` ? -1 : 1));
  send(ctx, 200, {
    kind: 'ResourceClaimList', apiVersion: `${GROUP}/${version}`, metadata: { resourceVersion: String(ctx.emu.store.rv) },
    items: items.map((c) => C.encodeClaim(version, c, { bare: true, minor: ctx.emu.minor })),
  });
}

module.exports = { createHandler, removeSlice, HttpError, LIFECYCLE, parseTarget };
