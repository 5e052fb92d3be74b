'use strict';
// deploy/: every YAML file parses (Debian's /usr/bin/python3 with
// python3-yaml: node has no YAML parser) and holds what a DRA kubelet
// plugin needs; the seccomp profile is what the code exports today
// (regenerate: build/tools/kubeletplugin-policy -o deploy/seccomp/kubeletplugin.json).

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, BUILD } = require('./lib/plugin');

const DEPLOY = path.join(ROOT, 'deploy');
const PY = '/usr/bin/python3';
const DRIVER = 'pci.example.com';

// All documents of a YAML file, as JSON.
function loadYaml(file) {
  const out = execFileSync(PY, ['-c',
    'import json, sys, yaml\nprint(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]))', file]);
  return JSON.parse(out.toString());
}

const yamlFiles = () => fs.readdirSync(DEPLOY).filter((f) => /\.ya?ml$/.test(f)).sort();
const all = () => yamlFiles().flatMap((f) => loadYaml(path.join(DEPLOY, f)).map((d) => ({ ...d, file: f })));
const byKind = (docs, kind) => docs.filter((d) => d.kind === kind);

test('every YAML file in deploy/ parses', () => {
  assert.ok(fs.existsSync(PY), `${PY} missing`);
  try {
    execFileSync(PY, ['-c', 'import yaml']);
  } catch {
    assert.fail('python3-yaml is missing: run tools/deps.sh');
  }
  const files = yamlFiles();
  for (const f of ['daemonset.yaml', 'rbac.yaml', 'validatingadmissionpolicy.yaml', 'namespace.yaml', 'kustomization.yaml']) {
    assert.ok(files.includes(f), `deploy/${f}`);
  }
  for (const f of files) {
    const docs = loadYaml(path.join(DEPLOY, f));
    assert.ok(docs.length >= 1, `${f}: no documents`);
    for (const d of docs) {
      assert.ok(d.apiVersion && d.kind, `${f}: a document without apiVersion/kind`);
    }
  }
  const k = loadYaml(path.join(DEPLOY, 'kustomization.yaml'))[0];
  for (const r of k.resources) assert.ok(fs.existsSync(path.join(DEPLOY, r)), `kustomization: ${r}`);
});

test('the DaemonSet mounts the kubelet directories and the CDI dir, with the node name', () => {
  const docs = all();
  const [ds] = byKind(docs, 'DaemonSet');
  const pod = ds.spec.template.spec;
  const [c] = pod.containers;
  const host = Object.fromEntries(pod.volumes.filter((v) => v.hostPath).map((v) => [v.name, v.hostPath.path]));
  const mounts = Object.fromEntries(c.volumeMounts.map((m) => [m.name, m.mountPath]));
  const paths = Object.values(host);
  for (const p of ['/var/lib/kubelet/plugins_registry', `/var/lib/kubelet/plugins/${DRIVER}`, '/var/run/cdi']) {
    assert.ok(paths.includes(p), `hostPath ${p}`);
    const name = Object.keys(host).find((n) => host[n] === p);
    assert.equal(mounts[name], p, `${p} mounted at the same path`);
  }
  const env = c.env.find((e) => e.name === 'NODE_NAME');
  assert.equal(env.valueFrom.fieldRef.fieldPath, 'spec.nodeName');
  assert.ok(c.args.includes('--in-cluster'));
  assert.ok(c.args.includes(`--driver-name=${DRIVER}`));
  assert.deepEqual(c.securityContext.seccompProfile, { type: 'Localhost', localhostProfile: 'kubeletplugin.json' });
  assert.notEqual(c.securityContext.privileged, true, 'a privileged pod would run unconfined');
  assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
  const [sa] = byKind(docs, 'ServiceAccount');
  assert.equal(pod.serviceAccountName, sa.metadata.name);
  assert.equal(ds.metadata.namespace, sa.metadata.namespace);
});

test('RBAC and the ValidatingAdmissionPolicy follow reference section 6', () => {
  const docs = all();
  const [role] = byKind(docs, 'ClusterRole');
  const rule = (group, res) => role.rules.find((r) => r.apiGroups.includes(group) && r.resources.includes(res));
  assert.deepEqual(rule('resource.k8s.io', 'resourceslices').verbs.sort(),
    ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
  assert.deepEqual(rule('', 'nodes').verbs, ['get']);
  assert.ok(rule('resource.k8s.io', 'resourceclaims').verbs.includes('get'));
  assert.ok(!role.rules.some((r) => r.verbs.includes('deletecollection')));
  const [binding] = byKind(docs, 'ClusterRoleBinding');
  assert.equal(binding.roleRef.name, role.metadata.name);
  const [sa] = byKind(docs, 'ServiceAccount');
  assert.deepEqual(binding.subjects[0], { kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace });

  const [vap] = byKind(docs, 'ValidatingAdmissionPolicy');
  assert.equal(vap.apiVersion, 'admissionregistration.k8s.io/v1');
  assert.equal(vap.spec.failurePolicy, 'Fail');
  const rr = vap.spec.matchConstraints.resourceRules[0];
  assert.deepEqual(rr.resources, ['resourceslices']);
  assert.deepEqual(rr.operations.sort(), ['CREATE', 'DELETE', 'UPDATE']);
  assert.ok(rr.apiVersions.includes('v1') && rr.apiVersions.includes('v1beta1'));
  assert.match(vap.spec.matchConditions[0].expression,
    new RegExp(`system:serviceaccount:${sa.metadata.namespace}:${sa.metadata.name}`));
  const vars = Object.fromEntries(vap.spec.variables.map((v) => [v.name, v.expression]));
  assert.match(vars.userNodeName, /authentication\.kubernetes\.io\/node-name/);
  assert.match(vars.objectNodeName, /request\.operation == "DELETE" \? oldObject : object/);
  assert.equal(vap.spec.validations.length, 2);
  assert.match(vap.spec.validations[1].expression, /userNodeName == variables\.objectNodeName/);
  const [vb] = byKind(docs, 'ValidatingAdmissionPolicyBinding');
  assert.equal(vb.spec.policyName, vap.metadata.name);
  assert.deepEqual(vb.spec.validationActions, ['Deny']);
});

test('deploy/seccomp/kubeletplugin.json is what kubeletplugin-policy exports', () => {
  const tool = path.join(BUILD, 'tools', 'kubeletplugin-policy');
  const exported = execFileSync(tool).toString();
  const committed = fs.readFileSync(path.join(DEPLOY, 'seccomp', 'kubeletplugin.json'), 'utf8');
  assert.equal(committed, exported,
    `deploy/seccomp/kubeletplugin.json is stale: run ${path.relative(ROOT, tool)} -o deploy/seccomp/kubeletplugin.json`);
  const p = JSON.parse(committed);
  assert.equal(p.defaultAction, 'SCMP_ACT_ERRNO');
});

test('the Dockerfile is a multi-stage Debian 12 build of the example driver', () => {
  const df = fs.readFileSync(path.join(DEPLOY, 'Dockerfile'), 'utf8');
  const froms = df.split('\n').filter((l) => /^FROM /.test(l));
  assert.ok(froms.length >= 2, 'multi-stage');
  for (const f of froms) assert.match(f, /^FROM debian:12(-slim)?\b/);
  assert.match(df, /--target pci-driver/);
  assert.match(df, /COPY --from=build \S*\/examples\/pci-driver /);
});
