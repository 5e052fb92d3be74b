'use strict';
// The red team's probe and check, shared by redteam.test.js (the plugin on
// this host) and device-pod.test.js (in a privileged container): the
// prepare hook of tests/e2e/bin/kp_redteam.c answers a claim named
// "<probe>-<arg>" with "PROBE <probe>: DENIED|SUCCEEDED|ERROR: <text>".

const { proto, callRaw } = require('../../kubelet-sim');
const { until } = require('./plugin');

const PREPARE = `${proto.APIS.v1.prefix}NodePrepareResources`;
const REQ = proto.typeName('v1', 'NodePrepareResourcesRequest');
const RESP = proto.typeName('v1', 'NodePrepareResourcesResponse');

// Sends claim c (its name the probe) straight to the DRA socket; { name,
// probe, verdict: denied | succeeded | killed | exited | error, text,
// syscall?, broke (the call failed: the nodeserver died) }. drv is the
// TestDriver, whose log tells a seccomp kill from other deaths.
async function sendProbe(drv, draSock, c) {
  const from = drv.stderr.length;
  const res = await callRaw(draSock, PREPARE, proto.encode(REQ, { claims: [c] }), 10000);
  const out = { name: c.name, probe: c.name.split('-')[0], broke: res.code !== 0 };
  if (res.code === 0) {
    const r = proto.decode(RESP, res.buffer).claims[c.uid] || {};
    const err = r.error || '';
    const m = /PROBE (\w+): (DENIED|SUCCEEDED|ERROR): ([^]*)$/.exec(err);
    const sd = /sandbox denied (\S+)/.exec(err);
    if (sd) out.syscall = sd[1];
    if (m) Object.assign(out, { verdict: m[2].toLowerCase(), text: m[3] });
    else if (sd) Object.assign(out, { verdict: 'denied', text: err });
    else if (!err) Object.assign(out, { verdict: 'error', text: `prepared normally (${JSON.stringify(r.devices)})` });
    else Object.assign(out, { verdict: 'error', text: `claim error: ${err}` });
    return out;
  }
  // The call broke: did the probe get the nodeserver killed?
  const log = () => drv.stderr.slice(from);
  const dead = /nodeserver\] nodeserver killed by seccomp: \S+|broker\] nodeserver (killed by|exited)/;
  await until(() => dead.test(log()), 5000).catch(() => {});
  const k = /nodeserver\] nodeserver killed by seccomp: (\S+)/.exec(log()) ||
    /broker\] nodeserver killed by seccomp \((SIGSYS)\)/.exec(log());
  const call = `the call failed: code ${res.code} ${res.details}`;
  if (k) Object.assign(out, { verdict: 'killed', syscall: k[1], text: `nodeserver killed by seccomp (${k[1]}); ${call}` });
  else if (/broker\] nodeserver (killed by signal|exited)[^\n]*/.test(log())) {
    Object.assign(out, { verdict: 'exited', text: `${/broker\] (nodeserver [^\n]*)/.exec(log())[1]}; ${call}` });
  } else Object.assign(out, { verdict: 'error', text: call });
  return out;
}

// Whether a normal NodePrepareResources of claim c through the kubelet
// simulator succeeds within ms: { ok, last } (the last error seen).
async function preparesAgain(sim, driver, c, ms) {
  let last = null;
  const ok = await until(async () => {
    try {
      const r = await sim.nodePrepareResources(driver, [c], { timeoutMs: 3000 });
      return r.claims[c.uid].devices[0].device_name === c.name;
    } catch (err) {
      last = err;
      return false;
    }
  }, ms, 200).catch(() => false);
  return { ok, last };
}

module.exports = { sendProbe, preparesAgain };
