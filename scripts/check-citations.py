#!/usr/bin/env python3
"""Fails when a file of the repository cites what a clone does not hold.

Every text file (git's tracked and new files; without git, every file but
build output and .deps) is read, and three kinds of citation are checked:
  - a path into the machine the repository was written on, outside it: the
    shared directory beside the repository or the absolute work root (no
    file may name them, whatever it is);
  - a document, any token ending in .md (optionally with a #anchor) that is
    not part of a URL: it must exist relative to the repository root or to
    the citing file's directory, and an anchor must be one of its headings;
  - a section of a numbered document (docs/format/*.md, whose headings are
    "## 3. Title" and "### 7.4 Title"): the numbers after the path
    ("docs/format/file.md 7.4", "sections 2, 3 and 7.13", "2-3") must be
    headings of it, "rule N" an item of its Validation list, "step N" an item
    of the cited section's list.
One file is exempt (ALLOW): the test that plants bad citations.
  scripts/check-citations.py [ROOT]   (ROOT defaults to the repository)
Prints one line per bad citation, "FILE:LINE: what", and exits 1 if any."""
import bisect
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..'))
SKIP_DIRS = {'.git', '.deps', 'node_modules'}
# The one file allowed to cite what does not exist: the test that plants bad
# citations to show that this check reports them.
ALLOW = {'tests/cli/test_citations.sh'}
# Built from pieces so that this file does not cite them itself.
SHARED = '..' + '/shared'
WORKROOT = re.compile(r'(?<![A-Za-z0-9_.$}-])' + '/wo' + 'rk/')
DOC = re.compile(r'(?<![A-Za-z0-9_./$}-])((?:\.\.?/)*[A-Za-z0-9_][A-Za-z0-9_./-]*\.md)(#[A-Za-z0-9_-]+)?')
NUM = r'\d+(?:\.\d+)?'
SECTIONS = re.compile(r'\)?\s*(?:§\s*|sections?\s+)?(' + NUM + r'(?:\s*(?:,|and|-)\s*' + NUM + r')*)'
                      r'(?:\s*,?\s*(rules?|steps?)\s+(\d+)(?:\s*-\s*(\d+))?)?')
RULES = re.compile(r'\)?\s*(rules?)\s+(\d+)(?:\s*-\s*(\d+))?')


def files():
    try:
        out = subprocess.run(['git', '-C', ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
                             capture_output=True, check=True).stdout.decode()
        names = [n for n in out.split('\0') if n]
        if names:
            return sorted(set(names))
    except (OSError, subprocess.CalledProcessError):
        pass
    names = []
    for d, subdirs, fs in os.walk(ROOT):
        subdirs[:] = [s for s in subdirs if s not in SKIP_DIRS and not s.startswith('build')]
        names += [os.path.relpath(os.path.join(d, f), ROOT) for f in fs]
    return sorted(names)


def slug(title):
    s = re.sub(r'[^\w\- ]', '', title.strip().lower())
    return s.replace(' ', '-')


docs = {}


def doc(path):
    """Headings of a document: {number: (title, body lines)}, slugs, and the rules."""
    if path in docs:
        return docs[path]
    heads, slugs, cur = {}, set(), None
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = re.match(r'^(#+)\s+(.*)$', line)
            if m:
                slugs.add(slug(m.group(2)))
                n = re.match(r'^(' + NUM + r')\.?\s', m.group(2))
                cur = None
                if n:
                    cur = n.group(1)
                    heads[cur] = (m.group(2), [])
                continue
            if cur:
                heads[cur][1].append(line)
    rules = set()
    for title, body in heads.values():
        if 'validation' in title.lower():
            rules |= items(body)
    docs[path] = (heads, slugs, rules)
    return docs[path]


def items(body):
    return {int(m.group(1)) for m in (re.match(r'^(\d+)\.\s', line) for line in body) if m}


def numbers(spec):
    """'2, 3 and 7.13' -> ['2', '3', '7.13']; '2-3' -> ['2', '3']."""
    return re.findall(NUM, spec)


def following(text, end):
    """The text after a citation, across comment continuations and string literals."""
    t = text[end:end + 160]
    t = re.sub(r'"\s*\n\s*"', '', t)            # a message split in two literals
    t = re.sub(r'\n\s*(?:\*(?!/)|//|#|--)?', ' ', t)  # comment continuation lines
    return t


def check_sections(where, target, rest, bad):
    heads, _, rules = doc(target)
    m = RULES.match(rest)
    if m:
        lo, hi = int(m.group(2)), int(m.group(3) or m.group(2))
        for r in range(lo, hi + 1):
            if r not in rules:
                bad.append('%s: %s has no rule %d' % (where, os.path.relpath(target, ROOT), r))
        return
    m = SECTIONS.match(rest)
    if not m:
        return
    nums = numbers(m.group(1))
    for n in nums:
        if n not in heads:
            bad.append('%s: %s has no section %s' % (where, os.path.relpath(target, ROOT), n))
    if m.group(2) and nums and nums[-1] in heads:
        kind, lo, hi = m.group(2), int(m.group(3)), int(m.group(4) or m.group(3))
        have = rules if kind.startswith('rule') else items(heads[nums[-1]][1])
        for r in range(lo, hi + 1):
            if r not in have:
                bad.append('%s: %s section %s has no %s %d' % (where, os.path.relpath(target, ROOT), nums[-1],
                                                               kind.rstrip('s'), r))


def main():
    bad = []
    for name in files():
        path = os.path.join(ROOT, name)
        if name in ALLOW or not os.path.isfile(path) or os.path.islink(path):
            continue
        with open(path, 'rb') as f:
            raw = f.read(1 << 20)
        if b'\0' in raw:
            continue
        text = raw.decode('utf-8', errors='replace')
        for i, line in enumerate(text.split('\n'), 1):
            if SHARED in line:
                bad.append('%s:%d: cites %s, outside the repository' % (name, i, SHARED))
            if WORKROOT.search(line):
                bad.append('%s:%d: cites an absolute path under %s, outside the repository'
                           % (name, i, '/wo' + 'rk/'))
        starts = [0] + [m.end() for m in re.finditer('\n', text)]
        for m in DOC.finditer(text):
            lineno = bisect.bisect_right(starts, m.start())
            word_start = max(text.rfind(c, 0, m.start()) for c in ' \t\n(<[`\'"') + 1
            if '://' in text[word_start:m.start()]:
                continue  # part of a URL
            where = '%s:%d' % (name, lineno)
            ref = m.group(1)
            cands = [os.path.normpath(os.path.join(os.path.dirname(path), ref))]
            if not ref.startswith('.'):
                cands.insert(0, os.path.normpath(os.path.join(ROOT, ref)))
            target = next((c for c in cands if os.path.isfile(c)), None)
            if not target or not target.startswith(ROOT + os.sep):
                bad.append('%s: cites %s, which the repository does not hold' % (where, ref))
                continue
            if m.group(2):
                if slug(m.group(2)[1:]) not in doc(target)[1] and m.group(2)[1:] not in doc(target)[1]:
                    bad.append('%s: %s has no heading %s' % (where, ref, m.group(2)))
                continue
            if doc(target)[0]:
                check_sections(where, target, following(text, m.end()), bad)
    for b in bad:
        print(b)
    if bad:
        print('check-citations: %d citation(s) of what the repository does not hold' % len(bad))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
