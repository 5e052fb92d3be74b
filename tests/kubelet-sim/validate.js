'use strict';
// How each kubelet version judges PluginInfo.supported_versions of a DRA
// plugin (upstream-api.md §3.3). Error texts follow upstream so tests can
// match them; Go's %q/%v formatting is imitated by goQuote/goList.

const KUBELET_VERSIONS = ['1.31', '1.32', '1.33', '1.34', '1.35', '1.36', '1.37', '1.38'];
// Versions with the 1.34 plugin manager (registration, connections).
const MODERN_VERSIONS = ['1.34', '1.35', '1.36', '1.37', '1.38'];

// What differs per kubelet version besides supported_versions
// (upstream-2026.md §4.2-4.5, upstream-api.md §3). One table, so a test
// or the compatibility matrix can say why a version behaves as it does.
//   perEndpoint   instances kept per endpoint, deregistered by endpoint
//                 (rolling updates, 1.33 PR #129832); else one per name
//   dialAtRegistration  grpc.NewClient + Connect() at registration (1.34);
//                 else a lazy dial on the first call with a 1 s wait
//   preferConnected  calls go to the newest *connected* instance (1.34
//                 PR #132058); else to the newest registered one
//   retryRegistration  a failure after the plugin entered the actual
//                 state (RegisterPlugin, the final Notify) is retried
//                 with backoff (1.36 PR #133335); else only when the
//                 socket is re-created
//   healthGate    default of gate ResourceHealthStatus (alpha in
//                 1.34/1.35, beta and on in 1.36; 1.37+ negotiates)
//   healthAll     the stream is opened for every plugin, whatever it
//                 advertises, and re-opened 5 s after any end (1.34-1.36)
//   checkEndpoint  driver name (CSI rules) and endpoint validated: non-empty,
//                 absolute, < 108 bytes, lexically inside the kubelet root
//                 directory (1.37+, PR #140837)
const BEHAVIOUR = {
  '1.31': { perEndpoint: false, dialAtRegistration: false, preferConnected: false, retryRegistration: false,
    healthGate: false, healthAll: false, checkEndpoint: false },
  '1.32': { perEndpoint: false, dialAtRegistration: false, preferConnected: false, retryRegistration: false,
    healthGate: false, healthAll: false, checkEndpoint: false },
  '1.33': { perEndpoint: true, dialAtRegistration: false, preferConnected: false, retryRegistration: false,
    healthGate: false, healthAll: false, checkEndpoint: false },
  '1.34': { perEndpoint: true, dialAtRegistration: true, preferConnected: true, retryRegistration: false,
    healthGate: false, healthAll: true, checkEndpoint: false },
  '1.35': { perEndpoint: true, dialAtRegistration: true, preferConnected: true, retryRegistration: false,
    healthGate: false, healthAll: true, checkEndpoint: false },
  '1.36': { perEndpoint: true, dialAtRegistration: true, preferConnected: true, retryRegistration: true,
    healthGate: true, healthAll: true, checkEndpoint: false },
  '1.37': { perEndpoint: true, dialAtRegistration: true, preferConnected: true, retryRegistration: true,
    healthGate: true, healthAll: false, checkEndpoint: true },
  // 1.38 (upstream-2026-12.md §1.2): the plugin API as 1.37 (v1.DRAPlugin,
  // v1 health first); gate DynamicResourceAllocation removed (DRA always
  // on, PR #141946); its fixes (health checkpoint panic #140904, status
  // order #142340) change nothing a plugin sees.
  '1.38': { perEndpoint: true, dialAtRegistration: true, preferConnected: true, retryRegistration: true,
    healthGate: true, healthAll: false, checkEndpoint: true },
};

// CSI driver-name rule as 1.37 applies it to DRA drivers: at most 63
// characters, alphanumerics, '-', '_' and '.', beginning and ending with
// an alphanumeric (csi validation, "CSI driver name").
const CSI_NAME_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

