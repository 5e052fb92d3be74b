'use strict';
// One store for every object, like etcd behind the watch cache: a single
// global resourceVersion counter (the etcd revision), objects kept in their
// internal form, and a bounded event history per resource so that watches
// from an old resourceVersion expire (410) the way the watch cache does.

const crypto = require('node:crypto');

class Store {
  constructor({ historySize = 500, initialRV = 1000 } = {}) {
    this.rv = initialRV;
    this.historySize = historySize;
    this.slices = new Map(); // name -> internal ResourceSlice
    this.claims = new Map(); // "ns/name" -> internal ResourceClaim (v1 shape)
    this.nodes = new Map(); // name -> { name, uid, labels, ... }
    this.history = []; // { rv, type, obj, prev } for resourceslices
    // Oldest RV a watch may start from. The watch cache starts at the list
    // RV it was filled from; later it is (oldest retained event RV) - 1.
    this.windowStart = this.rv;
    this.listeners = new Set(); // fn(event) for resourceslice watchers
    this.waiters = new Set(); // fn() woken on every RV change
  }

  nextRV() {
    this.rv += 1;
    for (const w of this.waiters) w();
    return this.rv;
  }

  // bump simulates writes to other resources: the revision moves on, slice
  // history is unchanged (those events live in other watch caches).
  bump(n = 1) { for (let i = 0; i < n; i++) this.nextRV(); return this.rv; }

  // commit records a slice event and fans it out to watchers. obj/prev are
  // internal objects; watchers encode them for their own API version.
  commit(type, obj, prev) {
    const ev = { rv: Number(obj.metadata.resourceVersion), type, obj: clone(obj), prev: prev ? clone(prev) : undefined };
    this.history.push(ev);
    let trimmed = false;
    while (this.history.length > this.historySize) { this.history.shift(); trimmed = true; }
    if (trimmed) this.windowStart = this.history[0].rv - 1;
    for (const l of this.listeners) l(ev);
  }

  // compact drops the whole history: any watch from an older RV gets 410.
  compact() {
    this.history = [];
    this.windowStart = this.rv;
    return this.rv;
  }

  eventsAfter(rv) { return this.history.filter((e) => e.rv > rv); }

  listSlices() { return [...this.slices.values()].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1)); }
}

function clone(o) { return o === undefined ? undefined : JSON.parse(JSON.stringify(o)); }

function uid() { return crypto.randomUUID(); }

// Kubernetes timestamps are RFC 3339 at one-second precision.
function now() { return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z'); }

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
// SimpleNameGenerator: prefix cut to 58 chars plus 5 random characters.
function generateName(prefix) {
  let s = prefix.length > 58 ? prefix.slice(0, 58) : prefix;
  const bytes = crypto.randomBytes(5);
  for (let i = 0; i < 5; i++) s += NAME_CHARS[bytes[i] % NAME_CHARS.length];
  return s;
}

module.exports = { Store, clone, uid, now, generateName, NAME_CHARS };
