'use strict';
// kp_claim_info(): every field of the claim a prepare hook may need, as the
// API server serves it (issue 25). The test driver's "info-*" claims dump
// what kp_claim_info() returned (CLAIMINFO lines, kp_testdriver.c
// claim_info_dump) and prepare one device per allocation result with its
// shareID: a shared-device driver written with the public header alone.
// Emulators as 1.37 (v1), 1.33 (v1beta2) and 1.32 (v1beta1): what an older
// API server cannot carry is reported absent, not silently empty.

const test = require('node:test');
const assert = require('node:assert/strict');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { makeRoot, withApi, until } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const NODE = 'node-1';
const ABSENT = { TOLERATIONS: 1, BINDING: 2, SHARE_ID: 4, CAPACITY: 8, ALLOCATION: 16 };

async function setup(t, { versions, kubeVersion }) {
  const { emu, drv } = await withApi(t, makeRoot(DRIVER), [], {}, { versions, kubeVersion, nodes: [NODE] });
  const kubelet = new KubeletSim({ registryDir: drv.root.registry, version: '1.37' }).start();
  t.after(() => kubelet.stop());
  await kubelet.waitForDriver(DRIVER);
  return { emu, drv, kubelet };
}

const childLines = (s) => s.split('\n').map((l) => l.replace(/^.*\] stderr: /, ''));

// The dump of claim name, reassembled from its chunks.
async function claimInfo(drv, name) {
  const last = await until(() => childLines(drv.stderr).find((l) => l.startsWith(`CLAIMINFO ${name} `) && /^CLAIMINFO \S+ \d+\$ /.test(l)));
  assert.ok(last);
  const parts = childLines(drv.stderr).filter((l) => l.startsWith(`CLAIMINFO ${name} `))
    .map((l) => /^CLAIMINFO \S+ (\d+)\$? (.*)$/.exec(l))
    .sort((a, b) => Number(a[1]) - Number(b[1]));
  return JSON.parse(parts.map((m) => m[2]).join(''));
}

const TOLERATIONS = [
  { key: 'example.com/unhealthy', operator: 'Equal', value: 'yes', effect: 'NoExecute', tolerationSeconds: 30 },
  { operator: 'Exists' },
];

function fullClaim(name) {
  const podUID = randomUUID();
  return {
    namespace: 'default', name, uid: randomUUID(),
    metadata: {
      labels: { app: 'trainer', tier: 'gpu' },
      annotations: { 'resource.kubernetes.io/pod-claim-name': 'gpu', 'example.com/note': 'hello' },
      managedFields: [{ manager: 'kube-scheduler', operation: 'Update', apiVersion: 'resource.k8s.io/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:allocation': {} } } }],
    },
    allocation: {
      results: [
        {
          request: 'gpu', driver: DRIVER, pool: NODE, device: 'dev-1', adminAccess: true,
          tolerations: TOLERATIONS,
          bindingConditions: ['example.com/attached'], bindingFailureConditions: ['example.com/failed'],
          shareID: randomUUID(),
          consumedCapacity: { memory: '1Gi', [`${DRIVER}/memory`]: '2Gi', cores: '500m', huge: '20E' },
        },
        { request: 'nic', driver: 'other.example.com', pool: 'p', device: 'x' },
        { request: 'multi/small', driver: DRIVER, pool: NODE, device: 'dev-2', consumedCapacity: { memory: '512Mi' } },
      ],
      config: [
        { source: 'FromClass', opaque: { driver: DRIVER, parameters: { mode: 'slow' } } },
        { source: 'FromClaim', requests: ['nic'], opaque: { driver: 'other.example.com', parameters: { x: 1 } } },
        { source: 'FromClaim', requests: ['gpu', 'multi'], opaque: { driver: DRIVER, parameters: { mode: 'fast' } } },
      ],
      nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [NODE] }] }] },
    },
    reservedFor: [{ resource: 'pods', name: 'trainer-0', uid: podUID }],
  };
}

const claimRef = (c) => ({ namespace: c.namespace, name: c.name, uid: c.uid });

