'use strict';
// Decoding (versioned JSON -> one internal form) and encoding (internal ->
// versioned JSON) of ResourceSlices and ResourceClaims.
//
// The real server stores one internal object and converts per request; the
// differences that bite clients are reproduced here:
//  - v1beta1 nests device fields under `basic`; v1beta2/v1 flatten them.
//  - v1beta1 spec.nodeName/allNodes are plain values with omitempty, so "" and
//    false mean "unset"; v1beta2/v1 use pointers and keep an explicit "" or
//    false, which validation then rejects.
//  - `devices` has no omitempty before 1.35 ("devices": null when empty).
//  - unknown fields are dropped with a warning (fieldValidation=Warn), or 400
//    with fieldValidation=Strict; wrong JSON types and unparsable quantities
//    are decode errors (400), not validation errors (422).
//  - Go's encoding/json sorts map keys on output.

const Q = require('./quantity.js');

const VERSIONS = ['v1', 'v1beta2', 'v1beta1'];

class DecodeError extends Error {}

// --- tiny schema language --------------------------------------------------
// A schema is one of: 'string' | 'int' | 'bool' | 'qty' | 'any' |
// { obj: GoTypeName, fields: {name: schema}, since?: minor } |
// { arr: schema } | { map: schema }. A field schema may be wrapped as
// { since: 33, s: schema } to exist only from that minor release on.

const str = 'string';
const int = 'int';
const bool = 'bool';
const any = 'any';
const qty = 'qty';
const obj = (name, fields) => ({ obj: name, fields });
const arr = (s) => ({ arr: s });
const map = (s) => ({ map: s });
const since = (minor, s) => ({ since: minor, s });

const nodeSelectorRequirement = obj('NodeSelectorRequirement', { key: str, operator: str, values: arr(str) });
const nodeSelector = obj('NodeSelector', {
  nodeSelectorTerms: arr(obj('NodeSelectorTerm', {
    matchExpressions: arr(nodeSelectorRequirement), matchFields: arr(nodeSelectorRequirement),
  })),
});
const counter = obj('Counter', { value: qty });
// v1-only fields of 1.36/1.37 (list attributes, nodeAllocatableResources,
// partitionTypeAttribute, skipNodeOperations): the older versions were
// deprecated before they arrived, so there they are unknown fields.
const v1only = (s) => ({ v1only: true, s });
const deviceFields = {
  attributes: map(obj('DeviceAttribute', {
    int, bool, string: str, version: str,
    ints: v1only(since(36, arr(int))), bools: v1only(since(36, arr(bool))),
    strings: v1only(since(36, arr(str))), versions: v1only(since(36, arr(str))),
  })),
  capacity: map(obj('DeviceCapacity', { value: qty, requestPolicy: since(34, any) })),
  consumesCounters: since(33, arr(obj('DeviceCounterConsumption', { counterSet: str, counters: map(counter) }))),
  nodeName: since(33, str),
  nodeSelector: since(33, nodeSelector),
  allNodes: since(33, bool),
  taints: since(33, arr(obj('DeviceTaint', { key: str, value: str, effect: str, timeAdded: str }))),
  bindsToNode: since(34, bool),
  bindingConditions: since(34, arr(str)),
  bindingFailureConditions: since(34, arr(str)),
  allowMultipleAllocations: since(34, bool),
  nodeAllocatableResources: v1only(since(37, map(obj('NodeAllocatableResource', {
    mapping: obj('NodeAllocatableMapping', { capacityKey: str, capacityMultiplier: qty, deviceMultiplier: qty }),
    overhead: obj('NodeAllocatableOverhead', { perPod: qty, perContainer: qty }),
  })))),
};
const DEVICE_KEYS = Object.keys(deviceFields);

const objectMeta = obj('ObjectMeta', {
  name: str, generateName: str, namespace: str, selfLink: str, uid: str, resourceVersion: str,
  generation: int, creationTimestamp: any, deletionTimestamp: any, deletionGracePeriodSeconds: int,
  labels: map(str), annotations: map(str),
  ownerReferences: arr(obj('OwnerReference', {
    apiVersion: str, kind: str, name: str, uid: str, controller: bool, blockOwnerDeletion: bool,
  })),
  finalizers: arr(str), managedFields: any,
});

