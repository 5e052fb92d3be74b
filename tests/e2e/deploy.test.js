'use strict';
// deploy/: the kustomize base, components and the example overlay render
// (kubectl kustomize, kustomize v5) for the example driver and for a
// renamed driver with other directories; the rendered objects validate
// against Kubernetes' OpenAPI schemas (npm kubernetes-models, offline:
// tests/e2e/lib/k8s-schema.mjs says which kinds are checked structurally
// instead) and hold what a DRA kubelet plugin needs; the seccomp profile
// and the SeccompProfile object are what the code exports today
// (regenerate: build/tools/kubeletplugin-policy -o deploy/seccomp/kubeletplugin.json
// and ... -f spo -o deploy/components/seccomp-spo/seccompprofile.yaml).
// YAML is parsed by Debian's /usr/bin/python3 with python3-yaml.

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, BUILD } = require('./lib/plugin');

const DEPLOY = path.join(ROOT, 'deploy');
const PY = '/usr/bin/python3';
const POLICY = path.join(BUILD, 'tools', 'kubeletplugin-policy');
const PLACEHOLDER = 'driver.example.com';

function parseYaml(text) {
  const out = execFileSync(PY, ['-c',
    'import json, sys, yaml\nprint(json.dumps([d for d in yaml.safe_load_all(sys.stdin) if d is not None]))'],
  { input: text });
  return JSON.parse(out.toString());
}
const loadYaml = (file) => parseYaml(fs.readFileSync(file));

function yamlFiles(dir = DEPLOY) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(e.name) ? [p] : [];
  }).sort();
}

// A kubectl (or kustomize) whose kustomize has components and
// replacements: v5 (kubectl 1.27 and later). Debian 12's kubectl 1.20
// embeds kustomize v2.0.3, which has neither: tools/kubectl.sh (run by
// make deps) puts upstream's kubectl 1.35 at .cache/kubectl/kubectl.
function findKustomize() {
  const cands = [process.env.KP_KUBECTL, path.join(ROOT, '.cache', 'kubectl', 'kubectl'),
    'kubectl', 'kustomize'].filter(Boolean);
  const seen = [];
  for (const c of cands) {
    const isKustomize = path.basename(c) === 'kustomize';
    const r = spawnSync(c, isKustomize ? ['version'] : ['version', '--client'], { encoding: 'utf8' });
    if (r.error) { seen.push(`${c}: not found`); continue; }
    const m = /(?:Kustomize Version: |^)v?(\d+)\.(\d+)/m.exec(r.stdout);
    if (m && Number(m[1]) >= 5) return { cmd: c, args: isKustomize ? ['build'] : ['kustomize'], version: m[0] };
    seen.push(`${c}: kustomize ${m ? m[0] : 'version unknown'}`);
  }
  return { missing: `no kustomize v5 (kubectl 1.27+ or kustomize; Debian 12's kubectl 1.20 has kustomize v2.0.3, without components): ${seen.join('; ')}` };
}
const KUSTOMIZE = findKustomize();
const needKustomize = KUSTOMIZE.missing ? { skip: KUSTOMIZE.missing } : {};

