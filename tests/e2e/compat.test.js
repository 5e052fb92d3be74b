'use strict';
// The compatibility matrix (issue 11): every kubelet version the simulator
// imitates (1.31-1.38) against the plugin (kp_testdriver) in the default
// configuration and with v1alpha4 enabled. Each run records what the
// kubelet picked and what worked, asserts it against EXPECT, and renders
// docs/compatibility.md from the observations. With KP_WRITE_COMPAT=1 the
// file is written; otherwise the committed file must equal what this run
// observed, so the page cannot go stale.
//
// One plugin per configuration serves all eight kubelets, one after the
// other (each simulated kubelet registers it afresh).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { KubeletSim, KUBELET_VERSIONS, BEHAVIOUR } = require('../kubelet-sim');
const { ROOT, makeRoot, TestDriver, until } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const DOC = path.join(ROOT, 'docs', 'compatibility.md');
const FAST = { reconcileMs: 100, rescanMs: 100, retryInitialMs: 100 };

const CONFIGS = [
  { id: 'default', title: 'default configuration', heading: 'Default configuration', args: [] },
  { id: 'v1alpha4', title: 'v1alpha4-enabled configuration', heading: 'With v1alpha4 enabled (`kp_node_v1alpha4(opts, 1)`)',
    args: ['--v1alpha4'] },
];

// What each kubelet must pick (upstream-2026.md §4.1, §4.5). null: the
// kubelet refuses the registration.
const EXPECT = {
  default: {
    '1.31': { api: null, health: null },
    '1.32': { api: 'v1beta1', health: null },
    '1.33': { api: 'v1beta1', health: null },
    '1.34': { api: 'v1', health: 'v1alpha1.DRAResourceHealth' },
    '1.35': { api: 'v1', health: 'v1alpha1.DRAResourceHealth' },
    '1.36': { api: 'v1', health: 'v1alpha1.DRAResourceHealth' },
    '1.37': { api: 'v1', health: 'v1.DRAResourceHealth' },
    '1.38': { api: 'v1', health: 'v1.DRAResourceHealth' },
  },
  v1alpha4: {
    '1.31': { api: 'v1alpha4', health: null },
    '1.32': { api: 'v1beta1', health: null },
    '1.33': { api: 'v1beta1', health: null },
    '1.34': { api: 'v1', health: 'v1alpha1.DRAResourceHealth' },
    '1.35': { api: 'v1', health: 'v1alpha1.DRAResourceHealth' },
    '1.36': { api: 'v1', health: 'v1alpha1.DRAResourceHealth' },
    '1.37': { api: 'v1', health: 'v1.DRAResourceHealth' },
    '1.38': { api: 'v1', health: 'v1.DRAResourceHealth' },
  },
};

const observed = {};

// One simulated kubelet against the running plugin. 1.34 and 1.35 run
// with the ResourceHealthStatus gate on (off by default there), so the
// matrix shows what their health client does once enabled.
async function runKubelet(root, drv, version) {
  const healthGate = BEHAVIOUR[version].healthGate || BEHAVIOUR[version].dialAtRegistration;
  const sim = new KubeletSim({ registryDir: root.registry, version, ...FAST, healthStream: healthGate }).start();
  const out = { version, gateDefault: BEHAVIOUR[version].healthGate };
  try {
    const first = await Promise.race([
      sim.waitForDriver(DRIVER, 10000).then((inst) => ({ inst })),
      sim.waitFor('registrationFailed', () => true, 10000).then((e) => ({ failed: e })),
    ]);
    if (first.failed) {
      out.registered = false;
      out.error = first.failed.error;
      return out;
    }
    const inst = first.inst;
    out.registered = true;
    out.api = inst.api;
    out.advertised = inst.supportedVersions;
    // Connection timing: dialled at registration, or only by the first call.
    if (BEHAVIOUR[version].dialAtRegistration) {
      await until(() => sim.getDriver(DRIVER).connected, 5000);
      out.connection = 'at registration';
    } else {
      out.connection = inst.client === null ? 'at the first call' : 'before any call (unexpected)';
    }
    const c = { namespace: 'default', name: `claim-${version.replace('.', '-')}`, uid: randomUUID() };
    const prep = await sim.nodePrepareResources(DRIVER, [c]).then((r) => r, (e) => e);
    out.prepare = prep instanceof Error ? `fails: ${prep.message}` : 'ok';
    if (!(prep instanceof Error)) {
      const devs = prep.claims[c.uid].devices;
      assert.equal(devs.length, 1);
      assert.equal(devs[0].device_name, c.name);
      assert.deepEqual(devs[0].cdi_device_ids, [`${DRIVER}/test=${c.name}`]);
    }
    const unp = await sim.nodeUnprepareResources(DRIVER, [c]).then((r) => r, (e) => e);
    out.unprepare = unp instanceof Error ? `fails: ${unp.message}` : 'ok';
    if (healthGate && (BEHAVIOUR[version].healthAll || inst.healthService)) {
      // The complete list first: the device reported before this kubelet came.
      const d = await until(() => {
        const i = sim.getDriver(DRIVER);
        return i && i.health && i.health.length ? i : null;
      }, 10000);
      out.health = d.healthServiceUsed;
      assert.equal(d.health[0].device.device_name, 'dev-0');
      assert.equal(d.health[0].health, 'HEALTHY');
      out.healthErrors = sim.healthErrors;
    } else {
      out.health = null;
    }
    return out;
  } finally {
    await sim.stop();
  }
}