function sliceSchema(version) {
  const device = version === 'v1beta1'
    ? obj('Device', { name: str, basic: obj('BasicDevice', deviceFields) })
    : obj('Device', { name: str, ...deviceFields });
  return obj('ResourceSlice', {
    kind: str, apiVersion: str, metadata: objectMeta,
    spec: obj('ResourceSliceSpec', {
      driver: str,
      pool: obj('ResourcePool', { name: str, generation: int, resourceSliceCount: int }),
      nodeName: str, nodeSelector, allNodes: bool,
      devices: arr(device),
      perDeviceNodeSelection: since(33, bool),
      sharedCounters: since(33, arr(obj('CounterSet', { name: str, counters: map(counter) }))),
      partitionTypeAttribute: v1only(since(37, str)),
      skipNodeOperations: v1only(since(37, arr(str))),
    }),
  });
}

const deleteOptionsSchema = obj('DeleteOptions', {
  kind: str, apiVersion: str, gracePeriodSeconds: int,
  preconditions: obj('Preconditions', { uid: str, resourceVersion: str }),
  orphanDependents: bool, propagationPolicy: str, dryRun: arr(str), ignoreStoreReadErrorWithClusterBreakingPotential: bool,
});

function jsonType(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

const GO_TYPE = { string: 'string', int: 'int64', bool: 'bool' };

// walk type-checks v against schema s, collecting unknown-field paths and
// normalizing quantities. Returns the cleaned value (unknown fields removed).
function walk(v, s, path, ctx, owner) {
  if (s && s.v1only) {
    if (ctx.version !== undefined && ctx.version !== 'v1') { ctx.unknown.push(path); return undefined; }
    s = s.s;
  }
  if (s && s.since !== undefined) {
    // Fields of later releases do not exist in this server's types at all.
    if (ctx.minor < s.since) { ctx.unknown.push(path); return undefined; }
    s = s.s;
  }
  if (v === null) return undefined; // null leaves Go's zero value / nil pointer
  const typeErr = (goType) => new DecodeError(
    `json: cannot unmarshal ${jsonType(v) === 'object' ? 'object' : jsonType(v)} into Go struct field ${owner}.${path.replace(/\[\d+\]/g, '')} of type ${goType}`);
  if (s === any) return v;
  if (s === str) { if (typeof v !== 'string') throw typeErr('string'); return v; }
  if (s === bool) { if (typeof v !== 'boolean') throw typeErr('bool'); return v; }
  if (s === int) {
    if (typeof v !== 'number') throw typeErr('int64');
    if (!Number.isInteger(v)) throw new DecodeError(`json: cannot unmarshal number ${v} into Go struct field ${owner}.${path} of type int64`);
    return v;
  }
  if (s === qty) {
    if (typeof v !== 'string' && typeof v !== 'number') throw typeErr('resource.Quantity');
    try { return Q.normalize(v); } catch (e) { throw new DecodeError(e.message); }
  }
  if (s.arr) {
    if (!Array.isArray(v)) throw typeErr('[]' + (s.arr.obj || GO_TYPE[s.arr] || 'interface {}'));
    return v.map((x, i) => walk(x, s.arr, `${path}[${i}]`, ctx, owner));
  }
  if (s.map) {
    if (jsonType(v) !== 'object') throw typeErr('map[string]' + (s.map.obj || GO_TYPE[s.map] || 'interface {}'));
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      const w = walk(x, s.map, `${path}.${k}`, ctx, owner);
      out[k] = w === undefined && s.map.obj ? {} : w;
    }
    return out;
  }
  if (s.obj) {
    if (jsonType(v) !== 'object') throw typeErr(s.obj);
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      const sub = s.fields[k];
      const p = path ? `${path}.${k}` : k;
      if (!sub) { ctx.unknown.push(p); continue; }
      const w = walk(x, sub, p, ctx, owner);
      if (w !== undefined) out[k] = w;
    }
    return out;
  }
  throw new Error('bad schema');
}

