'use strict';
// KubeletSim: an independent stand-in for kubelet's side of DRA plugin
// registration and NodePrepare/NodeUnprepareResources, written against
// /work/shared/reference/upstream-api.md §3. It deliberately copies
// kubelet's structure: a plugin watcher fills a desired state, a reconciler
// (1 s loop) unregisters stale and registers new sockets, each socket has
// at most one operation in flight and failed operations back off
// exponentially per socket path.

const { EventEmitter } = require('node:events');
const grpc = require('@grpc/grpc-js');
const proto = require('./proto');
const { RegistryWatcher } = require('./watcher');
const path = require('node:path');
const {
  validateSupportedVersions, validateEndpoint137, KUBELET_VERSIONS, MODERN_VERSIONS, BEHAVIOUR,
} = require('./validate');
const { goStatusError, newClient, waitForReady, rawUnary, callRaw } = require('./grpc-util');

const { IDLE, CONNECTING, READY } = grpc.connectivityState;

const DEFAULTS = {
  version: '1.34',
  reconcileMs: 1000, // loopSleepDuration
  rescanMs: 200, // safety net for fs.watch
  retryInitialMs: 500, // exponentialbackoff initialDurationBeforeRetry
  retryMaxMs: 2 * 60 * 1000, // maxDurationBeforeRetry
  dialTimeoutMs: 10000, // blocking registration dial
  getInfoTimeoutMs: 1000,
  notifyTimeoutMs: 5000,
  connectTimeoutMs: 1000, // 1.31-1.33 wait for the lazy DRA connection
  callTimeoutMs: 45000, // defaultClientCallTimeout
  // Gate ResourceHealthStatus: off by default in 1.34/1.35 (alpha), on
  // from 1.36 (beta); undefined takes the version's default.
  healthStream: undefined,
  healthRetryMs: 5000, // wait.UntilWithContext period
  // kubelet --root-dir, for the 1.37+ endpoint check; undefined: the parent
  // of registryDir (<root>/plugins_registry).
  rootDir: undefined,
  rejectWith: null,
  log: null,
};

const REG = proto.REGISTRATION_SERVICE;
const regMethod = (name) => proto.packageDefinition[REG][name];

// Error carrying the registration stage, for events and backoff bookkeeping.
class RegistrationError extends Error {
  constructor(stage, message, name) {
    super(message);
    this.stage = stage;
    this.driver = name;
  }
}

// One registered plugin instance as kubelet's DRA manager sees it.
class DriverInstance {
  constructor(fields) {
    Object.assign(this, fields);
    // Runtime state that should not show up in JSON output.
    Object.defineProperty(this, 'client', { value: null, writable: true });
    Object.defineProperty(this, 'connecting', { value: null, writable: true });
    Object.defineProperty(this, 'closed', { value: false, writable: true });
    Object.defineProperty(this, 'healthCall', { value: null, writable: true });
  }

  close() {
    this.closed = true;
    if (this.healthCall) this.healthCall.cancel();
    if (this.client) this.client.close();
    this.client = null;
    this.connected = false;
  }
}

class KubeletSim extends EventEmitter {
  constructor(options = {}) {
    super();
    this.options = { ...DEFAULTS, ...options };
    // kubeletVersion: the same as version, named as the CLI flag.
    if (options.kubeletVersion !== undefined) this.options.version = options.kubeletVersion;
    if (!this.options.registryDir) throw new Error('KubeletSim: registryDir is required');
    if (!KUBELET_VERSIONS.includes(this.options.version)) {
      throw new Error(`KubeletSim: version must be one of ${KUBELET_VERSIONS.join(', ')}`);
    }
    this.version = this.options.version;
    this.behaviour = BEHAVIOUR[this.version];
    this.modern = MODERN_VERSIONS.includes(this.version);
    if (this.options.healthStream === undefined) this.options.healthStream = this.behaviour.healthGate;
    this.rootDir = this.options.rootDir || path.dirname(path.resolve(this.options.registryDir));
    this.healthErrors = 0; // "Error receiving from WatchResources stream" lines
    this.rejectWith = this.options.rejectWith; // may be changed at runtime
    this.watcher = new RegistryWatcher({ dir: this.options.registryDir, rescanMs: this.options.rescanMs });
    this.actual = new Map(); // socket path -> { generation, name, endpoint, handlerRegistered }
    this.pending = new Set(); // socket paths with an operation in flight
    this.backoff = new Map(); // socket path -> { until, durationMs }
    this.store = new Map(); // driver name -> DriverInstance[] (oldest first)
    this.registrationErrors = []; // every failed registration attempt
    this.driverErrors = new Map(); // driver name -> [{ at, stage, message }]
    this.regClients = new Set();
    this.timer = null;
    this.stopped = false;
  }