test('kp_claim_info: every field of a v1 claim from a 1.37 API server; shareID returned to kubelet', async (t) => {
  const { emu, drv, kubelet } = await setup(t, { versions: ['v1'], kubeVersion: '1.37.0' });
  const c = fullClaim('info-full');
  emu.addClaim(c);
  const res = await kubelet.nodePrepareResources(DRIVER, [claimRef(c)]);
  const info = await claimInfo(drv, c.name);
  const r0 = c.allocation.results[0];
  assert.equal(info.namespace, 'default');
  assert.equal(info.name, c.name);
  assert.equal(info.uid, c.uid);
  assert.equal(info.api_version, 'resource.k8s.io/v1');
  assert.equal(info.absent, 0);
  assert.ok(info.struct_size >= 8 * 21, `struct_size ${info.struct_size}`);
  assert.equal(info.has_json_obj, true);
  assert.equal(info.same_again, true, 'the same info the second time');
  assert.equal(info.copy_null, true, 'a copy of the claim is not a claim of the call');
  // This driver's results only, in the claim's order, with their index.
  assert.equal(info.results.length, 2);
  const [a, b] = info.results;
  assert.deepEqual({ ...a, consumed_capacity: undefined, struct_size: undefined }, {
    request: 'gpu', base_request: 'gpu', subrequest: null, driver: DRIVER, pool: NODE, device: 'dev-1', admin_access: true,
    share_id: r0.shareID, index: 0,
    tolerations: [
      { key: 'example.com/unhealthy', operator: 'Equal', value: 'yes', effect: 'NoExecute', toleration_seconds: 30 },
      { key: '', operator: 'Exists', value: '', effect: '' },
    ],
    binding_conditions: ['example.com/attached'], binding_failure_conditions: ['example.com/failed'],
    capacity_lookup: { memory: '2Gi', qualified: '2Gi' },
    consumed_capacity: undefined, struct_size: undefined,
  });
  const cap = Object.fromEntries(a.consumed_capacity.map((q) => [q.name, q]));
  assert.deepEqual(cap.memory, { name: 'memory', quantity: '1Gi', value: 1073741824, milli_value: 1073741824000, overflow: false, milli_overflow: false, invalid: false });
  assert.deepEqual(cap[`${DRIVER}/memory`], { name: `${DRIVER}/memory`, quantity: '2Gi', value: 2147483648, milli_value: 2147483648000, overflow: false, milli_overflow: false, invalid: false });
  assert.deepEqual(cap.cores, { name: 'cores', quantity: '500m', value: 1, milli_value: 500, overflow: false, milli_overflow: false, invalid: false });
  // 20E is beyond int64: INT64_MAX (2^63 - 1, read by JSON.parse as 2^63).
  assert.equal(cap.huge.value, 2 ** 63);
  assert.equal(cap.huge.overflow, true);
  assert.equal(cap.huge.milli_overflow, true);
  assert.equal(cap.huge.invalid, false);
  assert.deepEqual({ ...b, consumed_capacity: undefined, struct_size: undefined }, {
    request: 'multi/small', base_request: 'multi', subrequest: 'small', driver: DRIVER, pool: NODE, device: 'dev-2',
    admin_access: false, share_id: null, index: 2, tolerations: [], binding_conditions: [], binding_failure_conditions: [],
    capacity_lookup: { memory: '512Mi', qualified: '512Mi' }, consumed_capacity: undefined, struct_size: undefined,
  });
  // Configs for this driver only, parsed.
  assert.deepEqual(info.configs, [
    { source: 'FromClass', requests: [], driver: DRIVER, parameters: '{"mode":"slow"}', parameters_json: { mode: 'slow' } },
    { source: 'FromClaim', requests: ['gpu', 'multi'], driver: DRIVER, parameters: '{"mode":"fast"}', parameters_json: { mode: 'fast' } },
  ]);
  assert.deepEqual(info.labels, c.metadata.labels);
  assert.deepEqual(info.annotations, c.metadata.annotations);
  assert.deepEqual(info.reserved_for, [{ api_group: '', resource: 'pods', name: 'trainer-0', uid: c.reservedFor[0].uid }]);
  assert.deepEqual(JSON.parse(info.node_selector), c.allocation.nodeSelector);
  // The claim as the API server returned it.
  assert.equal(info.json_matches, true);
  assert.equal(info.json.kind, 'ResourceClaim');
  assert.equal(info.json.apiVersion, 'resource.k8s.io/v1');
  assert.deepEqual(info.json.status.allocation.devices.results, c.allocation.results);
  assert.equal(info.json.metadata.resourceVersion, emu.getClaim('default', c.name).metadata.resourceVersion);
  // Without managedFields, which the API server did serve.
  assert.equal(emu.getClaim('default', c.name).metadata.managedFields.length, 1);
  assert.equal(info.json.metadata.managedFields, undefined);
  // The shared-device driver's answer: each device with the result's shareID.
  const devs = res.claims[c.uid].devices;
  assert.equal(devs.length, 2);
  assert.equal(devs[0].share_id, r0.shareID);
  assert.ok(!devs[1].share_id, 'no shareID where the result had none');
  // Unprepare: no look-up, so only the claim's names (reported absent).
  await kubelet.nodeUnprepareResources(DRIVER, [claimRef(c)]);
  const u = await until(() => childLines(drv.stderr).find((l) => l.startsWith(`UNPREPINFO ${c.name} `)));
  assert.equal(u, `UNPREPINFO ${c.name} ${c.uid} absent=${ABSENT.TOLERATIONS | ABSENT.BINDING | ABSENT.SHARE_ID | ABSENT.CAPACITY | ABSENT.ALLOCATION} json=no results=0`);
});

