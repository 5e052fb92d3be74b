'use strict';
// The prepared-claim journal as the library reads it
// (nodeserver/journal_sync.c): the schema-1 snapshot
// kubeletplugin-journal.json, then the schema-2 change log
// kubeletplugin-journal.log beside it when its header's base is the
// snapshot's checksum, each line "<crc32 hex> <json>" applied in order up
// to the first torn or mismatching one.

const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

// CRC-32 (IEEE), as zlib's: node 18 has no zlib.crc32.
function crc32(buf) {
  if (zlib.crc32) return zlib.crc32(buf);
  let c = 0xffffffff;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return (c ^ 0xffffffff) >>> 0;
}

const hex8 = (n) => n.toString(16).padStart(8, '0');

// { claims, snapshot, log: { gen, changes, void } }
function readJournal(dir) {
  const snapPath = path.join(dir, 'kubeletplugin-journal.json');
  const snapshot = fs.existsSync(snapPath) ? JSON.parse(fs.readFileSync(snapPath, 'utf8')) : null;
  const claims = { ...(snapshot ? snapshot.claims : {}) };
  const out = { claims, snapshot, log: null };
  const logPath = path.join(dir, 'kubeletplugin-journal.log');
  if (!fs.existsSync(logPath)) return out;
  const buf = fs.readFileSync(logPath);
  let off = 0;
  const lines = [];
  for (;;) {
    const nl = buf.indexOf(0x0a, off);
    if (nl < 0) break;
    const line = buf.subarray(off, nl);
    const json = line.subarray(9);
    if (line.length < 10 || line.subarray(0, 8).toString() !== hex8(crc32(json))) break;
    lines.push(JSON.parse(json.toString()));
    off = nl + 1;
  }
  if (lines.length === 0) return out;
  const [h, ...changes] = lines;
  out.log = { gen: h.gen, changes: changes.length, void: !snapshot || h.base !== snapshot.checksum };
  if (out.log.void) return out;
  for (const c of changes) {
    if (c.entry) claims[c.uid] = c.entry;
    else delete claims[c.uid];
  }
  return out;
}

module.exports = { readJournal, crc32 };