// 1.37 endpoint checks (dra_plugin_manager.go, PR #140837). rootDir: the
// kubelet's --root-dir. Error texts are this simulator's; upstream's
// unit test only pins "is not inside".
function validateEndpoint137(name, endpoint, rootDir) {
  if (name.length > 63 || !CSI_NAME_RE.test(name)) {
    throw new Error(`invalid DRA driver name ${goQuote(name)}: must be at most 63 characters, ` +
      'alphanumerics, \'-\', \'_\' or \'.\', beginning and ending with an alphanumeric');
  }
  if (!endpoint) throw new Error(`DRA driver plugin ${name}: empty endpoint`);
  if (!endpoint.startsWith('/')) throw new Error(`DRA driver plugin ${name}: endpoint ${goQuote(endpoint)} is not absolute`);
  if (Buffer.byteLength(endpoint) >= 108) {
    throw new Error(`DRA driver plugin ${name}: endpoint ${goQuote(endpoint)} is ${Buffer.byteLength(endpoint)} bytes, ` +
      'must be less than 108');
  }
  const clean = require('node:path').posix.normalize(endpoint);
  const root = require('node:path').posix.normalize(rootDir).replace(/\/+$/, '');
  if (!clean.startsWith(root + '/')) {
    throw new Error(`DRA driver plugin ${name}: endpoint ${goQuote(endpoint)} is not inside the kubelet root directory ` +
      goQuote(root));
  }
}

// 1.37 pickHealthService: v1 preferred, v1alpha1 kept for 1.37-1.39.
const HEALTH_SERVICES_1_37 = ['v1.DRAResourceHealth', 'v1alpha1.DRAResourceHealth'];

function pickHealthService(versions) {
  return HEALTH_SERVICES_1_37.find((s) => versions.includes(s)) || null;
}

// 1.32/1.33: kubelet's own preference order, independent of the plugin's.
const SERVICES_1_32 = [
  ['v1beta1.DRAPlugin', 'v1beta1'],
  ['v1alpha3.NodeService', 'v1alpha4'],
];
// 1.34+: servicesSupportedByKubelet; the PLUGIN's order decides.
const SERVICES_1_34 = { 'v1.DRAPlugin': 'v1', 'v1beta1.DRAPlugin': 'v1beta1' };

const EMPTY_SERVICES_ERR = 'empty list of supported gRPC services (aka supported versions)';
const DRA_LOG_PREFIX = 'kubernetes.io/dra: '; // 1.31 log() helper

// ---- Go formatting helpers -------------------------------------------------