  // ---- lifecycle -----------------------------------------------------------

  start() {
    this.watcher.on('log', (m) => this.log(m));
    this.watcher.on('socketAdded', (p) => { this.log(`socket added: ${p}`); this.emit('socketAdded', p); });
    this.watcher.on('socketRemoved', (p) => { this.log(`socket removed: ${p}`); this.emit('socketRemoved', p); });
    this.watcher.start();
    this.log(`kubelet ${this.version} simulator watching ${this.watcher.dir}`);
    this.timer = setInterval(() => this.reconcile(), this.options.reconcileMs);
    this.reconcile();
    return this;
  }

  async stop() {
    this.stopped = true;
    clearInterval(this.timer);
    this.watcher.stop();
    for (const c of this.regClients) c.close();
    for (const list of this.store.values()) for (const inst of list) inst.close();
    this.store.clear();
  }

  log(message) {
    this.emit('log', message);
    const { log } = this.options;
    if (typeof log === 'function') log(message);
    else if (log) console.error(`[kubelet-sim ${this.version}] ${message}`);
  }

  // ---- reconciler ----------------------------------------------------------

  reconcile() {
    if (this.stopped) return;
    const desired = this.watcher.desired;
    // Unregister first: removed sockets and re-created ones (new generation).
    for (const [sock, a] of this.actual) {
      const d = desired.get(sock);
      if ((d && d.generation === a.generation) || this.pending.has(sock)) continue;
      this.unregister(sock, a);
    }
    for (const [sock, d] of desired) {
      if (this.actual.has(sock) || this.pending.has(sock)) continue;
      const b = this.backoff.get(sock);
      if (b && Date.now() < b.until) continue;
      this.runOperation(sock, () => this.register(sock, d.generation));
    }
  }

  // goroutinemap semantics: one operation per socket, exponential backoff
  // after a failed one, reset after a successful one.
  runOperation(sock, fn) {
    this.pending.add(sock);
    fn().then(
      () => this.backoff.delete(sock),
      (err) => this.noteFailure(sock, err),
    ).finally(() => this.pending.delete(sock));
  }

  noteFailure(sock, err) {
    if (this.stopped) return;
    const prev = this.backoff.get(sock);
    const durationMs = prev
      ? Math.min(prev.durationMs * 2, this.options.retryMaxMs)
      : this.options.retryInitialMs;
    this.backoff.set(sock, { until: Date.now() + durationMs, durationMs });
    // Failures after the plugin entered the actual state are not retried
    // until the socket is re-created (kubelet <= 1.35); 1.36 removes the
    // plugin from the actual state and retries with backoff.
    let retry = !this.actual.has(sock);
    if (!retry && this.behaviour.retryRegistration) {
      const a = this.actual.get(sock);
      this.actual.delete(sock);
      if (a.handlerRegistered) this.handlerDeregister(a.name, a.endpoint);
      retry = true;
    }
    const event = {
      socketPath: sock,
      name: err.driver,
      stage: err.stage || 'unknown',
      error: err.message,
      retry,
      retryInMs: retry ? durationMs : null,
      at: new Date(),
    };
    this.registrationErrors.push(event);
    if (err.driver) this.recordDriverError(err.driver, event.stage, err.message);
    this.log(`registration of ${sock} failed (${event.stage}): ${err.message}` +
      (retry ? `; retry in ${durationMs} ms` : '; not retried until the socket is re-created'));
    this.emit('registrationFailed', event);
  }

  recordDriverError(name, stage, message) {
    if (!this.driverErrors.has(name)) this.driverErrors.set(name, []);
    this.driverErrors.get(name).push({ at: new Date(), stage, message });
  }

  // ---- registration (operation_generator.go GenerateRegisterPluginFunc) ----

