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
  assert.match(md, /are removed\. Other drivers' files are never listed or touched\.\n\nThe files: the snapshot/);
  assert.match(md, /other parts of the API:\n\n- health reports[^\n]*\n {2}KP_DEVICE_HEALTH_INIT/);
  assert.match(md, /initialisers:\n\n```c\nstatic const struct kp_attribute attrs\[\] = \{\n\tKP_ATTR_STRING/);
});

// The README is what a newcomer reads in ten minutes (issue 26): what the
// library is, the two commands, a complete driver, the link lines and a
// map of docs/, where everything else lives.
test('README.md: at most 300 lines, with the two commands, the whole minimal driver, the pkg-config lines and every page of docs/', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  assert.ok(lines <= 300, `README.md has ${lines} lines; move the rest into docs/`);
  const blocks = [...readme.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], text: m[2] }));
  assert.ok(blocks.some((b) => b.lang === 'sh' && /^make demo\b/m.test(b.text) && /^make check\b/m.test(b.text)),
    'the two commands, make demo and make check');
  const src = fs.readFileSync(path.join(ROOT, 'examples', 'minimal-driver', 'main.c'), 'utf8');
  assert.ok(blocks.some((b) => b.lang === 'c' && b.text === src),
    'the README shows examples/minimal-driver/main.c whole (make check builds and runs it)');
  assert.match(readme, /\$\(pkg-config --cflags --libs kubeletplugin\)/);
  assert.match(readme, /\$\(pkg-config --static --libs kubeletplugin\)/);
  for (const f of fs.readdirSync(path.join(ROOT, 'docs')).filter((n) => n.endsWith('.md'))) {
    assert.ok(readme.includes(`](docs/${f})`), `the README's map does not link docs/${f}`);
  }
});

// GitHub's anchor of a heading: lower case, punctuation but - and _ gone,
// spaces to -.
function slug(h) {
  return h.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');
}

// The titles a file's sections can be cited by: its headings and the bold
// lead-ins of its paragraphs and items ("**The copy of the list** (...").
function titles(file) {
  const text = fs.readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  const out = [];
  for (const l of text.split('\n')) {
    let m = /^#{1,6} (.+)$/.exec(l);
    if (m) out.push(m[1].trim());
    m = /^(?:\s*(?:[-*]|\d+\.)\s+)?\*\*([^*]+)\*\*/.exec(l);
    if (m) out.push(m[1].trim().replace(/[.:]$/, ''));
  }
  return out;
}

// Moving text between the README and docs/ breaks links and citations
// silently: every relative link of the Markdown pages, every docs/*.md a
// file names and every section cited by its title (the page's path or
// README, a comma at most, then the title in double quotes) must still
// resolve.
// The tree's files: git's list, or (a tree without .git) a walk that
// leaves out what the build and npm write.
function treeFiles() {
  try {
    return execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n').filter((f) => f !== '' && !f.startsWith('node_modules/'));
  } catch {
    const out = [];
    const walk = (d) => {
      for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
        const f = d ? `${d}/${e.name}` : e.name;
        if (e.isDirectory() && !/^(\.|node_modules$|build)/.test(e.name)) walk(f);
        else if (e.isFile()) out.push(f);
      }
    };
    walk('');
    return out;
  }
}

test('every link, docs/ path and cited section title in the tree resolves', () => {
  const files = treeFiles().filter((f) => /(\.(md|c|h|js|ya?ml|sh|txt|in|cmake)|Makefile)$/.test(f) &&
    fs.existsSync(path.join(ROOT, f)));
  const bad = [];
  const cache = new Map();
  const titlesOf = (f) => { if (!cache.has(f)) cache.set(f, titles(path.join(ROOT, f))); return cache.get(f); };
  for (const f of files) {
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
    if (f.endsWith('.md')) {
      for (const m of text.replace(/```[\s\S]*?```/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(m[1])) continue;
        const [target, anchor] = m[1].split('#');
        const to = target === '' ? f : path.normalize(path.join(path.dirname(f), target));
        if (!fs.existsSync(path.join(ROOT, to))) { bad.push(`${f}: link to ${m[1]}: no such file`); continue; }
        if (anchor && !titlesOf(to).some((h) => slug(h) === anchor)) bad.push(`${f}: link to ${m[1]}: no such heading`);
      }
    }
    for (const m of text.matchAll(/(?<![\w/.-])docs\/[\w.-]+\.md/g)) {
      if (!fs.existsSync(path.join(ROOT, m[0]))) bad.push(`${f}: ${m[0]}: no such file`);
    }
    // A citation: the page, an optional link to it, a comma, the title
    // in quotes, wrapped over comment lines in code.
    const cite = /(?<![\w/.-])(docs\/[\w.-]+\.md|README)(?:\]\([^)]*\))?,?\s+"(\S[^"]*)"/g;
    for (const m of text.matchAll(cite)) {
      const doc = m[1] === 'README' ? 'README.md' : m[1];
      if (!fs.existsSync(path.join(ROOT, doc))) continue;
      const t = m[2].replace(/\n\s*(?:\*|\/\/|#)?\s*/g, ' ').replace(/\s+/g, ' ');
      if (!titlesOf(doc).some((h) => h.startsWith(t))) bad.push(`${f}: ${doc} "${t}": no such section`);
    }
  }
  assert.deepEqual(bad, []);
});