for (const [versions, kubeVersion, api, absent] of [
  [['v1beta2', 'v1beta1'], '1.33.0', 'resource.k8s.io/v1beta2', ABSENT.BINDING | ABSENT.SHARE_ID | ABSENT.CAPACITY],
  [['v1beta1'], '1.32.0', 'resource.k8s.io/v1beta1', ABSENT.TOLERATIONS | ABSENT.BINDING | ABSENT.SHARE_ID | ABSENT.CAPACITY],
]) {
  test(`kp_claim_info from a ${kubeVersion} API server (${api}): fields it cannot carry are reported absent`, async (t) => {
    const { emu, drv, kubelet } = await setup(t, { versions, kubeVersion });
    const c = fullClaim('info-old');
    emu.addClaim(c);
    const res = await kubelet.nodePrepareResources(DRIVER, [claimRef(c)]);
    assert.equal(res.claims[c.uid].devices.length, 2);
    const info = await claimInfo(drv, c.name);
    assert.equal(info.api_version, api);
    assert.equal(info.absent, absent);
    const a = info.results[0];
    assert.equal(a.share_id, null);
    assert.deepEqual(a.consumed_capacity, []);
    assert.deepEqual(a.binding_conditions, []);
    assert.equal(a.tolerations.length, kubeVersion === '1.33.0' ? 2 : 0);
    assert.equal(a.admin_access, true);
    assert.deepEqual(info.labels, c.metadata.labels);
    assert.equal(info.json.apiVersion, api);
  });
}

test('kp_claim_info on v1 with none of the newer fields set: nothing absent, all empty', async (t) => {
  const { emu, drv, kubelet } = await setup(t, { versions: ['v1'], kubeVersion: '1.38.0' });
  const c = { namespace: 'default', name: 'info-bare', uid: randomUUID(), allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-9' }] } };
  emu.addClaim(c);
  await kubelet.nodePrepareResources(DRIVER, [claimRef(c)]);
  const info = await claimInfo(drv, c.name);
  assert.equal(info.absent, 0);
  assert.deepEqual(info.labels, {});
  assert.deepEqual(info.reserved_for, []);
  assert.equal(info.node_selector, null);
  assert.equal(info.results[0].subrequest, null);
  assert.deepEqual(info.results[0].capacity_lookup, { memory: null, qualified: null });
});
