#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""test_layers.py [ROOT]: user/'s folders are layers, each using only those
above it in the Makefile's USER_DIRS (lib, features, core, findings,
output, exporter, cli: doc/building.md), and the check works.

- layers: every #include "FOLDER/..." of a file under user/FOLDER2/ names
  a FOLDER at or above FOLDER2; a FAIL names the file, its line and the
  include. A bare #include "x.h" is of the file's own folder.
- planted: an include of the last layer, planted in a file of the first,
  is named.
- layout: every .c file under user/ is named in doc/building.md's layout
  (as `name.c`), and every user/ .c file that layout names exists.
Ends with cmocka's summary lines and exits with the number of failures,
as tests/run-unit.sh reads a unit test.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = sys.argv[1] if len(sys.argv) > 1 else \
	os.path.normpath(os.path.join(HERE, '..', '..'))
sys.dont_write_bytecode = True	# no __pycache__ left in the tree
sys.path.insert(0, HERE)
from summary import summary  # noqa: E402

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)

results = []


def check(name, ok, msg):
	print(f'  {"ok    " if ok else "FAIL  "}{name}: {msg}')
	results.append((name, ok))


def layers():
	"""The Makefile's USER_DIRS, top (used by all) first."""
	with open(os.path.join(ROOT, 'Makefile'), encoding='utf-8') as f:
		m = re.search(r'^USER_DIRS\s*:=\s*(.+)$', f.read(), re.M)
	return m.group(1).split() if m else []


def against(order, folder, text):
	"""(line, include) of @text, in user/@folder, that use a lower layer."""
	rank = {d: i for i, d in enumerate(order)}
	out = []
	for m in INCLUDE.finditer(text):
		used = m.group(1)
		if used in rank and rank[used] > rank[folder]:
			out.append((text.count('\n', 0, m.start()) + 1, m.group(0).strip()))
	return out


def layout(order):
	"""doc/building.md's user/ list against the tree, both ways."""
	with open(os.path.join(ROOT, 'doc', 'building.md'), encoding='utf-8') as f:
		doc = f.read()
	m = re.search(r'^`user/`.*?(?=^`man/)', doc, re.M | re.S)
	text = m.group(0) if m else ''
	named = set(re.findall(r'`([a-z_0-9]+\.c)`', text))
	tree = set()
	for folder in order:
		d = os.path.join(ROOT, 'user', folder)
		tree |= {n for n in (os.listdir(d) if os.path.isdir(d) else []) if n.endswith('.c')}
	check('layout_named', bool(text) and not tree - named,
	      f'{len(tree)} files under user/, each named in doc/building.md'
	      if not tree - named else 'not in doc/building.md: ' + ', '.join(sorted(tree - named)))
	check('layout_exists', bool(named) and not named - tree,
	      f'{len(named)} files the layout names, each there'
	      if not named - tree else 'named but not in user/: ' + ', '.join(sorted(named - tree)))


def main():
	order = layers()
	check('layers_read', len(order) >= 2, f'USER_DIRS: {" ".join(order) or "not found"}')
	bad, files = [], 0
	for folder in order:
		d = os.path.join(ROOT, 'user', folder)
		for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
			if not name.endswith(('.c', '.h')):
				continue
			files += 1
			with open(os.path.join(d, name), encoding='utf-8') as f:
				for line, inc in against(order, folder, f.read()):
					bad.append(f'user/{folder}/{name}:{line}: {inc}')
	check('layers', not bad and files > 0,
	      f'{files} files, each using only its folder and those above it'
	      if not bad else f'{len(bad)} includes against the layers: ' + '; '.join(bad))
	if order:
		planted = f'#include "{order[-1]}/x.h"\n'
		check('planted', bool(against(order, order[0], planted)),
		      f'an include of {order[-1]}/ in {order[0]}/ is named')
	layout(order)
	return summary(results)


if __name__ == '__main__':
	sys.exit(main())