// decodeSlice turns a request body in `version` into the internal form.
// Returns { obj, warnings } or throws DecodeError (-> 400).
function decodeSlice(version, body, { minor, strict = false } = {}) {
  if (jsonType(body) !== 'object') throw new DecodeError(`json: cannot unmarshal ${jsonType(body)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
  const ctx = { minor, version, unknown: [] };
  const v = walk(body, sliceSchema(version), '', ctx, 'ResourceSlice');
  if (strict && ctx.unknown.length) {
    throw new DecodeError(`strict decoding error: ${ctx.unknown.map((p) => `unknown field "${p}"`).join(', ')}`);
  }
  const spec = v.spec || {};
  const internal = {
    metadata: v.metadata || {},
    spec: {
      driver: spec.driver || '',
      pool: { name: '', generation: 0, resourceSliceCount: 0, ...(spec.pool || {}) },
    },
  };
  const s = internal.spec;
  if (version === 'v1beta1') {
    // Plain string/bool with omitempty: the zero value means "not set".
    if (spec.nodeName) s.nodeName = spec.nodeName;
    if (spec.allNodes) s.allNodes = true;
  } else {
    if (spec.nodeName !== undefined) s.nodeName = spec.nodeName;
    if (spec.allNodes !== undefined) s.allNodes = spec.allNodes;
  }
  if (spec.nodeSelector !== undefined) s.nodeSelector = spec.nodeSelector;
  if (spec.perDeviceNodeSelection !== undefined) s.perDeviceNodeSelection = spec.perDeviceNodeSelection;
  if (spec.sharedCounters !== undefined) s.sharedCounters = spec.sharedCounters;
  if (spec.partitionTypeAttribute !== undefined) s.partitionTypeAttribute = spec.partitionTypeAttribute;
  if (spec.skipNodeOperations !== undefined) s.skipNodeOperations = spec.skipNodeOperations;
  if (spec.devices !== undefined) {
    s.devices = spec.devices.map((d) => {
      const dev = { name: d.name || '' };
      const src = version === 'v1beta1' ? d.basic : d;
      if (version === 'v1beta1' && d.basic === undefined) dev._noBasic = true;
      for (const k of DEVICE_KEYS) if (src && src[k] !== undefined) dev[k] = src[k];
      return dev;
    });
  }
  return { obj: internal, warnings: ctx.unknown.map((p) => `unknown field "${p}"`) };
}

function decodeDeleteOptions(body) {
  if (body === undefined || body === null) return {};
  const ctx = { minor: 99, unknown: [] };
  return walk(body, deleteOptionsSchema, '', ctx, 'DeleteOptions') || {};
}

// --- encoding ----------------------------------------------------------------

function sortedMap(m, f = (x) => x) {
  const out = {};
  for (const k of Object.keys(m).sort()) out[k] = f(m[k]);
  return out;
}

const META_ORDER = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation',
  'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations',
  'ownerReferences', 'finalizers', 'managedFields'];

function encodeMeta(m) {
  const out = {};
  for (const k of META_ORDER) {
    const v = m[k];
    if (k === 'creationTimestamp') { out[k] = v || null; continue; } // metav1.Time: null, never omitted
    if (v === undefined || v === null || v === '' || v === 0) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if ((k === 'labels' || k === 'annotations') && Object.keys(v).length === 0) continue;
    if (k === 'labels' || k === 'annotations') out[k] = sortedMap(v);
    else if (k === 'ownerReferences') {
      out[k] = v.map((r) => {
        const o = { apiVersion: r.apiVersion || '', kind: r.kind || '', name: r.name || '', uid: r.uid || '' };
        if (r.controller !== undefined) o.controller = r.controller;
        if (r.blockOwnerDeletion !== undefined) o.blockOwnerDeletion = r.blockOwnerDeletion;
        return o;
      });
    } else out[k] = v;
  }
  return out;
}

function encodeDeviceFields(d, version) {
  const out = {};
  for (const k of DEVICE_KEYS) {
    if (k === 'nodeAllocatableResources' && version !== 'v1') continue;
    const v = d[k];
    if (v === undefined) continue;
    if ((k === 'attributes' || k === 'capacity') && Object.keys(v).length === 0) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (k === 'attributes') out[k] = sortedMap(v, (a) => {
      const o = {};
      for (const t of ['int', 'bool', 'string', 'version', 'ints', 'bools', 'strings', 'versions']) if (a[t] !== undefined) o[t] = a[t];
      return o;
    });
    else if (k === 'capacity') out[k] = sortedMap(v, (c) => {
      const o = { value: c.value === undefined ? '0' : c.value };
      if (c.requestPolicy !== undefined) o.requestPolicy = c.requestPolicy;
      return o;
    });
    else if (k === 'bindsToNode' || k === 'allowMultipleAllocations') { if (v) out[k] = v; }
    else out[k] = v;
  }
  return out;
}

// encodeSlice renders the internal object in `version` (with kind/apiVersion
// unless bare, as for list items).
function encodeSlice(version, o, { minor, bare = false } = {}) {
  const out = {};
  if (!bare) { out.kind = 'ResourceSlice'; out.apiVersion = `resource.k8s.io/${version}`; }
  out.metadata = encodeMeta(o.metadata);
  const s = o.spec;
  const spec = {
    driver: s.driver,
    pool: { name: s.pool.name, generation: s.pool.generation, resourceSliceCount: s.pool.resourceSliceCount },
  };
  if (version === 'v1beta1') {
    if (s.nodeName) spec.nodeName = s.nodeName;
    if (s.nodeSelector !== undefined) spec.nodeSelector = s.nodeSelector;
    if (s.allNodes) spec.allNodes = true;
  } else {
    if (s.nodeName !== undefined) spec.nodeName = s.nodeName;
    if (s.nodeSelector !== undefined) spec.nodeSelector = s.nodeSelector;
    if (s.allNodes !== undefined) spec.allNodes = s.allNodes;
  }
  const devs = s.devices && s.devices.length ? s.devices : null;
  if (devs) {
    spec.devices = devs.map((d) => (version === 'v1beta1'
      ? { name: d.name, basic: encodeDeviceFields(d, version) }
      : { name: d.name, ...encodeDeviceFields(d, version) }));
  } else if (minor < 35) {
    spec.devices = null; // no omitempty on `devices` before 1.35
  }
  if (s.perDeviceNodeSelection !== undefined) spec.perDeviceNodeSelection = s.perDeviceNodeSelection;
  if (s.sharedCounters && s.sharedCounters.length) spec.sharedCounters = s.sharedCounters;
  if (version === 'v1' && s.partitionTypeAttribute) spec.partitionTypeAttribute = s.partitionTypeAttribute;
  if (version === 'v1' && s.skipNodeOperations && s.skipNodeOperations.length) spec.skipNodeOperations = s.skipNodeOperations;
  out.spec = spec;
  return out;
}

// bookmarkSlice is what a BOOKMARK carries: an empty ResourceSlice whose
// non-omitempty fields still show up as zero values.
function bookmarkSlice(version, rv, minor, annotations) {
  const meta = { resourceVersion: String(rv) };
  if (annotations) meta.annotations = annotations;
  return encodeSlice(version, {
    metadata: meta,
    spec: { driver: '', pool: { name: '', generation: 0, resourceSliceCount: 0 } },
  }, { minor });
}

// --- ResourceClaims (read-only through the API; written by the control API) --
// Internal claims are v1-shaped. v1beta1 differs only in spec requests
// (`exactly` inlined); status.allocation is the same in all three versions.

// Allocation result fields by the minor that added them: an older API
// server has no place to store them (it drops them, as unknown fields).
const RESULT_FIELD_MINOR = {
  tolerations: 33, bindingConditions: 34, bindingFailureConditions: 34, shareID: 34, consumedCapacity: 34,
};

function encodeAllocation(a, minor) {
  if (!a || !a.devices || !Array.isArray(a.devices.results) || minor === undefined) return a;
  const results = a.devices.results.map((r) => {
    const out = { ...r };
    for (const [k, m] of Object.entries(RESULT_FIELD_MINOR)) if (minor < m) delete out[k];
    return out;
  });
  return { ...a, devices: { ...a.devices, results } };
}

function encodeClaim(version, c, { bare = false, minor } = {}) {
  const out = {};
  if (!bare) { out.kind = 'ResourceClaim'; out.apiVersion = `resource.k8s.io/${version}`; }
  out.metadata = encodeMeta(c.metadata);
  const reqs = ((c.spec && c.spec.devices && c.spec.devices.requests) || []).map((r) => {
    if (version !== 'v1beta1' || !r.exactly) return r;
    const { exactly, ...rest } = r;
    return { ...rest, ...exactly };
  });
  const devices = {};
  if (reqs.length) devices.requests = reqs;
  for (const k of ['constraints', 'config']) if (c.spec && c.spec.devices && c.spec.devices[k]) devices[k] = c.spec.devices[k];
  out.spec = { devices };
  const st = c.status || {};
  const status = {};
  if (st.allocation) status.allocation = encodeAllocation(st.allocation, minor);
  if (st.reservedFor && st.reservedFor.length) status.reservedFor = st.reservedFor;
  if (st.devices && st.devices.length) status.devices = st.devices;
  out.status = status;
  return out;
}

module.exports = {
  VERSIONS, DecodeError, decodeSlice, encodeSlice, bookmarkSlice, decodeDeleteOptions, encodeClaim, encodeMeta,
  DEVICE_KEYS,
};
