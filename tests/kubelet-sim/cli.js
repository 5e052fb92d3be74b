#!/usr/bin/env node
'use strict';
// Command-line front end of the kubelet simulator, for humans and the demo.
// Exit codes: 0 success, 1 a call failed, 2 usage error, 3 no registration
// within --wait-ms.

const { KubeletSim, KUBELET_VERSIONS } = require('./index');

const USAGE = `usage: node tests/kubelet-sim/cli.js --registry DIR [options]

Acts as a kubelet towards DRA plugins whose registration sockets appear in DIR.

options:
  --registry DIR         plugins_registry directory to watch (required)
  --kubelet-version V    kubelet version to imitate: ${KUBELET_VERSIONS.join(', ')} (default 1.34);
                         --version V is the same
  --root-dir DIR         kubelet --root-dir, for the 1.37+ endpoint check (default: the parent of --registry)
  --driver NAME          driver to wait for and call (default: the first to register)
  --prepare CLAIM...     NodePrepareResources for these claims (one call), CLAIM = ns/name/uid
  --unprepare CLAIM...   NodeUnprepareResources for these claims (one call, after prepare)
  --wait-ms N            how long to wait for the registration (default 10000)
  --timeout-ms N         deadline of Prepare/Unprepare calls (default 45000, like kubelet)
  --reject-with MSG      answer registrations with plugin_registered=false and MSG
  --watch                keep watching and log events until SIGINT/SIGTERM
  --verbose              log the simulator's internal steps to stderr
  -h, --help             show this help`;

class UsageError extends Error {}

function parseClaim(spec) {
  const parts = spec.split('/');
  if (parts.length !== 3 || parts.some((p) => p === '')) {
    throw new UsageError(`bad claim "${spec}": expected namespace/name/uid`);
  }
  const [namespace, name, uid] = parts;
  return { namespace, name, uid };
}

function parseNumber(flag, value) {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`${flag} needs a non-negative number`);
  return n;
}

function parseArgs(argv) {
  const args = { version: '1.34', waitMs: 10000, timeoutMs: 45000, prepare: [], unprepare: [], watch: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new UsageError(`${flag} needs a value`);
      return argv[++i];
    };
    // Claim lists run until the next flag.
    const values = () => {
      const out = [];
      while (i + 1 < argv.length && !argv[i + 1].startsWith('--')) out.push(argv[++i]);
      if (!out.length) throw new UsageError(`${flag} needs at least one claim`);
      return out;
    };
    switch (flag) {
      case '--registry': args.registry = value(); break;
      case '--version':
      case '--kubelet-version': args.version = value(); break;
      case '--root-dir': args.rootDir = value(); break;
      case '--driver': args.driver = value(); break;
      case '--prepare': args.prepare.push(...values().map(parseClaim)); break;
      case '--unprepare': args.unprepare.push(...values().map(parseClaim)); break;
      case '--wait-ms': args.waitMs = parseNumber(flag, value()); break;
      case '--timeout-ms': args.timeoutMs = parseNumber(flag, value()); break;
      case '--reject-with': args.rejectWith = value(); break;
      case '--watch': args.watch = true; break;
      case '--verbose': args.verbose = true; break;
      case '-h': case '--help': args.help = true; break;
      default: throw new UsageError(`unknown argument "${flag}"`);
    }
  }
  if (args.help) return args;
  if (!args.registry) throw new UsageError('--registry is required');
  if (!KUBELET_VERSIONS.includes(args.version)) {
    throw new UsageError(`--kubelet-version must be one of ${KUBELET_VERSIONS.join(', ')}`);
  }
  return args;
}

function describe(inst) {
  return [
    `registered DRA driver "${inst.name}" (kubelet ${inst.kubeletVersion})`,
    `  registration socket: ${inst.socketPath}`,
    `  endpoint:            ${inst.endpoint}`,
    `  supported versions:  ${inst.supportedVersions.length ? inst.supportedVersions.join(', ') : '(none)'}`,
    `  chosen API:          ${inst.api} (${inst.servicePrefix}*)`,
    `  registered at:       ${inst.registeredAt.toISOString()}`,
  ].join('\n');
}

const stamp = () => new Date().toISOString();

function logEvents(sim) {
  sim.on('registered', (inst) => console.log(`${stamp()} ${describe(inst)}`));
  sim.on('registrationFailed', (e) => console.log(`${stamp()} registration of ${e.socketPath} failed ` +
    `(${e.stage}): ${e.error}${e.retry ? ` [retry in ${e.retryInMs} ms]` : ' [not retried]'}`));
  sim.on('deregistered', (e) => console.log(`${stamp()} deregistered DRA driver "${e.name}" (socket ${e.socketPath})`));
  sim.on('connection', (e) => console.log(`${stamp()} driver "${e.name}" at ${e.endpoint}: ` +
    `${e.connected ? 'connected' : 'not connected'}`));
}

// proto-loader's oneofs:true adds "_share_id": "share_id" next to a present
// share_id; it only repeats what the presence of share_id already says.
const printJSON = (value) => console.log(JSON.stringify(value, (k, v) => (k === '_share_id' ? undefined : v), 2));

async function runCalls(sim, driver, args) {
  if (args.prepare.length) {
    const res = await sim.nodePrepareResources(driver, args.prepare, { timeoutMs: args.timeoutMs });
    printJSON({ NodePrepareResources: res });
  }
  if (args.unprepare.length) {
    const res = await sim.nodeUnprepareResources(driver, args.unprepare, { timeoutMs: args.timeoutMs });
    printJSON({ NodeUnprepareResources: res });
  }
}

function waitForSignal() {
  return new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

async function main(argv) {
  const args = parseArgs(argv);
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const sim = new KubeletSim({
    registryDir: args.registry,
    version: args.version,
    rootDir: args.rootDir,
    rejectWith: args.rejectWith,
    log: args.verbose ? (m) => console.error(`${stamp()} [kubelet-sim] ${m}`) : null,
  });
  if (args.watch) logEvents(sim);
  else sim.on('registrationFailed', (e) => console.error(`registration of ${e.socketPath} failed (${e.stage}): ${e.error}`));
  sim.start();
  try {
    const needDriver = !args.watch || args.prepare.length || args.unprepare.length;
    if (needDriver) {
      let inst;
      try {
        inst = await sim.waitForDriver(args.driver, args.waitMs);
      } catch {
        console.error(`error: no DRA driver${args.driver ? ` "${args.driver}"` : ''} registered in ` +
          `${args.registry} within ${args.waitMs} ms`);
        return 3;
      }
      if (!args.watch) console.log(describe(inst));
      await runCalls(sim, inst.name, args);
    }
    if (args.watch) {
      console.log(`${stamp()} watching ${args.registry} as kubelet ${args.version}; Ctrl-C to stop`);
      await waitForSignal();
    }
    return 0;
  } catch (err) {
    console.error(`error: ${err.message}`);
    return 1;
  } finally {
    await sim.stop();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      if (err instanceof UsageError) {
        console.error(`error: ${err.message}\n\n${USAGE}`);
        process.exit(2);
      }
      console.error(err);
      process.exit(1);
    },
  );
}

module.exports = { main, parseArgs };