  async register(sock, generation) {
    const client = newClient(sock);
    this.regClients.add(client);
    try {
      await this.dial(client, sock);
      const info = await this.getInfo(client, sock);
      const endpoint = info.endpoint || sock; // empty endpoint => the registration socket
      if (info.type !== 'DRAPlugin') {
        const msg = `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${sock}`;
        await this.notify(client, sock, false, msg, info.name, 'type');
        throw new RegistrationError('type', msg, info.name);
      }
      const chosen = await this.validate(client, sock, info, endpoint, info.endpoint);
      if (this.stopped) return;
      // Added to the actual state before the handler runs: from here on a
      // failure is not retried (kubelet <= 1.35).
      const a = { generation, name: info.name, endpoint, handlerRegistered: false };
      this.actual.set(sock, a);
      const inst = await this.handlerRegister(client, sock, info, endpoint, chosen, a);
      await this.notifySuccess(client, sock, inst);
    } finally {
      this.regClients.delete(client);
      client.close(); // kubelet closes the registration connection
    }
  }

  async dial(client, sock) {
    try {
      await waitForReady(client, this.options.dialTimeoutMs);
    } catch (err) {
      throw new RegistrationError('dial', `RegisterPlugin error -- dial failed at socket ${sock}, err: ${err.message}`);
    }
  }

  async getInfo(client, sock) {
    const m = regMethod('GetInfo');
    const res = await rawUnary(client, m.path, m.requestSerialize({}), this.options.getInfoTimeoutMs);
    let info = null;
    let error = res.code === grpc.status.OK ? null : goStatusError(res.code, res.details);
    if (!error) {
      try {
        info = m.responseDeserialize(res.buffer);
      } catch (err) {
        error = goStatusError(grpc.status.INTERNAL,
          `grpc: failed to unmarshal the received message: ${err.message}`);
      }
    }
    if (error) {
      throw new RegistrationError('getInfo',
        `RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${sock}, err: ${error}`);
    }
    this.log(`GetInfo ${sock}: type=${info.type} name=${info.name} endpoint=${info.endpoint || '(empty)'} ` +
      `supported_versions=${JSON.stringify(info.supported_versions)}`);
    return info;
  }

  async validate(client, sock, info, endpoint, rawEndpoint) {
    try {
      if (this.behaviour.checkEndpoint) validateEndpoint137(info.name, rawEndpoint, this.rootDir);
      return validateSupportedVersions(this.version, {
        name: info.name,
        endpoint,
        versions: info.supported_versions,
        existingHighest: this.existingHighest(info.name),
      });
    } catch (err) {
      const msg = `RegisterPlugin error -- plugin validation failed with err: ${err.message}`;
      await this.notify(client, sock, false, msg, info.name, 'validation');
      throw new RegistrationError('validation', msg, info.name);
    }
  }

  existingHighest(name) {
    const list = this.store.get(name);
    return list && list.length ? list[list.length - 1].highestVersion : null;
  }

  // handler.RegisterPlugin: store the instance the way each version does.
  async handlerRegister(client, sock, info, endpoint, chosen, a) {
    let problem = this.rejectionFor(info);
    const inst = problem ? null : new DriverInstance({
      name: info.name,
      endpoint,
      socketPath: sock,
      supportedVersions: [...info.supported_versions],
      api: chosen.api,
      service: chosen.service,
      healthService: chosen.healthService,
      servicePrefix: proto.APIS[chosen.api].prefix,
      highestVersion: chosen.highestVersion ? String(chosen.highestVersion) : undefined,
      kubeletVersion: this.version,
      registeredAt: new Date(),
      connected: false,
      errors: this.driverErrorList(info.name),
    });
    if (inst) {
      try {
        this.storeAdd(inst, chosen);
      } catch (err) {
        problem = err.message;
      }
    }
    if (problem) {
      a.rejected = true;
      const msg = `RegisterPlugin error -- plugin registration failed with err: ${problem}`;
      await this.notify(client, sock, false, msg, info.name, 'register').catch(() => {});
      throw new RegistrationError('register', msg, info.name);
    }
    a.handlerRegistered = true;
    if (this.behaviour.dialAtRegistration) this.connectNow(inst);
    return inst;
  }

  rejectionFor(info) {
    const r = this.rejectWith;
    const out = typeof r === 'function' ? r(info) : r;
    return out ? String(out) : null;
  }