// strconv.Quote for the characters plugins realistically send.
function goQuote(s) {
  let out = '"';
  for (const ch of String(s)) {
    const c = ch.codePointAt(0);
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + '"';
}

// %q of a []string: ["a" "b"]
function goQuoteList(list) {
  return '[' + list.map(goQuote).join(' ') + ']';
}

// %v of a []string: [a b]
function goList(list) {
  return '[' + list.join(' ') + ']';
}

// ---- apimachinery util/version (v0.31) --------------------------------------

// RE2's \s is [\t\n\f\r ]; JS's \s is wider, so spell it out.
const VERSION_RE = /^[\t\n\f\r ]*v?([0-9]+(?:\.[0-9]+)*)(.*)*$/;
const UINT64_MAX = (1n << 64n) - 1n;

// ParseGeneric: >= 2 numeric components, first without leading zero,
// trailing text ignored. Components are BigInt because Go uses uint64.
function parseGeneric(str) {
  const m = VERSION_RE.exec(str);
  if (!m) throw new Error(`could not parse ${goQuote(str)} as version`);
  const parts = m[1].split('.');
  if (parts.length < 2) throw new Error(`illegal version string ${goQuote(str)}`);
  const components = parts.map((comp, i) => {
    if (i === 0 && comp.startsWith('0') && comp !== '0') {
      throw new Error(`illegal zero-prefixed version component ${goQuote(comp)} in ${goQuote(str)}`);
    }
    const n = BigInt(comp);
    if (n > UINT64_MAX) {
      throw new Error(`illegal non-numeric version component ${goQuote(comp)} in ${goQuote(str)}: ` +
        `strconv.ParseUint: parsing ${goQuote(comp)}: value out of range`);
    }
    return n;
  });
  return { components, toString: () => components.join('.') };
}

function compareVersions(a, b) {
  const n = Math.min(a.components.length, b.components.length);
  for (let i = 0; i < n; i++) {
    if (a.components[i] !== b.components[i]) return a.components[i] < b.components[i] ? -1 : 1;
  }
  // Extra non-zero components make a version bigger ("1.0.1" > "1.0").
  if (a.components.slice(n).some((c) => c > 0n)) return 1;
  if (b.components.slice(n).some((c) => c > 0n)) return -1;
  return 0;
}

function highestSupportedVersion(versions) {
  if (versions.length === 0) throw new Error('empty array for supported versions');
  let highest = null;
  let lastErr = null;
  // Upstream scans from the end; only matters for which parse error is shown.
  for (let i = versions.length - 1; i >= 0; i--) {
    let v;
    try {
      v = parseGeneric(versions[i]);
    } catch (err) {
      lastErr = err;
      continue;
    }
    if (v.components[0] > 1n) continue;
    if (highest === null || compareVersions(highest, v) < 0) highest = v;
  }
  if (highest === null) {
    throw new Error(`could not find a highest supported version from versions (${goList(versions)}) ` +
      `reported: ${lastErr ? lastErr.message : '<nil>'}`);
  }
  if (highest.components[0] !== 1n) {
    throw new Error(`highest supported version reported is ${highest}, must be v1.x`);
  }
  return highest;
}

// ---- per kubelet version ----------------------------------------------------

// 1.31: RegistrationHandler.validateVersions; `existing` is the highest
// version of an already registered plugin with the same name, if any.
function validate131(name, endpoint, versions, existing) {
  const fail = (msg) => {
    throw new Error(`validation failed for DRA plugin ${name} at endpoint ${endpoint}: ${DRA_LOG_PREFIX}` +
      `ValidatePlugin for DRA plugin ${goQuote(name)} failed. ${msg}`);
  };
  if (versions.length === 0) fail('Plugin returned an empty list for supported versions');
  let highest;
  try {
    highest = highestSupportedVersion(versions);
  } catch (err) {
    fail(`None of the versions specified ${goQuoteList(versions)} are supported. err=${err.message}`);
  }
  if (existing && compareVersions(existing, highest) >= 0) {
    fail('Another plugin with the same name is already registered with a higher supported version: ' +
      goQuote(String(existing)));
  }
  return { api: 'v1alpha4', service: null, highestVersion: highest };
}

function validate132(name, versions) {
  if (versions.length === 0) throw new Error(`invalid versions of plugin ${name}: ${EMPTY_SERVICES_ERR}`);
  for (const [service, api] of SERVICES_1_32) {
    if (versions.includes(service)) return { api, service };
  }
  // Plugins of that era did not advertise services: fall back to alpha.
  return { api: 'v1alpha4', service: 'v1alpha3.NodeService' };
}

function validate134(name, endpoint, versions) {
  const fail = (msg) => {
    throw new Error(`invalid supported gRPC versions of DRA driver plugin ${name} at endpoint ${endpoint}: ${msg}`);
  };
  if (versions.length === 0) fail(EMPTY_SERVICES_ERR);
  const service = versions.find((v) => Object.hasOwn(SERVICES_1_34, v));
  if (!service) {
    fail(`none of services supported by the plugin (${goQuoteList(versions)}) ` +
      `are supported by the kubelet (${goQuoteList(Object.keys(SERVICES_1_34))})`);
  }
  return { api: SERVICES_1_34[service], service };
}

// Returns { api, service, highestVersion? } or throws the kubelet's error.
function validateSupportedVersions(kubeletVersion, { name, endpoint, versions, existingHighest }) {
  switch (kubeletVersion) {
    case '1.31': return validate131(name, endpoint, versions, existingHighest);
    case '1.32':
    case '1.33':
      return validate132(name, versions);
    case '1.34':
    case '1.35':
    case '1.36':
      return validate134(name, endpoint, versions);
    case '1.37':
    case '1.38':
      return { ...validate134(name, endpoint, versions), healthService: pickHealthService(versions) };
    default: throw new Error(`unsupported kubelet version ${kubeletVersion} (use ${KUBELET_VERSIONS.join(', ')})`);
  }
}

module.exports = {
  KUBELET_VERSIONS,
  MODERN_VERSIONS,
  BEHAVIOUR,
  validateEndpoint137,
  pickHealthService,
  EMPTY_SERVICES_ERR,
  goQuote,
  goQuoteList,
  parseGeneric,
  compareVersions,
  highestSupportedVersion,
  validateSupportedVersions,
};
