'use strict';
// Feature gates of the emulated server, and the registry strategy's
// dropDisabledFields: a field behind a gate that is off is silently dropped
// on create and update, unless the stored object already uses it (then it
// is kept, as upstream's "in use" rule). Every gate defaults to on; tests
// turn some off with the `featureGates` option or setFeatureGates().

const GATES = [
  'DRADeviceTaints', 'DRAPartitionableDevices', 'DRADeviceBindingConditions',
  'DRAConsumableCapacity', 'DRAListTypeAttributes', 'DRANodeAllocatableResources',
  'DRAPartitionableDevicesType', 'DRAOptionalNodeOperations',
];

const LIST_KEYS = ['ints', 'bools', 'strings', 'versions'];
const isList = (a) => a && LIST_KEYS.some((k) => a[k] !== undefined);
const devs = (o) => (o && o.spec && o.spec.devices) || [];

// What each gate covers: uses(obj) says whether an object uses it, drop(obj)
// removes it.
const RULES = {
  DRADeviceTaints: {
    uses: (o) => devs(o).some((d) => d.taints && d.taints.length),
    drop: (o) => devs(o).forEach((d) => { delete d.taints; }),
  },
  DRAPartitionableDevices: {
    uses: (o) => !!(o.spec.sharedCounters && o.spec.sharedCounters.length) || o.spec.perDeviceNodeSelection !== undefined ||
      devs(o).some((d) => (d.consumesCounters && d.consumesCounters.length) || d.nodeName !== undefined ||
        d.nodeSelector !== undefined || d.allNodes !== undefined),
    drop: (o) => {
      delete o.spec.sharedCounters;
      delete o.spec.perDeviceNodeSelection;
      devs(o).forEach((d) => { delete d.consumesCounters; delete d.nodeName; delete d.nodeSelector; delete d.allNodes; });
    },
  },
  DRADeviceBindingConditions: {
    uses: (o) => devs(o).some((d) => d.bindsToNode !== undefined || (d.bindingConditions && d.bindingConditions.length) ||
      (d.bindingFailureConditions && d.bindingFailureConditions.length)),
    drop: (o) => devs(o).forEach((d) => { delete d.bindsToNode; delete d.bindingConditions; delete d.bindingFailureConditions; }),
  },
  DRAConsumableCapacity: {
    uses: (o) => devs(o).some((d) => d.allowMultipleAllocations !== undefined ||
      Object.values(d.capacity || {}).some((c) => c.requestPolicy !== undefined)),
    drop: (o) => devs(o).forEach((d) => {
      delete d.allowMultipleAllocations;
      for (const c of Object.values(d.capacity || {})) delete c.requestPolicy;
    }),
  },
  DRAListTypeAttributes: {
    uses: (o) => devs(o).some((d) => Object.values(d.attributes || {}).some(isList)),
    drop: (o) => devs(o).forEach((d) => {
      for (const [k, a] of Object.entries(d.attributes || {})) if (isList(a)) delete d.attributes[k];
    }),
  },
  DRANodeAllocatableResources: {
    uses: (o) => devs(o).some((d) => d.nodeAllocatableResources !== undefined),
    drop: (o) => devs(o).forEach((d) => { delete d.nodeAllocatableResources; }),
  },
  DRAPartitionableDevicesType: {
    uses: (o) => o.spec.partitionTypeAttribute !== undefined,
    drop: (o) => { delete o.spec.partitionTypeAttribute; },
  },
  DRAOptionalNodeOperations: {
    uses: (o) => o.spec.skipNodeOperations !== undefined,
    drop: (o) => { delete o.spec.skipNodeOperations; },
  },
};

function checkGates(g) {
  for (const k of Object.keys(g || {})) if (!GATES.includes(k)) throw new Error(`unknown feature gate ${k}`);
}

// dropDisabledFields(o, old, gates): o (internal form) loses what a disabled
// gate covers unless old (the stored object on update) uses it.
function dropDisabledFields(o, old, gates) {
  for (const g of GATES) {
    if (!gates || gates[g] !== false) continue;
    if (old && RULES[g].uses(old)) continue;
    RULES[g].drop(o);
  }
}

module.exports = { GATES, checkGates, dropDisabledFields };
