#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""test_docs.py [ROOT]: the figures a user would quote agree across README.md,
doc/, the man page and --help (tests/docs/figures.py), and the check
works.

Five kinds of check, each an "ok"/"FAIL" line as the integration tests
print them:
- agree: for each key, every figure of the same run (or of none) agrees;
  a FAIL names each place and what it says.
- found: each key the docs must state is found at least once, so that a
  rewording cannot leave the check comparing nothing.
- places: each figure's file:line holds the text read there.
- planted: in a copy of the docs, one figure of each key found is changed
  (where no other place states it alike, the unchanged file is copied
  beside it first); the check must name the changed place against one
  that still says the old figure.
- words: sentences like the docs' give the figures listed with them, and
  numbers beside the words that are about something else give none.
Ends with cmocka's summary lines and exits with the number of failures,
as tests/run-unit.sh reads a unit test (make unit-test, make test).
"""
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = sys.argv[1] if len(sys.argv) > 1 else \
	os.path.normpath(os.path.join(HERE, '..', '..'))
sys.dont_write_bytecode = True	# no __pycache__ left in the tree
sys.path.insert(0, HERE)
import figures  # noqa: E402
import sources  # noqa: E402
from summary import summary  # noqa: E402

results = []


def check(name, key, ok, msg, details=()):
	print(f'  {"ok    " if ok else "FAIL  "}{name}: {msg}')
	for d in details:
		print(f'        {d}')
	results.append((f'{name} {key}', ok))


def agree(found):
	bad = {}
	for key, run, classes in figures.disagreements(found):
		bad.setdefault(key, []).extend(
			figures.describe(key, run, classes)[1:])
	for key, (what, _) in figures.KEYS.items():
		sts = [s for s in found if s.key == key]
		if not sts:
			continue
		runs = {s.run for s in sts if s.run}
		msg = f'{what}: {len(sts)} figure{"s" if len(sts) > 1 else ""}'
		if runs:
			msg += f' ({len(runs)} named run{"s" if len(runs) > 1 else ""}' \
				', each compared apart)'
		if key in bad:
			check('agree', key, False, msg + ': they disagree', bad[key])
		else:
			check('agree', key, True, msg + ': no two disagree')


def stated(found):
	for key, (what, required) in figures.KEYS.items():
		if not required:
			continue
		where = [s.where() for s in found if s.key == key]
		check('found', key, bool(where),
		      f'{what}: ' + (', '.join(where) if where else
				     'stated nowhere in the words figures.py reads'))


def places(found, texts):
	"""Each figure's offsets hold its text: what planted() changes and
	what a FAIL line's file:line points at."""
	wrong = []
	for st in found:
		raw = texts[st.path][st.offset:st.end]
		if st.path.endswith('.8'):
			raw = sources.roff_text(sources.Text.at(raw, 0)).s
		if raw.split() != st.token.split():
			wrong.append(f'{st.where()}: "{raw}" where "{st.token}" was read')
	check('places', 'offsets', not wrong,
	      f'each of the {len(found)} figures is where its file:line says'
	      if not wrong else f'{len(wrong)} figures are not where they were read',
	      wrong)


# Sentences of the kinds the docs hold, each with what must be read in it
# (key, value as shown): the words listed in README.md, and numbers near
# them that are about something else.
WORDS = [
	('`--light` is about a third cheaper per I/O.', [('cost light', '0.6667')]),
	('`-F` costs +5% per I/O, `-p` 3% more and `-c` 0.97 of the default.',
	 [('cost flags', '1.05'), ('cost partitions', '1.03'),
	  ('cost cgroup', '0.97')]),
	('`--light` drops the bio programs: 0.57 of biolatency\'s.',
	 [('biolatency light', '0.57')]),
	('truestat 1613 ns per I/O, biolatency 1612 (1.00), `--light` 1107 (0.69).',
	 [('biolatency default', '1.001'), ('biolatency light', '0.69')]),
	('`make test` takes about 22 minutes on a 2-core VM.',
	 [('make test time', '1320')]),
	('The request table: 16384 slots by default, up to 1048576 slots.',
	 [('rq table default', '16384'), ('rq table range', '? to 1048576')]),
	('It attaches to ten block tracepoints.', [('tracepoints', '10')]),
	('truestat needs Linux 5.10 or later with BTF.', [('oldest kernel', '5.10')]),
	('On Linux 5.14 and later, md counts a discard once.', []),
	('With `--light`, 20% less QUEUE time is seen where tags are short.', []),
	('The depth beyond which throughput grows by less than +20% per doubling.', []),
	('With the request table full, records went up to 5-6 slots from their hash.', []),
	('`TRUESTAT_TEST_RQ_SLOTS=N` (a power of two, 4 to 1048576) sizes the request table.', []),
	('One older kernel (6.1: 68 s for its four cases in a fresh clone\'s `make test`) runs.', []),
	('`make test-kernels` takes about 30 minutes more.', []),
	('With `--light` 205 ns at issue and 199 ns at completion (biolatency: 354 ns at each).', []),
	('svctm is S/K, a quarter of the real service time.', []),
	('Each I/O queued for 536 ns, then 708 ns in the device, per I/O.', []),
]