  driverErrorList(name) {
    if (!this.driverErrors.has(name)) this.driverErrors.set(name, []);
    return this.driverErrors.get(name);
  }

  storeAdd(inst, chosen) {
    const list = this.store.get(inst.name) || [];
    if (this.version === '1.31') {
      // RegisterPlugin re-runs the version check, then overwrites by name.
      validateSupportedVersions('1.31', {
        name: inst.name, endpoint: inst.endpoint, versions: inst.supportedVersions,
        existingHighest: this.existingHighest(inst.name),
      });
      void chosen;
      list.forEach((old) => old.close());
      this.store.set(inst.name, [inst]);
    } else if (!this.behaviour.perEndpoint) {
      // One instance per driver name; a new one replaces the old.
      if (list.length) this.log(`DRA driver ${inst.name}: already registered, previous plugin was replaced`);
      list.forEach((old) => old.close());
      this.store.set(inst.name, [inst]);
    } else {
      if (list.some((i) => i.endpoint === inst.endpoint)) {
        throw new Error(`endpoint ${inst.endpoint} already registered for DRA driver plugin ${inst.name}`);
      }
      this.store.set(inst.name, [...list, inst]);
    }
  }

  async notifySuccess(client, sock, inst) {
    try {
      await this.notify(client, sock, true, '', inst.name, 'notify');
    } catch (err) {
      if (this.behaviour.retryRegistration) {
        // 1.36: the registration is undone and retried (noteFailure).
        throw new RegistrationError('notify',
          `RegisterPlugin error -- failed to send registration status at socket ${sock}, err: ${err.message}`, inst.name);
      }
      inst.notifyError = err.message;
      this.recordDriverError(inst.name, 'notify', err.message);
      this.log(`RegisterPlugin error -- failed to send registration status at socket ${sock}, err: ${err.message}`);
    }
    this.log(`registered DRA driver ${inst.name} at ${inst.endpoint} using ${inst.api} ` +
      `(supported_versions ${JSON.stringify(inst.supportedVersions)})`);
    this.emit('registered', inst);
  }

  // notifyPlugin: 5 s deadline. For a failure status the caller still fails.
  async notify(client, sock, registered, errorText, name, stage) {
    const m = regMethod('NotifyRegistrationStatus');
    const body = m.requestSerialize({ plugin_registered: registered, error: errorText });
    const res = await rawUnary(client, m.path, body, this.options.notifyTimeoutMs);
    if (res.code === grpc.status.OK) return;
    const err = goStatusError(res.code, res.details);
    if (registered) throw new Error(err);
    throw new RegistrationError(stage,
      `RegisterPlugin error -- failed to send error at socket ${sock}, err: ${errorText}: ${err}`, name);
  }

  // ---- deregistration -------------------------------------------------------

  unregister(sock, a) {
    this.actual.delete(sock);
    // A rejectWith registration never reached the handler; skip it so the
    // test hook cannot knock out another instance of the same driver.
    if (!a.rejected) this.handlerDeregister(a.name, a.endpoint);
    this.log(`deregistered DRA driver ${a.name} (socket ${sock})`);
    this.emit('deregistered', { name: a.name, endpoint: a.endpoint, socketPath: sock });
  }

  handlerDeregister(name, endpoint) {
    const list = this.store.get(name) || [];
    if (!this.behaviour.perEndpoint) {
      // DeRegisterPlugin(name): drops whatever is registered under the name
      // (this is what breaks rolling updates on 1.31/1.32).
      list.forEach((i) => i.close());
      this.store.delete(name);
      return;
    }
    const keep = list.filter((i) => i.endpoint !== endpoint);
    list.filter((i) => i.endpoint === endpoint).forEach((i) => i.close());
    if (keep.length) this.store.set(name, keep);
    else this.store.delete(name);
  }

  // ---- connections ------------------------------------------------------------

  // 1.34: grpc.NewClient at registration plus Connect(), reconnecting
  // whenever the connection ends.
  connectNow(inst) {
    inst.client = newClient(inst.endpoint);
    const channel = inst.client.getChannel();
    const watch = () => {
      if (inst.closed) return;
      let state;
      try {
        state = channel.getConnectivityState(true); // true: leave IDLE = Connect()
      } catch {
        return; // channel closed
      }
      this.setConnected(inst, state === READY);
      channel.watchConnectivityState(state, Date.now() + 3600e3, () => watch());
    };
    watch();
    if (this.options.healthStream) this.watchHealth(inst);
  }