for (const config of CONFIGS) {
  test(`kubelets ${KUBELET_VERSIONS[0]}-${KUBELET_VERSIONS.at(-1)} against the ${config.title}`, async (t) => {
    const root = makeRoot(DRIVER);
    const drv = new TestDriver(root, ['--kubelet-root-dir', root.dir, ...config.args]);
    t.after(async () => {
      drv.kill();
      await drv.exited;
      root.cleanup();
    });
    await drv.ready();
    assert.equal(await drv.command('health pool-a dev-0 1 0 fine', 'health'), 'health KP_OK ');
    observed[config.id] = {};
    for (const version of KUBELET_VERSIONS) {
      const o = await runKubelet(root, drv, version);
      observed[config.id][version] = o;
      const want = EXPECT[config.id][version];
      if (want.api === null) {
        assert.equal(o.registered, false, `${version} must refuse the registration`);
        assert.match(o.error, /None of the versions specified .* are supported/);
        continue;
      }
      assert.equal(o.registered, true, `${version}: ${o.error}`);
      assert.equal(o.api, want.api, `${version} picks ${want.api}`);
      assert.equal(o.health, want.health, `${version} health service`);
      assert.equal(o.prepare, 'ok', `${version} prepare`);
      assert.equal(o.unprepare, 'ok', `${version} unprepare`);
      assert.equal(o.connection, BEHAVIOUR[version].dialAtRegistration ? 'at registration' : 'at the first call');
      if (o.health) assert.equal(o.healthErrors, 0, `${version}: the health stream never failed`);
    }
  });
}

// ---- the page ------------------------------------------------------------------

const API_NAMES = {
  v1: '`v1.DRAPlugin`',
  v1beta1: '`v1beta1.DRAPlugin`',
  v1alpha4: '`v1alpha3.Node` (v1alpha4)',
};

function cell(o) {
  if (!o.registered) return { api: 'refused', health: '—', works: 'nothing (not registered)' };
  let health = o.health ? `\`${o.health}\`` : 'none';
  if (o.health && !o.gateDefault) health += ' (gate `ResourceHealthStatus` on; off by default)';
  if (!o.health && BEHAVIOUR[o.version].dialAtRegistration === false) health = 'none (no health client)';
  const works = [
    o.prepare === 'ok' ? 'prepare' : null,
    o.unprepare === 'ok' ? 'unprepare' : null,
    o.health ? 'health' : null,
  ].filter(Boolean).join(', ');
  return { api: API_NAMES[o.api], health, works };
}

function yes(b) { return b ? 'yes' : 'no'; }