def words():
	"""WORDS read as a page of the docs: each sentence gives what it lists,
	nothing more."""
	tmp = tempfile.mkdtemp(prefix='truestat-docs-')
	try:
		os.makedirs(os.path.join(tmp, 'doc'))
		with open(os.path.join(tmp, 'doc', 'words.md'), 'w') as f:
			f.write('\n\n'.join(w for w, _ in WORDS) + '\n')
		found = figures.extract(tmp, ['doc/words.md'])
	finally:
		shutil.rmtree(tmp)
	wrong = []
	for n, (sentence, want) in enumerate(WORDS):
		got = sorted((s.key, str(s.value)) for s in found
			     if s.line == 2 * n + 1)
		if got != sorted(want):
			wrong.append(f'"{sentence}": read {got}, not {sorted(want)}')
	check('words', 'sentences', not wrong,
	      f'{len(WORDS)} sentences read as README.md says, unrelated '
	      'numbers beside the words not read' if not wrong else
	      f'{len(wrong)} of {len(WORDS)} sentences read otherwise', wrong)


WORD_CHANGE = {'half': 'fifth', 'third': 'fifth', 'quarter': 'fifth',
	       'fifth': 'third', 'tenth': 'third', 'twice': 'three times',
	       'three times': 'twice', 'four times': 'twice'}


def changed(token, taken):
	"""TOKEN (a figure's number or word) made something else, not in
	TAKEN (what the other places of its key say)."""
	m = re.match(r'[+\u2212-]?(\d[\d,]*)(?:\.(\d+))?', token)
	if m:
		frac = m.group(2) or ''
		digits = m.group(1).replace(',', '') + frac
		for k in (7, 13, 29, 53, 101):
			n = str(int(digits) + k).rjust(len(digits), '0')
			whole = n[:len(n) - len(frac)] if frac else n
			if ',' in m.group(1):
				whole = f'{int(whole):,}'
			new = token[:m.start(1)] + whole + \
				('.' + n[len(n) - len(frac):] if frac else '') + \
				token[m.end():]
			if new not in taken:
				return new
		return None
	low = ' '.join(token.lower().split())
	if low in WORD_CHANGE:
		return WORD_CHANGE[low]
	if low in figures.WORDS:
		return figures.WORDS[(figures.WORDS.index(low) + 3) %
				     len(figures.WORDS)]
	return None


def twin(path):
	return os.path.join(os.path.dirname(path),
			    'planted-' + os.path.basename(path))


def compared(peer, st):
	"""Whether PEER states the part of ST's figure that a change of its
	token changes: of a range, the end that token is."""
	v = st.value
	if not isinstance(v, figures.Range) or v.lo is v.hi:
		return True
	end = 'hi' if st.group == 'hi' else 'lo'
	return getattr(peer.value, end) is not None


def plan(found, texts):
	"""One figure of each key to change: (statement, new token, peers).

	Its peers: the other places of its key and run that agreed with it,
	or, when none did, the copy of its file that planted() puts beside
	it; the check must name the changed place against one of them.
	"""
	by = figures.groups(found)
	edits, spans = [], []
	for key in figures.KEYS:
		runs = sorted((r for k, r in by if k == key),
			      key=lambda r: (r is not None, -len(by[(key, r)])))
		if not runs:
			continue
		group = by[(key, runs[0])]
		taken = {s.token for s in found if s.key == key}

		def peers(st):
			return [s for s in group if s is not st and
				s.value.agrees(st.value) and compared(s, st)]
		for st in sorted(group, key=lambda s: (not peers(s), s.path,
						       s.line)):
			if any(p == st.path and a < st.end and st.offset < b
			       for p, a, b in spans):
				continue
			new = changed(texts[st.path][st.offset:st.end], taken)
			if new is None:
				continue
			spans.append((st.path, st.offset, st.end))
			edits.append((st, new, [s.where() for s in peers(st)]))
			break
	return edits


def planted(found, texts):
	edits = plan(found, texts)
	copies, twins = dict(texts), {}
	for st, new, peers in edits:
		if not peers:
			twins[twin(st.path)] = texts[st.path]
			peers.append(f'{twin(st.path)}:{st.line}')
	for st, new, _ in sorted(edits, key=lambda e: -e[0].offset):
		t = copies[st.path]
		copies[st.path] = t[:st.offset] + new + t[st.end:]
	copies.update(twins)
	tmp = tempfile.mkdtemp(prefix='truestat-docs-')
	try:
		for p, text in copies.items():
			dest = os.path.join(tmp, p)
			os.makedirs(os.path.dirname(dest), exist_ok=True)
			with open(dest, 'w', encoding='utf-8') as f:
				f.write(text)
		bad = figures.disagreements(figures.extract(tmp, list(copies)))
	finally:
		shutil.rmtree(tmp)
	for st, new, peers in edits:
		named = False
		for key, run, classes in bad:
			places = [{s.where(): s.token for s in c} for c in classes]
			mine = [c for c in places if c.get(st.where()) == new]
			named = named or bool(mine) and any(
				p in c for c in places if c not in mine for p in peers)
		old = texts[st.path][st.offset:st.end]
		check('planted', st.key, named,
		      f'{figures.KEYS[st.key][0]}: "{old}" made "{new}" at '
		      f'{st.where()}: the check ' +
		      ('names it against ' if named else 'does not name it against ')
		      + ', '.join(peers))


def main():
	texts = {}
	for p in figures.sources(ROOT):
		with open(os.path.join(ROOT, p), encoding='utf-8') as f:
			texts[p] = f.read()
	found = figures.extract(ROOT, list(texts))
	agree(found)
	stated(found)
	places(found, texts)
	planted(found, texts)
	words()
	return summary(results)


if __name__ == '__main__':
	sys.exit(main())
