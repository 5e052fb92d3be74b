'use strict';
// The kubelet plugin watcher (pkg/kubelet/pluginmanager/pluginwatcher):
// keeps a "desired state of world" of registration sockets under the
// registry directory. Each socket gets a generation; re-creating a socket
// at the same path bumps it, which makes the reconciler unregister the old
// registration and register again (kubelet uses a fresh timestamp).
//
// fs.watch is only a hint: every event re-examines the path, and a periodic
// rescan catches what fs.watch misses. A socket's identity is
// (dev, inode, birth time) because ext4 hands out the same inode at once
// when a socket is re-created.

const fs = require('node:fs');
const path = require('node:path');
const { EventEmitter } = require('node:events');

function statOrNull(p) {
  try {
    // kubelet uses os.Stat (follows symlinks) for both checks.
    return fs.statSync(p, { bigint: true });
  } catch {
    return null;
  }
}

function identity(st) {
  // Without birth time (some filesystems) ctime is the best stand-in.
  const born = st.birthtimeNs > 0n ? st.birthtimeNs : st.ctimeNs;
  return `${st.dev}:${st.ino}:${born}`;
}

const isHidden = (p) => path.basename(p).startsWith('.');

class RegistryWatcher extends EventEmitter {
  constructor({ dir, rescanMs = 200 }) {
    super();
    this.dir = path.resolve(dir);
    this.rescanMs = rescanMs;
    this.desired = new Map(); // socket path -> { generation, identity, since }
    this.watchers = new Map(); // dir path -> fs.FSWatcher
    this.generation = 0;
    this.timer = null;
  }

  start() {
    // kubelet: MkdirAll(dir, 0755) before watching.
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o755 });
    this.watchDir(this.dir);
    this.walk(this.dir, true);
    this.timer = setInterval(() => this.rescan(), this.rescanMs);
    this.timer.unref();
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  watchDir(dir) {
    if (this.watchers.has(dir)) return;
    try {
      const w = fs.watch(dir, (_event, name) => this.onFsEvent(dir, name));
      w.on('error', () => this.unwatchDir(dir));
      this.watchers.set(dir, w);
    } catch (err) {
      this.emit('log', `cannot watch ${dir}: ${err.message}`);
    }
  }

  unwatchDir(dir) {
    const w = this.watchers.get(dir);
    if (w) w.close();
    this.watchers.delete(dir);
  }

  onFsEvent(dir, name) {
    if (!this.timer) return; // stopped
    if (name) this.examine(path.join(dir, name.toString()), false);
    else this.rescan(); // overflow or unknown name: look at everything
  }

  // Startup traversal (filepath.Walk): every subdirectory is watched, even
  // dot-directories; sockets go through the same checks as Create events.
  walk(dir, startup) {
    let entries;
    try {
      entries = fs.readdirSync(dir);
    } catch {
      return;
    }
    for (const name of entries) this.examine(path.join(dir, name), startup);
  }

  // One filesystem path: the equivalent of a Create or Remove event.
  examine(p, startup) {
    const st = statOrNull(p);
    if (!st) {
      this.removeUnder(p);
      return;
    }
    if (st.isDirectory()) {
      // A later-created dot-directory is ignored like any dot-name.
      if (!startup && isHidden(p)) return;
      if (!this.watchers.has(p)) {
        this.watchDir(p);
        this.walk(p, startup);
      }
      return;
    }
    if (isHidden(p)) return;
    if (!st.isSocket()) {
      // A socket replaced by a regular file is gone for kubelet.
      if (this.desired.has(p)) this.remove(p);
      return;
    }
    this.addOrUpdate(p, identity(st));
  }

  addOrUpdate(p, id) {
    const cur = this.desired.get(p);
    if (cur && cur.identity === id) return;
    if (cur) this.emit('socketRemoved', p);
    this.desired.set(p, { generation: ++this.generation, identity: id, since: Date.now() });
    this.emit('socketAdded', p);
  }

  remove(p) {
    if (!this.desired.delete(p)) return;
    this.emit('socketRemoved', p);
  }

  // A removed path may have been a directory holding sockets.
  removeUnder(p) {
    this.remove(p);
    const prefix = p + path.sep;
    for (const s of [...this.desired.keys()]) if (s.startsWith(prefix)) this.remove(s);
    for (const d of [...this.watchers.keys()]) {
      if (d === p || d.startsWith(prefix)) this.unwatchDir(d);
    }
  }

  // Safety net for missed fs.watch events.
  rescan() {
    if (!this.timer) return;
    for (const s of [...this.desired.keys()]) this.examine(s, false);
    for (const d of [...this.watchers.keys()]) {
      if (d !== this.dir && !statOrNull(d)) this.removeUnder(d);
    }
    for (const d of [...this.watchers.keys()]) this.walk(d, false);
  }
}

module.exports = { RegistryWatcher };