function render() {
  const lines = [];
  lines.push('# Compatibility matrix');
  lines.push('');
  lines.push('<!-- Generated by tests/e2e/compat.test.js from what it observed: do not edit.');
  lines.push('     Regenerate with KP_WRITE_COMPAT=1 node --test tests/e2e/compat.test.js -->');
  lines.push('');
  lines.push('Each kubelet version that `tests/kubelet-sim` imitates, against the plugin');
  lines.push('(`tests/e2e/bin/kp_testdriver.c`, health on as by default, one device reported');
  lines.push('healthy) in two configurations. "Works" lists what the run did successfully:');
  lines.push('a NodePrepareResources and a NodeUnprepareResources call, and a health stream');
  lines.push('that delivered the reported device. The kubelets are simulated from upstream\'s');
  lines.push('code and issue threads (`tests/kubelet-sim/README.md`), not real kubelets.');
  for (const config of CONFIGS) {
    lines.push('');
    lines.push(`## ${config.heading}`);
    lines.push('');
    const first = Object.values(observed[config.id]).find((o) => o.registered);
    lines.push(`supported_versions: ${first.advertised.map((v) => `\`${v}\``).join(', ')}`);
    lines.push('');
    lines.push('| kubelet | DRA API | health service | DRA connection | works |');
    lines.push('|---|---|---|---|---|');
    for (const version of KUBELET_VERSIONS) {
      const o = observed[config.id][version];
      const c = cell(o);
      lines.push(`| ${version} | ${c.api} | ${c.health} | ${o.registered ? o.connection : '—'} | ${c.works} |`);
    }
  }
  lines.push('');
  lines.push('## Kubelet behaviour simulated per version');
  lines.push('');
  lines.push('| kubelet | instances per endpoint (rolling update) | calls go to | registration failure retried | health stream for every plugin, 5 s retries | endpoint inside the kubelet root required |');
  lines.push('|---|---|---|---|---|---|');
  for (const version of KUBELET_VERSIONS) {
    const b = BEHAVIOUR[version];
    lines.push(`| ${version} | ${yes(b.perEndpoint)} | ${b.preferConnected ? 'newest connected instance' : 'newest registered instance'} | ` +
      `${yes(b.retryRegistration)} | ${b.healthAll ? (b.healthGate ? 'yes (gate on by default)' : 'yes, with the gate') : 'no'} | ${yes(b.checkEndpoint)} |`);
  }
  lines.push('');
  lines.push('Notes:');
  lines.push('');
  lines.push('- 1.31 accepts only a version string such as `1.0.0`: enable v1alpha4');
  lines.push('  (`kp_node_v1alpha4()`) for 1.31 nodes. 1.32 and 1.33 choose by their own order');
  lines.push('  (v1beta1 first); 1.34 and later take the first DRA service in the plugin\'s order,');
  lines.push('  which is `v1.DRAPlugin`.');
  lines.push('- 1.34-1.36 open the v1alpha1 health stream for every plugin, whatever it');
  lines.push('  advertises, and retry every 5 s after it ends; the plugin keeps the stream');
  lines.push('  open (also with health off), so a 1.36 kubelet logs no error for it');
  lines.push('  (`tests/e2e/health.test.js`). 1.37 and 1.38 open only an advertised health');
  lines.push('  service and prefer `v1.DRAResourceHealth`.');
  lines.push('- 1.38 behaves as 1.37 for the plugin (its gate DynamicResourceAllocation is');
  lines.push('  gone: DRA is always on).');
  lines.push('- 1.37 and later refuse an endpoint outside their root directory: keep the');
  lines.push('  plugin data directory under the kubelet root (`kp_kubelet_root_dir()` refuses');
  lines.push('  one outside it at set time).');
  lines.push('');
  return lines.join('\n');
}

test('docs/compatibility.md is what this run observed', () => {
  for (const config of CONFIGS) {
    assert.ok(observed[config.id] && Object.keys(observed[config.id]).length === KUBELET_VERSIONS.length,
      `the ${config.title} run completed`);
  }
  const text = render();
  if (process.env.KP_WRITE_COMPAT === '1') {
    fs.writeFileSync(DOC, text);
    return;
  }
  const committed = fs.existsSync(DOC) ? fs.readFileSync(DOC, 'utf8') : '';
  assert.equal(committed, text,
    'docs/compatibility.md differs from what this run observed; regenerate with KP_WRITE_COMPAT=1 ' +
    'node --test tests/e2e/compat.test.js and review the diff');
});