function render(dir) {
  const r = spawnSync(KUSTOMIZE.cmd, [...KUSTOMIZE.args, dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${KUSTOMIZE.cmd} kustomize ${dir}: ${r.stderr}`);
  return parseYaml(r.stdout);
}
const byKind = (docs, kind) => docs.filter((d) => d.kind === kind);
const one = (docs, kind) => {
  const l = byKind(docs, kind);
  assert.equal(l.length, 1, `one ${kind}`);
  return l[0];
};

// A driver of someone else's, as a new user writes it: one overlay file.
function renamedOverlay({ ns = 'acme-gpu', name = 'gpu-driver', driver = 'gpu.acme.example',
  kubeletDir = '/var/snap/microk8s/common/var/lib/kubelet', cdiDir = '/etc/cdi',
  components = ['deviceclass-v1beta1'] } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-overlay-'));
  const rel = (p) => path.relative(dir, path.join(DEPLOY, p));
  fs.writeFileSync(path.join(dir, 'kustomization.yaml'), `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${ns}
resources:
- ${rel('base')}
components:
${components.map((c) => `- ${rel(`components/${c}`)}\n`).join('')}configMapGenerator:
- name: kubeletplugin-driver
  behavior: merge
  literals:
  - driverName=${driver}
  - name=${name}
  - kubeletDir=${kubeletDir}
  - cdiDir=${cdiDir}
images:
- name: kubeletplugin-driver
  newName: registry.acme.example/${name}
  newTag: "2.1"
transformers:
- ${rel('names')}
`);
  return dir;
}

// What every rendering must hold, whatever the names.
function checkDeployment(docs, { driver, name, ns, kubeletDir, cdiDir, image }) {
  const text = JSON.stringify(docs);
  assert.ok(!text.includes(PLACEHOLDER), `placeholder ${PLACEHOLDER} left in the output`);
  assert.ok(!text.includes('kubeletplugin-driver'), 'placeholder name kubeletplugin-driver left in the output');
  assert.equal(byKind(docs, 'ConfigMap').length, 0, 'the parameters ConfigMap is local-config');

  const nsObj = one(docs, 'Namespace');
  assert.equal(nsObj.metadata.name, ns);
  assert.equal(nsObj.metadata.labels['pod-security.kubernetes.io/enforce'], 'privileged');
  const sa = one(docs, 'ServiceAccount');
  assert.equal(sa.metadata.namespace, ns);
  assert.equal(sa.metadata.name, name, 'the service account is named after the driver');

  const ds = one(docs, 'DaemonSet');
  assert.equal(ds.metadata.namespace, ns);
  assert.equal(ds.metadata.name, name);
  const label = { 'app.kubernetes.io/name': name };
  assert.deepEqual(ds.spec.selector.matchLabels, label);
  assert.deepEqual(ds.spec.template.metadata.labels, label);
  assert.deepEqual(ds.metadata.labels, label);
  const pod = ds.spec.template.spec;
  const [c] = pod.containers;
  assert.equal(c.image, image);
  assert.equal(pod.priorityClassName, 'system-node-critical');
  assert.equal(pod.serviceAccountName, sa.metadata.name);
  const env = Object.fromEntries(c.env.filter((e) => 'value' in e).map((e) => [e.name, e.value]));
  assert.deepEqual(env, { DRIVER_NAME: driver, KUBELET_DIR: kubeletDir, CDI_DIR: cdiDir });
  assert.equal(c.env.find((e) => e.name === 'NODE_NAME').valueFrom.fieldRef.fieldPath, 'spec.nodeName');
  // Rolling updates: the pod UID for kp_rolling_update, and a surge.
  assert.equal(c.env.find((e) => e.name === 'POD_UID').valueFrom.fieldRef.fieldPath, 'metadata.uid');
  assert.deepEqual(ds.spec.updateStrategy.rollingUpdate, { maxSurge: 1, maxUnavailable: 0 });
  for (const a of ['--driver-name=$(DRIVER_NAME)', '--in-cluster', '--kubelet-dir=$(KUBELET_DIR)', '--cdi-dir=$(CDI_DIR)']) {
    assert.ok(c.args.includes(a), `args: ${a}`);
  }
  const host = Object.fromEntries(pod.volumes.filter((v) => v.hostPath).map((v) => [v.name, v.hostPath.path]));
  const mounts = Object.fromEntries(c.volumeMounts.map((m) => [m.name, m.mountPath]));
  assert.deepEqual(host, {
    'plugins-registry': `${kubeletDir}/plugins_registry`,
    'plugin-dir': `${kubeletDir}/plugins/${driver}`,
    cdi: cdiDir,
    // The nodeserver's own state directory (kp_sandbox_state_dir), named
    // after the driver, outside the hidden kubelet dirs.
    state: `/var/lib/${driver}`,
  });
  assert.ok(c.args.includes('--state-dir=/var/lib/$(DRIVER_NAME)'), 'args: --state-dir');
  for (const [n, p] of Object.entries(host)) assert.equal(mounts[n], p, `${p} mounted at the same path`);
  const sc = c.securityContext;
  assert.notEqual(sc.privileged, true, 'a privileged pod would run unconfined');
  assert.equal(sc.readOnlyRootFilesystem, true);
  assert.deepEqual(sc.capabilities.drop, ['ALL']);
  assert.equal(sc.seccompProfile.type, 'Localhost');

  const role = one(docs, 'ClusterRole');
  const rule = (group, res) => role.rules.find((r) => r.apiGroups.includes(group) && r.resources.includes(res));
  assert.deepEqual(rule('resource.k8s.io', 'resourceslices').verbs.slice().sort(),
    ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
  assert.deepEqual(rule('', 'nodes').verbs, ['get']);
  assert.ok(rule('resource.k8s.io', 'resourceclaims').verbs.includes('get'));
  assert.ok(!role.rules.some((r) => r.verbs.includes('deletecollection')));
  assert.equal(role.metadata.name, name, 'cluster-scoped names follow the driver');
  const binding = one(docs, 'ClusterRoleBinding');
  assert.equal(binding.metadata.name, name);
  assert.equal(binding.roleRef.name, role.metadata.name);
  assert.deepEqual(binding.subjects[0], { kind: 'ServiceAccount', name: sa.metadata.name, namespace: ns });

  const vap = one(docs, 'ValidatingAdmissionPolicy');
  assert.equal(vap.metadata.name, name);
  assert.equal(vap.metadata.namespace, undefined, 'cluster-scoped');
  assert.equal(vap.spec.failurePolicy, 'Fail');
  const rr = vap.spec.matchConstraints.resourceRules[0];
  assert.deepEqual(rr.resources, ['resourceslices']);
  assert.deepEqual(rr.operations.slice().sort(), ['CREATE', 'DELETE', 'UPDATE']);
  assert.deepEqual(rr.apiVersions.slice().sort(), ['v1', 'v1beta1', 'v1beta2']);
  assert.equal(vap.spec.matchConditions[0].expression,
    `request.userInfo.username == "system:serviceaccount:" + "${ns}" + ":" + "${sa.metadata.name}"`);
  const vars = Object.fromEntries(vap.spec.variables.map((v) => [v.name, v.expression]));
  assert.match(vars.userNodeName, /authentication\.kubernetes\.io\/node-name/);
  assert.match(vars.objectNodeName, /request\.operation == "DELETE" \? oldObject : object/);
  assert.equal(vars.driverName, JSON.stringify(driver), 'the policy binds the slices to this driver');
  const checks = vap.spec.validations.map((x) => x.expression.replace(/\s+/g, ' '));
  assert.equal(checks.length, 3);
  assert.ok(checks.includes('variables.userNodeName == variables.objectNodeName'), checks.join(' | '));
  assert.ok(checks.includes('(request.operation == "DELETE" ? oldObject : object).spec.driver == '
    + 'variables.driverName && (request.operation != "UPDATE" || oldObject.spec.driver == '
    + 'variables.driverName)'), `spec.driver bound: ${checks.join(' | ')}`);
  const vb = one(docs, 'ValidatingAdmissionPolicyBinding');
  assert.equal(vb.metadata.name, name);
  assert.equal(vb.metadata.namespace, undefined, 'cluster-scoped');
  assert.equal(vb.spec.policyName, vap.metadata.name);
  assert.deepEqual(vb.spec.validationActions, ['Deny']);

  const dc = one(docs, 'DeviceClass');
  assert.equal(dc.metadata.name, driver);
  assert.equal(dc.metadata.namespace, undefined, 'cluster-scoped');
  assert.equal(dc.spec.selectors[0].cel.expression, `device.driver == "${driver}"`);
  return { ds, c, dc };
}

async function validateAll(docs) {
  const { validate, hasSchema } = await import('./lib/k8s-schema.mjs');
  const problems = [];
  const schema = [];
  for (const d of docs) {
    for (const p of validate(d)) problems.push(`${d.apiVersion} ${d.kind} ${d.metadata && d.metadata.name}: ${p}`);
    if (hasSchema(d)) schema.push(d.kind);
  }
  assert.deepEqual(problems, []);
  return schema;
}

test('every YAML file in deploy/ parses', () => {
  assert.ok(fs.existsSync(PY), `${PY} missing`);
  try {
    execFileSync(PY, ['-c', 'import yaml']);
  } catch {
    assert.fail('python3-yaml is missing: run tools/deps.sh');
  }
  const files = yamlFiles();
  for (const f of ['base/kustomization.yaml', 'base/daemonset.yaml', 'names/replacements.yaml',
    'examples/pci-driver/kustomization.yaml', 'components/seccomp-spo/seccompprofile.yaml']) {
    assert.ok(files.includes(path.join(DEPLOY, f)), `deploy/${f}`);
  }
  for (const f of files) {
    const docs = loadYaml(f);
    assert.ok(docs.length >= 1, `${f}: no documents`);
    for (const d of docs) assert.ok(d.apiVersion && d.kind, `${f}: a document without apiVersion/kind`);
  }
});

test('the driver name is written in one place', () => {
  // Outside the base's placeholders, only the example overlay (and its
  // example pod) names the example driver.
  const named = yamlFiles().filter((f) => fs.readFileSync(f, 'utf8').includes('pci.example.com'))
    .map((f) => path.relative(DEPLOY, f));
  assert.deepEqual(named, ['examples/pci-driver/example-pod.yaml', 'examples/pci-driver/kustomization.yaml']);
});

test('the example overlay renders, validates and deploys the example driver', needKustomize, async () => {
  const docs = render(path.join(DEPLOY, 'examples', 'pci-driver'));
  const { c, ds } = checkDeployment(docs, {
    driver: 'pci.example.com', name: 'pci-driver', ns: 'dra-pci-driver', kubeletDir: '/var/lib/kubelet',
    cdiDir: '/var/run/cdi', image: 'localhost/kubeletplugin/pci-driver:0.1.0',
  });
  assert.equal(one(docs, 'DeviceClass').apiVersion, 'resource.k8s.io/v1');
  assert.ok(c.args.includes('--rescan=60'));
  assert.deepEqual(ds.spec.template.spec.nodeSelector, { 'example.com/pci-driver': 'true' });
  // The Security Profiles Operator's profile, and the path it installs it at.
  const sp = one(docs, 'SeccompProfile');
  assert.equal(sp.metadata.namespace, 'dra-pci-driver');
  assert.equal(sp.metadata.name, 'pci-driver');
  assert.equal(c.securityContext.seccompProfile.localhostProfile,
    `operator/dra-pci-driver/${sp.metadata.name}.json`);
  const schema = await validateAll(docs);
  for (const k of ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'DaemonSet', 'DeviceClass',
    'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'NetworkPolicy']) {
    assert.ok(schema.includes(k), `${k} validated against its OpenAPI schema`);
  }
});

test('a renamed driver with other directories renders and validates from one overlay file', needKustomize, async (t) => {
  const dir = renamedOverlay();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const docs = render(dir);
  const { c } = checkDeployment(docs, {
    driver: 'gpu.acme.example', name: 'gpu-driver', ns: 'acme-gpu', kubeletDir: '/var/snap/microk8s/common/var/lib/kubelet',
    cdiDir: '/etc/cdi', image: 'registry.acme.example/gpu-driver:2.1',
  });
  assert.equal(one(docs, 'DeviceClass').apiVersion, 'resource.k8s.io/v1beta1');
  // Without the seccomp-spo component: the profile file on each node.
  assert.equal(byKind(docs, 'SeccompProfile').length, 0);
  assert.equal(c.securityContext.seccompProfile.localhostProfile, 'gpu-driver.json', '<kubeletDir>/seccomp/<name>.json');
  await validateAll(docs);
});

// Every reference between the objects of one rendering resolves to an
// object of the same rendering.
function checkReferences(docs) {
  const find = (kind, name, ns) => docs.find((d) => d.kind === kind && d.metadata.name === name &&
    (ns === undefined || d.metadata.namespace === ns));
  const ds = one(docs, 'DaemonSet');
  const ns = ds.metadata.namespace;
  assert.ok(find('Namespace', ns), `Namespace ${ns}`);
  assert.ok(find('ServiceAccount', ds.spec.template.spec.serviceAccountName, ns), 'serviceAccountName resolves');
  const crb = one(docs, 'ClusterRoleBinding');
  assert.ok(find('ClusterRole', crb.roleRef.name), 'roleRef resolves');
  for (const s of crb.subjects) assert.ok(find('ServiceAccount', s.name, s.namespace), `subject ${s.namespace}/${s.name}`);
  const vb = one(docs, 'ValidatingAdmissionPolicyBinding');
  const vap = find('ValidatingAdmissionPolicy', vb.spec.policyName);
  assert.ok(vap, 'policyName resolves');
  const m = /^request\.userInfo\.username == "system:serviceaccount:" \+ "([^"]+)" \+ ":" \+ "([^"]+)"$/
    .exec(vap.spec.matchConditions[0].expression);
  assert.ok(m && find('ServiceAccount', m[2], m[1]), `the policy's user is the plugin's service account: ${vap.spec.matchConditions[0].expression}`);
  const sel = ds.spec.selector.matchLabels;
  for (const [k, v] of Object.entries(sel)) assert.equal(ds.spec.template.metadata.labels[k], v, 'the selector selects the pods');
  for (const np of byKind(docs, 'NetworkPolicy')) {
    assert.deepEqual(np.spec.podSelector.matchLabels, sel, 'the NetworkPolicy selects exactly the plugin\'s pods');
  }
  const sc = ds.spec.template.spec.containers[0].securityContext.seccompProfile.localhostProfile;
  const sp = byKind(docs, 'SeccompProfile');
  if (sp.length) assert.equal(sc, `operator/${ns}/${sp[0].metadata.name}.json`, 'the profile the operator installs');
  return { ds, sc };
}

test('two drivers side by side: no object, host path or profile file in common, each validates', needKustomize, async (t) => {
  const parts = [
    { ns: 'acme-gpu', name: 'gpu-driver', driver: 'gpu.acme.example' },
    { ns: 'acme-fpga', name: 'fpga-driver', driver: 'fpga.acme.example' },
  ];
  const seen = new Map();
  const hostPaths = new Map();
  const files = new Map();
  const labels = new Map();
  for (const p of parts) {
    for (const spo of [false, true]) {
      const dir = renamedOverlay({ ...p, kubeletDir: '/var/lib/kubelet', cdiDir: '/var/run/cdi',
        components: ['deviceclass-v1', 'probes', 'probe-networkpolicy', ...(spo ? ['seccomp-spo'] : [])] });
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const docs = render(dir);
      checkDeployment(docs, { ...p, kubeletDir: '/var/lib/kubelet', cdiDir: '/var/run/cdi',
        image: `registry.acme.example/${p.name}:2.1` });
      const { ds, sc } = checkReferences(docs);
      await validateAll(docs);
      if (spo) continue;
      for (const d of docs) {
        // A cluster-scoped object has no namespace; a namespace of
        // the same name as another driver's would be shared.
        const key = `${d.kind} ${d.metadata.namespace || '-'} ${d.metadata.name}`;
        assert.ok(!seen.has(key), `${key}: rendered by ${seen.get(key)} and by ${p.name}`);
        seen.set(key, p.name);
      }
      // The host paths a driver writes (shared: plugins_registry and
      // the CDI directory, where each writes only its own files).
      for (const v of ds.spec.template.spec.volumes.filter((x) => x.hostPath)) {
        if (['plugins-registry', 'cdi'].includes(v.name)) continue;
        assert.ok(!hostPaths.has(v.hostPath.path), `host path ${v.hostPath.path} of ${p.name} and ${hostPaths.get(v.hostPath.path)}`);
        hostPaths.set(v.hostPath.path, p.name);
      }
      assert.ok(!files.has(sc), `seccomp file ${sc} of both`);
      files.set(sc, p.name);
      const l = JSON.stringify(ds.spec.selector.matchLabels);
      assert.ok(!labels.has(l), `selector ${l} of both`);
      labels.set(l, p.name);
    }
  }
  t.diagnostic(`${seen.size} objects, ${hostPaths.size} host paths, seccomp files ${[...files.keys()].join(', ')}`);
});

// Red team (issue 26): the ClusterRole grants every ResourceSlice and
// the admission policy bound only the node, so a second driver's plugin
// on the same node could publish, rewrite or delete this driver's slices.
// Each driver's policy now binds spec.driver to its own name (for UPDATE
// the old object's too; checkDeployment asserts the expression for every
// rendering). FAILED before: no validation read spec.driver.
test('red team: two drivers\' admission policies each let their plugin write their own driver\'s slices only', needKustomize, (t) => {
  const seen = new Set();
  for (const p of [{ ns: 'acme-gpu', name: 'gpu-driver', driver: 'gpu.acme.example' },
    { ns: 'acme-fpga', name: 'fpga-driver', driver: 'fpga.acme.example' }]) {
    const dir = renamedOverlay(p);
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const vap = one(render(dir), 'ValidatingAdmissionPolicy');
    const d = vap.spec.variables.find((v) => v.name === 'driverName').expression;
    assert.equal(d, JSON.stringify(p.driver));
    assert.ok(!seen.has(d));
    seen.add(d);
    assert.ok(vap.spec.validations.some((v) => /\.spec\.driver\s+==\s+variables\.driverName/.test(v.expression)));
  }
});

test('the probe NetworkPolicy: no ingress to the plugin\'s pods, which are on the pod network', needKustomize, async () => {
  const docs = render(path.join(DEPLOY, 'examples', 'pci-driver'));
  const np = one(docs, 'NetworkPolicy');
  const ds = one(docs, 'DaemonSet');
  assert.equal(np.metadata.namespace, ds.metadata.namespace);
  assert.deepEqual(np.spec.policyTypes, ['Ingress']);
  assert.deepEqual(np.spec.ingress, [], 'nothing but the node (always allowed) reaches the port');
  assert.deepEqual(np.spec.podSelector.matchLabels, ds.spec.template.metadata.labels);
  // A NetworkPolicy does not bind hostNetwork pods: the base must not
  // use the host's network.
  assert.notEqual(ds.spec.template.spec.hostNetwork, true);
  assert.deepEqual(ds.spec.template.spec.containers[0].ports.map((p) => p.containerPort), [8080]);
  const comment = fs.readFileSync(path.join(DEPLOY, 'components', 'probe-networkpolicy', 'kustomization.yaml'), 'utf8');
  assert.match(comment, /block access from\s+#?\s*their resident node/, 'the component quotes why the probes still pass');
  await validateAll([np]);
  const { validate } = await import('./lib/k8s-schema.mjs');
  assert.notDeepEqual(validate({ ...np, spec: { ...np.spec, policyTypes: 'Ingress' } }), [], 'the schema is checked');
});

test('the probes: HTTP on the observer\'s port in the example overlay; the exec variant runs kubeletplugin-probe', needKustomize, async (t) => {
  const docs = render(path.join(DEPLOY, 'examples', 'pci-driver'));
  const c = one(docs, 'DaemonSet').spec.template.spec.containers[0];
  assert.ok(c.args.includes('--http-endpoint=:8080'));
  assert.deepEqual(c.ports, [{ name: 'health', containerPort: 8080, protocol: 'TCP' }]);
  assert.deepEqual(c.livenessProbe.httpGet, { path: '/healthz', port: 'health' });
  assert.deepEqual(c.readinessProbe.httpGet, { path: '/readyz', port: 'health' });
  assert.deepEqual(c.startupProbe.httpGet, { path: '/healthz', port: 'health' });
  // The example driver takes the flag the component adds.
  const help = spawnSync(path.join(BUILD, 'examples', 'pci-driver'), ['--help'], { encoding: 'utf8' });
  assert.match(help.stdout, /--http-endpoint ADDR/);
  // The exec variant, from an overlay of its own.
  const dir = renamedOverlay();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const k = path.join(dir, 'kustomization.yaml');
  fs.writeFileSync(k, fs.readFileSync(k, 'utf8').replace(/^components:\n/m,
    `components:\n- ${path.relative(dir, path.join(DEPLOY, 'components', 'probes', 'exec'))}\n`));
  const edocs = render(dir);
  const ec = one(edocs, 'DaemonSet').spec.template.spec.containers[0];
  assert.equal(ec.ports, undefined, 'no port for exec probes');
  const cmd = ec.livenessProbe.exec.command;
  assert.equal(cmd[0], '/usr/local/bin/kubeletplugin-probe');
  assert.deepEqual(ec.readinessProbe.exec.command, cmd);
  // kubelet expands $(VAR) of the container's static env in exec probes.
  const env = Object.fromEntries(ec.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
  const kdir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-probe-'));
  t.after(() => fs.rmSync(kdir, { recursive: true, force: true }));
  env.KUBELET_DIR = kdir;
  const args = cmd.slice(1).map((a) => a.replace(/\$\((\w+)\)/g, (m, v) => env[v]));
  assert.deepEqual(args, ['--driver-name=gpu.acme.example', `--kubelet-dir=${kdir}`, '--pod-uid-env=POD_UID']);
  // POD_UID comes from the downward API in the pod; here, one of ours.
  assert.ok(ec.env.some((e) => e.name === 'POD_UID' && e.valueFrom.fieldRef.fieldPath === 'metadata.uid'));
  const r = spawnSync(path.join(BUILD, 'tools', 'kubeletplugin-probe'), args,
    { encoding: 'utf8', env: { ...process.env, POD_UID: 'f0e1d2c3-0000-4000-8000-000000000001' } });
  assert.equal(r.status, 2, 'no plugin there: socket missing, not a usage error');
  assert.match(r.stderr, new RegExp(`${kdir}/plugins_registry/gpu\\.acme\\.example-f0e1d2c3-0000-4000-8000-000000000001-reg\\.sock`));
  await validateAll(docs);
  await validateAll(edocs);
});

test('the apparmor component: the Localhost profile deploy/apparmor/kubeletplugin instead of Unconfined', needKustomize, async (t) => {
  const base = one(render(path.join(DEPLOY, 'examples', 'pci-driver')), 'DaemonSet');
  assert.deepEqual(base.spec.template.spec.containers[0].securityContext.appArmorProfile, { type: 'Unconfined' },
    'the base stays Unconfined: a Localhost profile fails pods on nodes without AppArmor or the profile');
  const dir = renamedOverlay({ components: ['deviceclass-v1', 'apparmor'] });
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const docs = render(dir);
  const c = one(docs, 'DaemonSet').spec.template.spec.containers[0];
  assert.deepEqual(c.securityContext.appArmorProfile, { type: 'Localhost', localhostProfile: 'kubeletplugin' });
  const profile = fs.readFileSync(path.join(DEPLOY, 'apparmor', 'kubeletplugin'), 'utf8');
  assert.match(profile, new RegExp(`^profile ${c.securityContext.appArmorProfile.localhostProfile} `, 'm'),
    'the profile the component names is the one deploy/apparmor defines');
  await validateAll(docs);
});

// The pod shape of components/device-driver, for container.test.js too.
function deviceDriverDaemonSet(t, extra = []) {
  const dir = renamedOverlay({ ns: 'acme-loop', name: 'loop-driver', driver: 'loop.acme.example', kubeletDir: '/var/lib/kubelet',
    components: ['deviceclass-v1', ...extra, 'device-driver'] });
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const docs = render(dir);
  return { docs, ds: one(docs, 'DaemonSet') };
}

test('the device-driver component: privileged, the devices as hostPath volumes, no claim of a profile the runtime does not apply', needKustomize, async (t) => {
  const { docs, ds } = deviceDriverDaemonSet(t);
  const pod = ds.spec.template.spec;
  const c = pod.containers[0];
  const sc = c.securityContext;
  assert.equal(sc.privileged, true);
  assert.equal(sc.capabilities, undefined, 'a privileged container has every capability: no list that says otherwise');
  assert.equal(sc.seccompProfile, undefined, 'the runtime applies no seccomp profile to a privileged container');
  assert.equal(sc.readOnlyRootFilesystem, true);
  assert.deepEqual(sc.appArmorProfile, { type: 'Unconfined' });
  assert.match(ds.spec.template.metadata.annotations['kubeletplugin/pod-sandbox'], /^privileged .*docs\/security\.md/);
  // What binds main() there: the driver's own filter, if it asks for it.
  assert.match(ds.spec.template.metadata.annotations['kubeletplugin/pod-sandbox'], /the driver process only if it calls kp_policy_main_confine\(\)/);
  const devs = pod.volumes.filter((v) => v.hostPath && /Device$/.test(v.hostPath.type || ''));
  assert.deepEqual(devs.map((v) => [v.hostPath.path, v.hostPath.type]), [['/dev/loop-control', 'CharDevice']]);
  for (const v of devs) {
    assert.equal(c.volumeMounts.find((m) => m.name === v.name).mountPath, v.hostPath.path, 'mounted at its host path');
  }
  // Everything else of the base is still there, under the driver's names.
  assert.equal(ds.metadata.name, 'loop-driver');
  assert.ok(pod.volumes.some((v) => v.name === 'plugin-dir' && v.hostPath.path === '/var/lib/kubelet/plugins/loop.acme.example'));
  await validateAll(docs);
  // With components/apparmor first, the profile binds the privileged pod.
  const aa = deviceDriverDaemonSet(t, ['apparmor']).ds.spec.template.spec.containers[0].securityContext;
  assert.deepEqual(aa.appArmorProfile, { type: 'Localhost', localhostProfile: 'kubeletplugin' });
  assert.equal(aa.privileged, true);
});

test('every DeviceClass component renders and validates', needKustomize, async (t) => {
  for (const v of ['v1', 'v1beta2', 'v1beta1']) {
    const dir = renamedOverlay();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const k = path.join(dir, 'kustomization.yaml');
    fs.writeFileSync(k, fs.readFileSync(k, 'utf8').replace('deviceclass-v1beta1', `deviceclass-${v}`));
    const docs = render(dir);
    const dc = one(docs, 'DeviceClass');
    assert.equal(dc.apiVersion, `resource.k8s.io/${v}`);
    await validateAll([dc]);
  }
});

test('schema validation catches a broken object', async () => {
  const { validate } = await import('./lib/k8s-schema.mjs');
  const [ds] = loadYaml(path.join(DEPLOY, 'base', 'daemonset.yaml'));
  assert.deepEqual(validate(ds), []);
  const bad = structuredClone(ds);
  bad.spec.template.spec.containers[0].securityContext.capabilities.add = 'SYS_ADMIN';
  assert.notDeepEqual(validate(bad), []);
  const [sp] = loadYaml(path.join(DEPLOY, 'components', 'seccomp-spo', 'seccompprofile.yaml'));
  assert.deepEqual(validate(sp), []);
  const badSp = structuredClone(sp);
  badSp.spec.syscalls.find((r) => r.errnoRet !== undefined).errnoRet = 38;
  badSp.spec.defaultErrnoRet = 1;
  assert.equal(validate(badSp).length, 2);
});

test('deploy/seccomp/kubeletplugin.json is what kubeletplugin-policy exports', () => {
  const exported = execFileSync(POLICY).toString();
  const committed = fs.readFileSync(path.join(DEPLOY, 'seccomp', 'kubeletplugin.json'), 'utf8');
  assert.equal(committed, exported,
    `deploy/seccomp/kubeletplugin.json is stale: run ${path.relative(ROOT, POLICY)} -o deploy/seccomp/kubeletplugin.json`);
  const p = JSON.parse(committed);
  assert.equal(p.defaultAction, 'SCMP_ACT_ERRNO');
  // The OCI runtime's own syscalls are in (tests/e2e/container.test.js
  // shows runc needs them) ...
  const allowed = new Set(p.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW' && !r.args).flatMap((r) => r.names));
  for (const s of ['fstatfs', 'setgid', 'setuid']) assert.ok(allowed.has(s), s);
  // ... and --no-runtime leaves them out.
  const bare = JSON.parse(execFileSync(POLICY, ['--no-runtime']).toString());
  assert.equal(bare.syscalls.length, p.syscalls.length - 1);
});

test('the SeccompProfile object is what kubeletplugin-policy -f spo exports, the same rules', () => {
  const file = path.join(DEPLOY, 'components', 'seccomp-spo', 'seccompprofile.yaml');
  const exported = execFileSync(POLICY, ['-f', 'spo']).toString();
  assert.equal(fs.readFileSync(file, 'utf8'), exported,
    `${path.relative(ROOT, file)} is stale: run ${path.relative(ROOT, POLICY)} -f spo -o ${path.relative(ROOT, file)}`);
  const [sp] = loadYaml(file);
  assert.equal(sp.apiVersion, 'security-profiles-operator.x-k8s.io/v1beta1');
  assert.equal(sp.kind, 'SeccompProfile');
  const oci = JSON.parse(fs.readFileSync(path.join(DEPLOY, 'seccomp', 'kubeletplugin.json'), 'utf8'));
  assert.equal(oci.defaultErrnoRet, 1, 'EPERM, the SPO profile\'s implicit default');
  const asOci = oci.syscalls.map((r) => (r.errnoRet === undefined ? r : { ...r, errnoRet: String(r.errnoRet) }));
  assert.deepEqual(sp.spec.syscalls, asOci);
  assert.deepEqual(sp.spec.architectures, oci.architectures);
  assert.equal(sp.spec.defaultAction, oci.defaultAction);
  // The tool refuses what it cannot write.
  const r = spawnSync(POLICY, ['-f', 'yaml']);
  assert.equal(r.status, 2);
});

// The profile binds the driver's own main() as well as the library's
// processes: -m and -I add what main() needs (the pod profile only:
// test_pod_profile.c loads it and shows the nodeserver's and the
// supervisor's filters still refuse such an ioctl), -s what the hooks
// need. LOOP_CTL_GET_FREE is 0x4C82 (19586).
const ioctlRules = (p) => p.syscalls.filter((r) => r.names.includes('ioctl'));
const plainAllows = (p) => new Set(p.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW' && !r.args).flatMap((r) => r.names));
const cmdRule = (cmd) => ({ names: ['ioctl'], action: 'SCMP_ACT_ALLOW',
  args: [{ index: 1, value: 4294967295, valueTwo: cmd, op: 'SCMP_CMP_MASKED_EQ' }] });

test('kubeletplugin-policy -m and -I: main()\'s syscalls and ioctl commands in the pod profile, as plain allows and ioctl command rules; -s the hooks\'; both formats carry them', () => {
  const def = JSON.parse(execFileSync(POLICY).toString());
  const p = JSON.parse(execFileSync(POLICY, ['-m', 'mknodat', '--main-syscall', 'getcpu', '-I', '0x4C82',
    '--main-ioctl', '19587', '-s', 'ioprio_get']).toString());
  for (const s of ['mknodat', 'getcpu', 'ioprio_get']) {
    assert.ok(plainAllows(p).has(s), `${s} allowed`);
    assert.ok(!plainAllows(def).has(s), `${s} not in the default profile`);
  }
  // ioctl stays an argument rule: the library's four commands, then
  // main()'s, in the order given.
  assert.ok(!plainAllows(p).has('ioctl'));
  assert.deepEqual(ioctlRules(p).slice(0, 4), ioctlRules(def));
  assert.deepEqual(ioctlRules(p).slice(4), [cmdRule(19586), cmdRule(19587)]);
  assert.equal(p.syscalls.length, def.syscalls.length + 2);
  // One of the library's own commands (FIONREAD) is not repeated.
  assert.deepEqual(ioctlRules(JSON.parse(execFileSync(POLICY, ['-I', '0x541B']).toString())), ioctlRules(def));
  // main() allowed every ioctl: a plain allow, no command rules left.
  const any = JSON.parse(execFileSync(POLICY, ['-m', 'ioctl', '-I', '0x4C82']).toString());
  assert.ok(plainAllows(any).has('ioctl'));
  assert.deepEqual(ioctlRules(any).filter((r) => r.args), []);
  // The SeccompProfile object carries the same rules.
  const [sp] = parseYaml(execFileSync(POLICY, ['-f', 'spo', '-m', 'mknodat', '-I', '0x4C82']));
  assert.ok(sp.spec.syscalls.find((r) => r.action === 'SCMP_ACT_ALLOW' && !r.args).names.includes('mknodat'));
  assert.deepEqual(ioctlRules(sp.spec).at(-1), cmdRule(19586));
});

test('kubeletplugin-policy refuses a bad -m, -I or -s with the flag, the value and the rule; nothing on stdout', () => {
  for (const [args, msg] of [
    [['-m', 'no_such_call'], /^kubeletplugin-policy: -m \(--main-syscall\): "no_such_call" is not a system call on this architecture\n$/],
    [['--main-syscall', 'fork2'], /-m \(--main-syscall\): "fork2" is not a system call/],
    [['-s', 'bogus'], /^kubeletplugin-policy: -s \(--syscall\): "bogus" is not a system call on this architecture\n$/],
    [['-I', 'LOOP_CTL_GET_FREE'], /^kubeletplugin-policy: -I \(--main-ioctl\): "LOOP_CTL_GET_FREE" is not a number \(an ioctl command, e\.g\. 0x4C82\)\n$/],
    [['-I', '-1'], /-I \(--main-ioctl\): "-1" is not a number/],
    [['-I', '0x100004C82'], /-I \(--main-ioctl\): request 0x100004c82 is wider than 32 bits/],
    [['-I', '0'], /-I \(--main-ioctl\): request 0 names no command/],
    [['-m', 'getcpu', '--from', '-'], /--from takes the driver's declarations from the file: declare -m, -I and -s in the driver/],
  ]) {
    const r = spawnSync(POLICY, args, { encoding: 'utf8', input: '' });
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stderr, msg);
    assert.equal(r.stdout, '');
  }
  const r = spawnSync(POLICY, ['--from', '-'], { encoding: 'utf8', input: '{"syscalls": []}' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--from -: not an OCI seccomp profile/);
});

test('kubeletplugin-policy --help: the pod profile binds main() and the monitor, the children\'s filters the hooks; main()\'s flags apart from the hooks\'', () => {
  const r = spawnSync(POLICY, ['--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  const h = r.stdout.replace(/\s+/g, ' ');
  assert.match(h, /binds the driver's own main\(\) \(before and after kp_start\(\)\) and the library's monitor; the children's own filters bind the hooks/);
  assert.match(h, /What the driver's main\(\) needs \(the pod profile only\): -m, --main-syscall NAME a syscall main\(\) makes \(kp_policy_main_syscall\) -I, --main-ioctl REQ an ioctl command main\(\) issues/);
  assert.match(h, /What the driver's hooks need \(the nodeserver's filter and the pod profile\): -s, --syscall NAME a syscall the hooks make \(kp_sandbox_syscall\)/);
  assert.match(h, /--from FILE the profile a driver printed from its own options/);
});

// The example prints its pod profile from its own binary: the library's
// export for the options its flags build (no main() extras: it reads
// sysfs only); through --from the tool adds the runtime's syscalls and
// converts, giving exactly the committed files.
test('pci-driver --print-seccomp-profile: its own options\' profile, which the tool turns into the committed files; nothing started', () => {
  const EXAMPLE = path.join(BUILD, 'examples', 'pci-driver');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-profile-'));
  try {
    const state = path.join(dir, 'state', 'x');
    const printed = execFileSync(EXAMPLE, ['--print-seccomp-profile', '--kubelet-dir', path.join(dir, 'kubelet'),
      '--state-dir', state, '--cdi-dir', path.join(dir, 'cdi')], { encoding: 'utf8' });
    assert.deepEqual(fs.readdirSync(dir), [], 'no directory created, nothing started');
    assert.deepEqual(JSON.parse(printed), JSON.parse(execFileSync(POLICY, ['--no-runtime']).toString()));
    assert.equal(execFileSync(POLICY, ['--from', '-'], { input: printed }).toString(),
      fs.readFileSync(path.join(DEPLOY, 'seccomp', 'kubeletplugin.json'), 'utf8'));
    assert.equal(execFileSync(POLICY, ['--from', '-', '-f', 'spo'], { input: printed }).toString(),
      fs.readFileSync(path.join(DEPLOY, 'components', 'seccomp-spo', 'seccompprofile.yaml'), 'utf8'));
    const file = path.join(dir, 'p.json');
    fs.writeFileSync(file, printed);
    assert.equal(execFileSync(POLICY, ['--from', file, '--no-runtime']).toString(), execFileSync(POLICY, ['--no-runtime']).toString());
    // A bad flag still fails as in a run (the options are the run's).
    const r = spawnSync(EXAMPLE, ['--print-seccomp-profile', '--max-connections', '0'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.match(spawnSync(EXAMPLE, ['--help'], { encoding: 'utf8' }).stdout, /--print-seccomp-profile {3}print the pod's seccomp profile/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the images: a scratch Containerfile and a Debian multi-stage Dockerfile of the example', () => {
  const cf = fs.readFileSync(path.join(DEPLOY, 'image', 'Containerfile'), 'utf8');
  assert.deepEqual(cf.split('\n').filter((l) => /^FROM /.test(l)), ['FROM scratch']);
  assert.match(cf, /ENTRYPOINT \["\/usr\/local\/bin\/pci-driver"\]/);
  const df = fs.readFileSync(path.join(DEPLOY, 'image', 'Dockerfile'), 'utf8');
  const froms = df.split('\n').filter((l) => /^FROM /.test(l));
  assert.ok(froms.length >= 2, 'multi-stage');
  for (const f of froms) assert.match(f, /^FROM debian:12(-slim)?\b/);
  assert.match(df, /--target pci-driver/);
  assert.match(df, /COPY --from=build \S*\/examples\/pci-driver /);
  assert.doesNotMatch(df, /libkubeletplugin\.so/, 'the example links libkubeletplugin statically');
});

test('tools/image.sh takes any driver and its name, and refuses a name that is no file name', () => {
  const sh = path.join(ROOT, 'tools', 'image.sh');
  for (const [args, re] of [
    [['--driver', path.join(BUILD, 'examples', 'minimal-driver'), '--name', 'a/b'], /--name a\/b: letters, digits/],
    [['--name', '.hidden'], /--name \.hidden: .*not starting with '\.'/],
    [['--bogus'], /unknown option --bogus/],
    [['--driver'], /tools\/image\.sh \[--build DIR\] \[--driver PATH\] \[--name NAME\]/],
  ]) {
    const r = spawnSync(sh, args, { encoding: 'utf8' });
    assert.equal(r.status, 64, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
  // Building one needs podman: device-pod.test.js builds the red-team
  // driver's image and checks its entrypoint.
});

test('the loop-device example overlay: the device-driver pod with the nodes the driver publishes, the args the binary takes', needKustomize, async () => {
  const docs = render(path.join(DEPLOY, 'examples', 'loop-driver'));
  const ds = one(docs, 'DaemonSet');
  const pod = ds.spec.template.spec;
  const [c] = pod.containers;
  assert.equal(ds.metadata.name, 'loop-driver');
  assert.equal(ds.metadata.namespace, 'dra-loop-driver');
  assert.equal(c.image, 'localhost/kubeletplugin/loop-driver:0.1.0');
  assert.equal(c.securityContext.privileged, true);
  assert.equal(c.securityContext.seccompProfile, undefined);
  assert.equal(one(docs, 'DeviceClass').metadata.name, 'loop.example.com');
  const devs = pod.volumes.filter((v) => v.hostPath && /Device$/.test(v.hostPath.type || ''));
  assert.deepEqual(devs.map((v) => [v.hostPath.path, v.hostPath.type]), [['/dev/loop-control', 'CharDevice'],
    ...[0, 1, 2, 3].map((i) => [`/dev/loop${i}`, 'BlockDevice'])]);
  for (const v of devs) assert.equal(c.volumeMounts.find((m) => m.name === v.name).mountPath, v.hostPath.path);
  // As many devices published as mounted, and every flag one the binary
  // takes ($(VAR) expanded as the kubelet would).
  const n = Number(c.args.find((a) => a.startsWith('--devices=')).split('=')[1]);
  assert.equal(n, devs.length - 1);
  const env = Object.fromEntries(c.env.filter((e) => 'value' in e).map((e) => [e.name, e.value]));
  const args = c.args.map((a) => a.replace(/\$\((\w+)\)/g, (_, k) => env[k]));
  const help = spawnSync(path.join(BUILD, 'examples', 'loop-driver'), ['--help'], { encoding: 'utf8' }).stdout;
  for (const a of args) assert.ok(help.includes(`  ${a.split('=')[0]}`), `${a}: a flag of loop-driver --help`);
  // The exec probes' command is in the image image.sh builds.
  assert.ok(!c.ports || !c.ports.length, 'no port on the privileged pod');
  await validateAll(docs);
});
