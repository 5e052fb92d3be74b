'use strict';
// docs/api.md is the view docs/gen-api.js makes of include/kubeletplugin.h:
// current, every heading whole and unique (a link target), and the
// header's lists and code examples kept as lists and code.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ROOT } = require('./lib/plugin');

test('docs/api.md is what docs/gen-api.js makes of the header: unique, whole headings; lists and code kept', () => {
  const md = fs.readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8');
  const out = execFileSync(process.execPath, [path.join(ROOT, 'docs', 'gen-api.js')], { encoding: 'utf8' });
  assert.equal(out, md, 'docs/api.md is stale: node docs/gen-api.js > docs/api.md');
  const headings = md.split('\n').filter((l) => /^#{1,3} /.test(l));
  const seen = new Set();
  for (const h of headings) {
    assert.ok(!seen.has(h), `duplicate heading: ${h}`);
    seen.add(h);
  }
  // A type and the function of its name: two headings.
  for (const n of ['kp_publish_status', 'kp_journal_hooks']) {
    assert.ok(seen.has(`### ${n}`) && seen.has(`### struct ${n}`), n);
  }
  // A ':' inside parentheses does not end a section title.
  assert.ok(seen.has('## Prepared-claim journal (beyond upstream: Go drivers each write their own checkpoint)'));
  for (const h of headings) assert.equal((h.match(/\(/g) || []).length, (h.match(/\)/g) || []).length, h);
  // The banners' lists are lists (a blank line before, items at the
  // margin, continuations under them) and their example is C.
  assert.match(md, /by hand:\n\n- prepare: a claim already in the journal gets its recorded devices\n {2}again without/);
  assert.match(md, /\n- unprepare: a claim the journal does not know/);
  assert.match(md, /are removed\. Other drivers' files are never listed or touched\.\n\nThe file: written/);
  assert.match(md, /other parts of the API:\n\n- health reports[^\n]*\n {2}KP_DEVICE_HEALTH_INIT/);
  assert.match(md, /initialisers:\n\n```c\nstatic const struct kp_attribute attrs\[\] = \{\n\tKP_ATTR_STRING/);
});