  setConnected(inst, connected) {
    if (inst.connected === connected) return;
    inst.connected = connected;
    this.emit('connection', { name: inst.name, endpoint: inst.endpoint, connected });
  }

  // 1.31-1.33: grpc.Dial on first use, then wait up to 1 s for the state to
  // leave Connecting; the connection is kept only if that worked.
  async lazyConnection(inst) {
    if (inst.client) return inst.client;
    if (!inst.connecting) {
      inst.connecting = this.dialLazily(inst).finally(() => { inst.connecting = null; });
    }
    return inst.connecting;
  }

  async dialLazily(inst) {
    const client = newClient(inst.endpoint);
    const channel = client.getChannel();
    const deadline = Date.now() + this.options.connectTimeoutMs;
    let state = channel.getConnectivityState(true);
    while (state === IDLE || state === CONNECTING) {
      const changed = await new Promise((resolve) => {
        channel.watchConnectivityState(state, deadline, (err) => resolve(!err));
      });
      if (!changed) {
        client.close();
        throw new Error('timed out waiting for gRPC connection to be ready');
      }
      state = channel.getConnectivityState(false);
    }
    if (inst.closed) {
      client.close();
      throw new Error('DRA plugin was deregistered');
    }
    inst.client = client;
    return client;
  }

  // Health streams (upstream-2026.md §4.5). 1.34-1.36 with the gate:
  // v1alpha1 NodeWatchResources right after registration whatever
  // supported_versions says, re-opened 5 s after it ends (each failure is
  // an ERROR line: "Error receiving from WatchResources stream"). 1.37:
  // only for an advertised health service, v1 preferred; UNIMPLEMENTED is
  // terminal.
  watchHealth(inst) {
    if (inst.closed || this.stopped) return;
    let service = proto.HEALTH_SERVICE;
    if (!this.behaviour.healthAll) {
      if (!inst.healthService) return;
      service = inst.healthService;
    }
    const pkg = service.split('.')[0];
    const path = `/${service}/NodeWatchResources`;
    const call = inst.client.makeServerStreamRequest(path, (b) => b, (b) => b,
      proto.encode(`${pkg}.NodeWatchResourcesRequest`, {}), new grpc.Metadata(), {});
    inst.healthCall = call;
    inst.healthStreams = (inst.healthStreams || 0) + 1;
    this.emit('healthOpen', { name: inst.name, endpoint: inst.endpoint, service });
    call.on('data', (buf) => {
      try {
        const msg = proto.decode(`${pkg}.NodeWatchResourcesResponse`, buf);
        inst.health = msg.devices;
        inst.healthServiceUsed = service;
        inst.healthMessages = (inst.healthMessages || 0) + 1;
        this.emit('health', { name: inst.name, endpoint: inst.endpoint, service, devices: msg.devices });
      } catch (err) {
        this.log(`health stream of ${inst.name}: bad message: ${err.message}`);
      }
    });
    call.on('error', (err) => {
      if (inst.closed || this.stopped) return;
      this.healthErrors++;
      this.log(`ERROR Error receiving from WatchResources stream of ${inst.name}: ${goStatusError(err.code, err.details)}`);
      this.emit('healthError', { name: inst.name, endpoint: inst.endpoint, service, code: err.code, details: err.details });
    });
    call.on('status', (st) => {
      if (inst.closed || this.stopped) return;
      if (!this.behaviour.healthAll && st.code === grpc.status.UNIMPLEMENTED) {
        this.log(`health service of ${inst.name} is not implemented: health monitoring off`);
        return;
      }
      const t = setTimeout(() => this.watchHealth(inst), this.options.healthRetryMs);
      t.unref();
    });
  }

  // ---- lookups ----------------------------------------------------------------

  drivers() {
    return [...this.store.values()].flat();
  }

  // The instance kubelet would call: 1.34 prefers the newest connected one.
  getDriver(name) {
    const list = this.store.get(name);
    if (!list || !list.length) return undefined;
    if (this.behaviour.preferConnected) {
      const connected = list.filter((i) => i.connected);
      if (connected.length) return connected[connected.length - 1];
    }
    return list[list.length - 1];
  }

  waitForDriver(name, timeoutMs = 10000) {
    const match = () => (name ? this.getDriver(name) : this.drivers()[0]);
    return this.waitFor('registered', () => match(), timeoutMs, () => match());
  }

  // Resolves with the first event payload accepted by predicate (or the
  // value of `already` if that is truthy right away).
  waitFor(event, predicate = () => true, timeoutMs = 10000, already = null) {
    const now = already && already();
    if (now) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const onEvent = (payload) => {
        let ok;
        try {
          ok = predicate(payload);
        } catch (err) {
          ok = false;
        }
        if (!ok) return;
        cleanup();
        resolve(payload);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${event}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.off(event, onEvent);
      };
      this.on(event, onEvent);
    });
  }

  // ---- DRA calls (pkg/kubelet/cm/dra/manager.go) ------------------------------

  nodePrepareResources(driverName, claims, opts) {
    return this.callDRA('NodePrepareResources', driverName, claims, opts);
  }

  nodeUnprepareResources(driverName, claims, opts) {
    return this.callDRA('NodeUnprepareResources', driverName, claims, opts);
  }

  async callDRA(method, driverName, claims, { timeoutMs = this.options.callTimeoutMs } = {}) {
    const requested = claims.map(({ namespace, uid, name }) => ({ namespace, uid, name }));
    const inst = this.getDriver(driverName);
    if (!inst) throw this.callError(driverName, method, `failed to get gRPC client for driver ${driverName}: ${this.notRegisteredText(driverName)}`);
    let client;
    try {
      client = this.behaviour.dialAtRegistration ? inst.client : await this.lazyConnection(inst);
    } catch (err) {
      throw this.callError(driverName, method, `${method} failed: ${err.message}`);
    }
    const request = proto.encode(proto.typeName(inst.api, `${method}Request`), { claims: requested });
    const res = await rawUnary(client, inst.servicePrefix + method, request, timeoutMs);
    if (res.code !== grpc.status.OK) {
      throw this.callError(driverName, method, `${method} failed: ${goStatusError(res.code, res.details)}`, { code: res.code });
    }
    let response;
    try {
      response = proto.decode(proto.typeName(inst.api, `${method}Response`), res.buffer);
    } catch (err) {
      throw this.callError(driverName, method, `${method} failed: ${goStatusError(grpc.status.INTERNAL,
        `grpc: failed to unmarshal the received message: ${err.message}`)}`, { code: grpc.status.INTERNAL });
    }
    const problem = checkResponse(method, requested, response);
    if (problem) throw this.callError(driverName, method, problem, { response });
    return response;
  }

  notRegisteredText(name) {
    return this.modern
      ? `DRA driver ${name} is not registered`
      : `plugin name ${name} not found in the list of registered DRA plugins`;
  }

  callError(driverName, method, message, extra = {}) {
    const err = Object.assign(new Error(message), { method, driver: driverName }, extra);
    this.recordDriverError(driverName, method, message);
    this.log(`${driverName}: ${message}`);
    return err;
  }

  // Raw access for protocol tests; see grpc-util.callRaw.
  callRaw(endpoint, methodPath, buffer, deadlineMs) {
    return callRaw(endpoint, methodPath, buffer, deadlineMs);
  }
}

// kubelet's checks of a Prepare/Unprepare response. Returns an error text
// or null. Map entries are checked in wire order (Go's order is random).
function checkResponse(method, requested, response) {
  const entries = Object.entries(response.claims || {});
  for (const [uid, result] of entries) {
    const claim = requested.find((c) => c.uid === uid);
    if (!claim) return `${method} returned result for unknown claim UID ${uid}`;
    if (result && result.error) return `${method} failed for claim ${claim.namespace}/${claim.name}: ${result.error}`;
  }
  const unfinished = requested.length - entries.length;
  if (unfinished !== 0) return `${method} left out ${unfinished} claims`;
  return null;
}

module.exports = {
  KubeletSim,
  DriverInstance,
  checkResponse,
  callRaw,
  proto,
  KUBELET_VERSIONS,
  BEHAVIOUR,
  validateSupportedVersions,
  DEFAULTS,
};
