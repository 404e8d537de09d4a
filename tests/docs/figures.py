#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""figures.py [--list] [--key TEXT] [ROOT]: the figures a user would quote,
as README.md, doc/**/*.md, man/*.8 and the --help text (user/cli/opts.c)
state them, and the places that state one differently.

Each figure is read only in the words listed in tests/docs/README.md and
keyed by what it is about (an option's cost, make test's time, ...) and,
when its clause (or its table row, or the paragraph above that table)
names a run by a date or as another machine, by that run too. Figures of
the same key and the same run (or of no named run) must agree: "a third
cheaper" and "33% less" do, "a quarter less" and "24%" do not (each is
compared at the coarser figure's precision). Prints each disagreement
with both places (file:line and the text) and exits 1; --list prints
every figure found instead.
"""
import os
import re
import sys
from fractions import Fraction

sys.dont_write_bytecode = True	# no __pycache__ left in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sources import parse  # noqa: E402

# What a figure can be about: key -> (what it is, required on the docs).
KEYS = {
	'cost light': ('the cost per I/O of -L/--light, against the default', True),
	'cost slow': ('the cost per I/O of --slow, against the default', True),
	'cost by': ('the cost per I/O of --by, against the default', True),
	'cost pattern': ('the cost per I/O of --pattern, against the default', True),
	'cost flags': ('the cost per I/O of -F/--flags, against the default', True),
	'cost partitions': ('the cost per I/O of -p/--partitions, against the default', True),
	'cost cgroup': ('the cost per I/O of -c/--cgroup, against the default', True),
	'cost raw-tp': ('the cost per I/O of --raw-tp, against the default', False),
	'cost locked': ('the cost per I/O of the build with locked atomics (before 5.12)', False),
	'biolatency default': ("truestat's BPF time per I/O over biolatency's", True),
	'biolatency light': ("--light's BPF time per I/O over biolatency's", False),
	'make test time': ('how long make test takes', True),
	'rq table default': ("the request table's default size (slots)", True),
	'rq table range': ("the request table's size, smallest to largest (slots)", True),
	'bio table default': ("the bio table's default size (slots)", False),
	'bio table range': ("the bio table's size, smallest to largest (slots)", False),
	'tracepoints': ('the block tracepoints truestat attaches to', True),
	'oldest kernel': ('the oldest kernel truestat runs on', True),
	'oldest kernel tested': ('the oldest kernel truestat ran on in tests', False),
}


# ---- values: a figure with the precision it was stated at ----

class Num:
	"""v in the key's unit; step: the figure's last digit (0: exact)."""

	def __init__(self, v, step=0):
		self.v, self.step = Fraction(v), Fraction(step)

	def agrees(self, o):
		step = max(self.step, o.step)
		if step == 0:
			return self.v == o.v
		# round half up, the same for both
		return (self.v / step + Fraction(1, 2)) // 1 == \
			(o.v / step + Fraction(1, 2)) // 1

	def __str__(self):
		if self.v.denominator == 1:
			return str(self.v.numerator)
		return f'{float(self.v):.4g}'


def dec(s, unit=1):
	"""A decimal as written: its value and its last digit's step."""
	s = s.replace(',', '')
	d = len(s.split('.')[1]) if '.' in s else 0
	return Num(Fraction(s) * unit, Fraction(unit) / 10 ** d)


class Range:
	def __init__(self, lo, hi):
		self.lo, self.hi = lo, hi

	def agrees(self, o):
		for a, b in ((self.lo, o.lo), (self.hi, o.hi)):
			if a is not None and b is not None and not a.agrees(b):
				return False
		return True

	def __str__(self):
		lo = '?' if self.lo is None else str(self.lo)
		hi = '?' if self.hi is None else str(self.hi)
		return lo if lo == hi else f'{lo} to {hi}'


class Version:
	def __init__(self, s):
		self.parts = tuple(int(x) for x in s.split('.'))

	def agrees(self, o):
		n = min(len(self.parts), len(o.parts))
		return self.parts[:n] == o.parts[:n]

	def __str__(self):
		return '.'.join(map(str, self.parts))


class Statement:
	"""A figure: its key, value and run, where it is and how it reads.

	offset, end: in the file, of the part a self-test changes (a number
	or a word); fig: the figure as written (the whole phrase).
	"""

	def __init__(self, key, value, scope, m, group, run):
		self.key, self.value, self.run = key, value, run
		self.path = scope.path
		self.scope = scope
		text = scope.text
		a, b = m.span(group)
		self.offset = text.pos[a]
		self.end = text.pos[b - 1] + 1
		self.token = m.group(group)
		self.group = group
		d = m.groupdict()
		show = 'cost' if d.get('cost') else 'time' if d.get('time') else 0
		self.fig = ' '.join(m.group(show).replace('`', '').split())
		self.line = None

	def where(self):
		return f'{self.path}:{self.line}'

	def quote(self, width=150):
		s = self.scope.text.s
		i = s.find(self.token)
		if len(s) > width:
			lo = max(0, min(i - width // 2, len(s) - width))
			s = ('...' if lo else '') + s[lo:lo + width] + \
				('...' if lo + width < len(s) else '')
		if self.scope.kind == 'entry':
			s = f'{self.scope.subject.strip()}  {s}'
		return s

	def shown(self):
		"""The value in the key's unit, as the report prints it."""
		v = self.value
		if self.key.startswith('cost'):
			r = float(v.v)
			of = 'the build with atomic instructions' \
				if self.key == 'cost locked' else 'the default'
			return f'{r:.3g}x {of} ({(r - 1) * 100:+.3g}%)'
		if self.key == 'make test time':
			lo, hi = (f'{float(x.v):.0f} s' for x in (v.lo, v.hi))
			return lo if lo == hi else f'{lo} to {hi}'
		return str(v)


# ---- what names a run: a date, another machine; a command refines it ----

DATE = re.compile(r'\b20\d\d-\d\d-\d\d\b')
MACHINE = re.compile(r'\b(?:another|an earlier|a later|a second|the other|'
		     r'a different|a faster|a slower)\s+(?:machine|VM|host)\b',
		     re.I)
COMMAND = re.compile(r'`([^`]*(?:bench/overhead\.sh|\.ci/run|tests/run-'
		     r'|tests/vm/run\.sh|make test)[^`]*)`')


def markers(s):
	m = sorted(set(DATE.findall(s))) + \
		[x.lower() for x in MACHINE.findall(s)]
	return m


def run_of(scope):
	if scope.kind == 'row':
		row = scope.text.s
		if markers(row):
			first = scope.cells[0].s if scope.cells else ''
			return '; '.join(markers(row) + [first])
		s = scope.caption.s if scope.caption else ''
	else:
		s = scope.text.s
	m = markers(s)
	if not m:
		return None
	cmds = [' '.join(c.split()) for c in COMMAND.findall(s)]
	return '; '.join(m + cmds[:1])


# ---- options ----

OPTS = [
	('light', r'--light|-L'),
	('slow', r'--slow(?:=[\w.]+)?'),
	('by', r'--by(?:=[\w|]+)?'),
	('pattern', r'--pattern'),
	('flags', r'--flags|-F'),
	('partitions', r'--partitions(?:=[\w,]+)?|-p'),
	('cgroup', r'--cgroup(?:=[^\s`,;)]+)?|-c'),
	('raw_tp', r'--raw-tp'),
]
OPTION = re.compile(
	r'(?<![\w/.-])`?(?:truestat[ ])?(?:'
	+ '|'.join(f'(?P<{n}>{r})' for n, r in OPTS)
	+ r'|truestat-(?P<bench>light|slow|by|pattern|flags|partitions|cgroup|raw_tp))'
	r'(?![\w-])`?')


def option_of(m):
	if m.group('bench'):
		return m.group('bench').replace('_', '-')
	for n, _ in OPTS:
		if m.group(n):
			return n.replace('_', '-')


def options_in(s):
	return [(m, option_of(m)) for m in OPTION.finditer(s)]


def last_option_before(s, i):
	found = None
	for m, o in options_in(s[:i]):
		found = o
	return found


# ---- costs: as a ratio to the default's BPF time per I/O ----

FRACTION = {'half': Fraction(1, 2), 'third': Fraction(1, 3),
	    'quarter': Fraction(1, 4), 'fifth': Fraction(1, 5),
	    'tenth': Fraction(1, 10)}
TIMES = {'twice': 2, 'three times': 3, 'four times': 4}
# after "less"/"more": the end of the phrase, or what it is of
AFTER = r'(?=\s*(?:$|[,.;:()]|per\b|BPF\b|than\b|in\b|CPU\b|time\b|and\b))'
COST = (
	r'(?P<cost>(?P<sp>[+\u2212-]\d+(?:\.\d+)?)\s?%'
	r'(?=\s*(?:$|[,.;:()]|per\b|BPF\b|than\b|over\b|against\b|of\b|vs\b))'
	r'|(?P<up>\d+(?:\.\d+)?)\s?%\s(?P<d1>more|less|cheaper|dearer)' + AFTER +
	r'|(?:a|one)\s(?P<fw>half|third|quarter|fifth|tenth)\s'
	r'(?P<d2>more|less|cheaper|dearer)' + AFTER +
	r'|(?P<mw>twice|three\stimes|four\stimes|(?P<mn>\d+(?:\.\d+)?)\stimes)'
	r'\s(?:the\sdefault|as\smuch)'
	r'|(?P<rt>\d\.\d+)\s(?:of|times)\sthe\sdefault(?:\'s)?)')
SOFT = r'(?:(?:about|roughly|around|some|only|just)\s+)?'
CONNECT = re.compile(r'`?(?:\s*\([^()\d]{0,60}\))?\s*(?:[:,]\s*)?'
		     r'(?:(?:is|are|costs?|adds?|takes?)\s+)?' + SOFT + COST, re.I)
COSTS_VERB = re.compile(r'[^\d%;`]{0,80}?\bcosts?\s+' + SOFT + COST, re.I)
ENTRY_START = re.compile(r'\s*' + SOFT + COST, re.I)


def cost_value(m):
	g = m.group
	if g('sp'):
		p = dec(g('sp').replace('\u2212', '-').replace('+', ''),
			Fraction(1, 100))
		return Num(1 + p.v, p.step)
	if g('up'):
		p = dec(g('up'), Fraction(1, 100))
		sign = -1 if g('d1').lower() in ('less', 'cheaper') else 1
		return Num(1 + sign * p.v, p.step)
	if g('fw'):
		f = FRACTION[g('fw').lower()]
		sign = -1 if g('d2').lower() in ('less', 'cheaper') else 1
		return Num(1 + sign * f)
	if g('mn'):
		return dec(g('mn'))
	if g('mw'):
		return Num(TIMES[' '.join(g('mw').lower().split())], 1)
	return dec(g('rt'))


def cost_group(m):
	for g in ('sp', 'up', 'fw', 'mw', 'rt'):
		if m.group(g):
			return g


def costs(scope, out):
	s = scope.text.s
	for om, opt in options_in(s) if '-' in s else ():
		for pat in (CONNECT, COSTS_VERB):
			m = pat.match(s, om.end())
			if m and not options_in(m.group(0)[:m.start(cost_group(m))
							   - m.start()]):
				out(f'cost {opt}', cost_value(m), m, cost_group(m))
				break
	if scope.kind != 'entry':
		return
	subject = [o for _, o in options_in(scope.subject or '')]
	if not subject:
		return
	m = ENTRY_START.match(s) if scope.first else None
	if not m:
		m = re.search(r'\bcosts?\s+' + SOFT + COST, s, re.I)
		if m and options_in(s[:m.start()]):
			m = None
	if m:
		out(f'cost {subject[-1]}', cost_value(m), m, cost_group(m))


def table_costs(scope, out):
	col = column(scope, r'\bvs\.?\s+(?:the\s+)?default\b|\bagainst the default\b'
		     r'|\bover the default\b|\bthan the default\b'
		     r'|\bof the default(?:\'s)?(?!\w)')
	if col is None:
		return
	opts = options_in(scope.cells[0].s)
	if not opts:
		return
	cell = scope.cells[col]
	m = re.match(r'\s*(?:(?P<sp>[+\u2212-]?\d+(?:\.\d+)?)\s?%|(?P<rt>\d\.\d+)\b)',
		     cell.s)
	if not m:
		return
	if m.group('sp'):
		p = dec(m.group('sp').replace('\u2212', '-').replace('+', ''),
			Fraction(1, 100))
		v, g = Num(1 + p.v, p.step), 'sp'
	else:
		v, g = dec(m.group('rt')), 'rt'
	out(f'cost {opts[0][1]}', v, m, g, text=cell)


def column(scope, pattern):
	if scope.kind != 'row' or not scope.header:
		return None
	for i, h in enumerate(scope.header):
		if re.search(pattern, h, re.I) and i < len(scope.cells):
			return i
	return None


# ---- BPF time per I/O over biolatency's ----

PER_IO = re.compile(r'\b(?:per|each|an?)\s+I/O\b', re.I)
N = r'\d{1,3}(?:,\d{3})+|\d+'


def biolatency(scope, out):
	s = scope.text.s
	if 'biolatency' not in s:
		return

	def mode(i):
		o = last_option_before(s, i)
		return 'default' if o is None else o

	def said(key, *a):
		if key in KEYS:
			out(key, *a)

	for m in re.finditer(r'(?P<r>\d\.\d+)\s+(?:of|times)\s+biolatency(?:\'s)?\b', s):
		said(f'biolatency {mode(m.start())}', dec(m.group('r')), m, 'r')
	if PER_IO.search(s):
		for m in re.finditer(
				r'(?P<a>' + N + r')\s*ns\b(?P<gap>[^\d;]{0,60}?)'
				r'\bbiolatency(?:\'s)?\s+(?P<b>' + N + r')\b', s):
			if re.search(r'per call|at issue|at completion',
				     m.group('gap')):
				continue
			a, b = (int(m.group(x).replace(',', '')) for x in 'ab')
			said(f'biolatency {mode(m.start())}', Num(Fraction(a, b)),
			    m, 'a')
	for m in re.finditer(r'`?(?:--light|-L)`?\s+(?:' + N +
			     r')(?:\s*ns)?\s*\((?P<r>\d\.\d+)\)', s):
		out('biolatency light', dec(m.group('r')), m, 'r')


def table_biolatency(scope, out):
	if scope.kind != 'row' or not scope.header:
		return
	first = scope.cells[0].s.replace('`', '')
	if re.fullmatch(r'truestat(?:\s*\([^)]*\))?', first):
		mode = 'default'
	elif first.startswith('truestat') and options_in(first):
		mode = options_in(first)[0][1]
	else:
		mode = None
	for col, h in enumerate(scope.header[:len(scope.cells)]):
		h = h.replace('`', '').strip()
		if re.search(r'\bvs\.?\s+biolatency\b', h, re.I):
			key = mode and f'biolatency {mode}'
		elif re.fullmatch(r'truestat\s*/\s*biolatency', h):
			key = 'biolatency default'
		elif re.fullmatch(r'(?:--light|-L)\s*/\s*biolatency', h):
			key = 'biolatency light'
		else:
			continue
		m = re.match(r'\s*(?P<r>\d+\.\d+)\b', scope.cells[col].s)
		if key in KEYS and m:
			out(key, dec(m.group('r')), m, 'r', text=scope.cells[col])


# ---- make test's time, in seconds ----

UNIT = {'s': 1, 'sec': 1, 'second': 1, 'seconds': 1, 'min': 60, 'mins': 60,
	'minute': 60, 'minutes': 60, 'h': 3600, 'hour': 3600, 'hours': 3600}
TIME = (r'(?P<time>(?P<t1>\d+(?:\.\d+)?)(?:\s*(?:to|-|\u2013)\s*(?P<t2>\d+(?:\.\d+)?))?'
	r'\s*(?P<u>seconds?|sec|s|minutes?|mins?|hours?|h)\b)')
# make test, or the command of CI, which runs make test and nothing else
MAKE_TEST = r'(?:`?make test`?(?![\w-])|`[^`]*\.ci/run\b[^`]*`)'
MAKE_TEST_TIME = [
	re.compile(MAKE_TEST + r'\s+(?:takes|took|ran|runs|lasts|lasted)\b'
		   r'[^\d;`]{0,60}?' + SOFT + TIME),
	re.compile(MAKE_TEST + r'[^\d;`]{0,40}?:\s*' + SOFT + TIME),
	re.compile(MAKE_TEST + r'\s*\(' + SOFT + TIME),
]


def time_value(m):
	unit = UNIT[m.group('u')]
	lo = dec(m.group('t1'), unit)
	if m.group('t2'):
		return Range(lo, dec(m.group('t2'), unit))
	return Range(lo, lo)


def make_test(scope, out):
	if 'make test' not in scope.text.s and '.ci/run' not in scope.text.s:
		return
	for pat in MAKE_TEST_TIME:
		for m in pat.finditer(scope.text.s):
			out('make test time', time_value(m), m, 't1')


def table_make_test(scope, out):
	col = column(scope, r'^`?make test`?$|\bmake test\b.*\b(?:time|takes|took)\b')
	if col is None:
		return
	m = re.match(r'\s*' + SOFT + TIME, scope.cells[col].s)
	if m:
		out('make test time', time_value(m), m, 't1',
		    text=scope.cells[col])


# ---- the request and bio tables' sizes, in slots ----

TABLE = re.compile(r'\b(?P<tn>request|in-flight|rq|bio)[ _-]table(?:_full)?\b`?')
SLOTS = r'\s+(?:(?P<tn2>request|bio)\s+)?slots\b'
SIZES = [
	('range', re.compile(r'(?:\bfrom\s+|\bbetween\s+)?(?P<lo>' + N + r')\s*'
			     r'(?:to|and|-|\u2013|\.\.)\s*(?P<hi>' + N + r')' + SLOTS)),
	('lo', re.compile(r'\b(?:at least|from)\s+(?P<lo>' + N + r')' + SLOTS +
			  r'(?!\s*(?:to|and)\b)')),
	('hi', re.compile(r'\b(?:up to|at most)\s+(?P<hi>' + N + r')' + SLOTS)),
	('default', re.compile(r'(?P<n>' + N + r')' + SLOTS +
			       r'\s*(?:by default|\(the default\)|\(default\))')),
	('default', re.compile(r'\b(?:by default,?|default(?:\s+size)?(?:\s+of|:|,)?)'
			       r'\s+(?P<n>' + N + r')' + SLOTS)),
]
BARE = re.compile(TABLE.pattern + r'\s*\((?P<n>' + N + r')\s+slots\)')


def table_name(s, m):
	if m.group('tn2'):
		return 'rq' if m.group('tn2') == 'request' else 'bio'
	name = None
	for t in TABLE.finditer(s[:m.start()]):
		name = t
	if name is None:
		return None
	gap = s[name.end():m.start()]
	if len(gap) > 300 or re.match(r'\s+(?:from|away)\b', s[m.end():]):
		return None
	return 'bio' if name.group('tn') == 'bio' else 'rq'


def slots(x):
	return dec(x) if x else None


def table_sizes(scope, out):
	s = scope.text.s
	if 'slots' not in s:
		return
	taken = set()
	for m in BARE.finditer(s):
		t = 'bio' if m.group('tn') == 'bio' else 'rq'
		n = slots(m.group('n'))
		taken.add(m.start('n'))
		out(f'{t} table range', Range(n, n), m, 'n')
	for kind, pat in SIZES:
		for m in pat.finditer(s):
			g = 'n' if kind == 'default' else \
				('hi' if kind == 'hi' else 'lo')
			if m.start(g) in taken:
				continue
			t = table_name(s, m)
			if t is None:
				continue
			taken.add(m.start(g))
			if kind == 'default':
				out(f'{t} table default', slots(m.group('n')), m, 'n')
			else:
				out(f'{t} table range',
				    Range(slots(m.groupdict().get('lo')),
					  slots(m.groupdict().get('hi'))), m, g)


# ---- block tracepoints, the oldest kernel ----

WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven',
	 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen',
	 'fifteen', 'sixteen']
NUMBER = r'(?P<n>' + '|'.join(WORDS) + r'|\d+)'


def tracepoints(scope, out):
	s = scope.text.s
	if 'tracepoints' not in s:
		return
	if any(o == 'light' for _, o in options_in(s)):
		return
	for m in re.finditer(r'\b' + NUMBER + r'\s+block\s+tracepoints\b', s, re.I):
		n = m.group('n').lower()
		out('tracepoints', Num(WORDS.index(n) if n in WORDS else int(n)),
		    m, 'n')


V = r'(?P<v>\d+\.\d+(?:\.\d+)?)'
KERNEL = [
	# what truestat needs, or a list's or a line's head: not "on Linux
	# 5.14 and later, md ..."
	('oldest kernel', re.compile(
		r'\b(?i:needs|requires|supports|runs on|run on|works on)\b'
		r'[^.;\d]{0,80}?\bLinux\s+' + V +
		r'\s+(?:or|and)\s+(?:later|newer|above)\b')),
	('oldest kernel', re.compile(
		r'(?:^|[:(]\s*)Linux\s+' + V + r'\s+(?:or|and)\s+(?:later|newer)\b')),
	('oldest kernel', re.compile(
		r'\boldest\s+(?:supported\s+)?kernel(?:\s+(?:it|truestat)\s+'
		r'(?:supports|runs on))?\s+is\s+(?:Linux\s+)?' + V)),
	('oldest kernel', re.compile(
		r'\b(?:[Nn]ot supported|[Uu]nsupported|[Rr]efused)\b[^.;]{0,40}?\bkernels?\s+'
		r'older\s+than\s+(?:Linux\s+)?' + V + r'\b')),
	('oldest kernel', re.compile(
		r'\bkernels?\s+older\s+than\s+(?:Linux\s+)?' + V + r'\b[^.;]{0,40}?'
		r'\b(?:are|is)\s+(?:not supported|unsupported|refused)')),
	('oldest kernel tested', re.compile(
		r'\boldest\s+kernel\s+(?:it|truestat)\s+(?:ran|runs|has run|'
		r'was run|was tested|is tested)\s+on(?:\s+in\s+tests)?\s+is\s+'
		r"(?:[A-Z][\w.]*\s+(?:\d+(?:\.\d+)?'s\s+)?)?" + V)),
]


def kernels(scope, out):
	if 'Linux' not in scope.text.s and 'kernel' not in scope.text.s:
		return
	taken = set()
	for key, pat in KERNEL:
		for m in pat.finditer(scope.text.s):
			if m.start('v') in taken:
				continue
			taken.add(m.start('v'))
			out(key, Version(m.group('v')), m, 'v')


def locked(scope, out):
	if 'BPF time' not in scope.text.s or not re.search(r'\block', scope.sentence.s):
		return
	for m in re.finditer(r'(?:about\s+|roughly\s+)?(?P<mw>twice|three\s+times|'
			     r'(?P<mn>\d+(?:\.\d+)?)\s+times)\s+the\s+BPF\s+time',
			     scope.text.s):
		v = dec(m.group('mn')) if m.group('mn') else \
			Num(TIMES[' '.join(m.group('mw').split())], 1)
		out('cost locked', v, m, 'mw')


PROSE = [costs, biolatency, make_test, table_sizes, tracepoints, kernels,
	 locked]
TABLE_ROW = [table_costs, table_biolatency, table_make_test]


# ---- reading the docs ----

def sources(root):
	"""The files read, relative to ROOT: those an operator reads."""
	found = ['README.md']
	for d, dirs, files in os.walk(os.path.join(root, 'doc')):
		dirs.sort()
		for f in sorted(files):
			if f.endswith('.md'):
				found.append(os.path.relpath(os.path.join(d, f), root))
	man = os.path.join(root, 'man')
	if os.path.isdir(man):
		found += sorted(os.path.join('man', f) for f in os.listdir(man)
				if re.search(r'\.[1-9]$', f))
	found.append('user/cli/opts.c')
	return [p for p in found if os.path.isfile(os.path.join(root, p))]


def extract(root, paths=None):
	"""Every figure of a known key in the docs under ROOT."""
	found = []
	for path in paths or sources(root):
		with open(os.path.join(root, path), encoding='utf-8') as f:
			src = f.read()
		starts = [0] + [m.end() for m in re.finditer('\n', src)]
		here, taken = [], set()

		def emitter(scope, row=None):
			"""out(key, value, match, group[, text]) for SCOPE, the
			match made in TEXT (a cell of ROW) or in SCOPE's text."""
			def out(key, value, m, group, text=None):
				sc = scope if text is None else _Cell(scope, text)
				st = Statement(key, value, sc, m, group,
					       run_of(row or scope))
				if (key, st.offset) not in taken:
					taken.add((key, st.offset))
					here.append(st)
			return out
		for scope in parse(path, src):
			if scope.kind != 'row':
				for f in PROSE:
					f(scope, emitter(scope))
				continue
			for f in TABLE_ROW:
				f(scope, emitter(scope))
			for cell in scope.cells:
				cs = _Cell(scope, cell)
				for f in PROSE:
					f(cs, emitter(cs, scope))
		for st in here:
			st.line = _line(starts, st.offset)
		found += here
	return found


class _Cell:
	"""A table cell read as a scope: the row kept for the quote."""

	def __init__(self, row, text):
		self.path, self.kind, self.row = row.path, 'cell', row
		self.text = self.sentence = text
		self.first = False

	def __getattr__(self, name):
		return getattr(self.row, name)


def _line(starts, offset):
	lo, hi = 0, len(starts)
	while hi - lo > 1:
		mid = (lo + hi) // 2
		if starts[mid] <= offset:
			lo = mid
		else:
			hi = mid
	return lo + 1


def groups(statements):
	"""Statements by (key, run): those that must agree."""
	by = {}
	for st in statements:
		by.setdefault((st.key, st.run), []).append(st)
	return by


def disagreements(statements):
	"""[(key, run, [(value text, [statements])...])]: the figures that
	disagree, each with every place that states it."""
	found = []
	for (key, run), sts in sorted(groups(statements).items(),
				      key=lambda kv: (kv[0][0], kv[0][1] or '')):
		classes = []
		for st in sts:
			for c in classes:
				if c[0].value.agrees(st.value) and \
						str(c[0].value) == str(st.value):
					c.append(st)
					break
			else:
				classes.append([st])
		bad = set()
		for i, a in enumerate(classes):
			for b in classes[i + 1:]:
				if not a[0].value.agrees(b[0].value):
					bad.add(id(a))
					bad.add(id(b))
		if bad:
			found.append((key, run, [c for c in classes if id(c) in bad]))
	return found


def describe(key, run, classes):
	what = KEYS[key][0]
	lines = [f'{what}{" (run: " + run + ")" if run else ""}: '
		 f'{len(classes)} different figures']
	for c in classes:
		lines.append(f'  "{c[0].fig}" ({c[0].shown()}):')
		for st in c:
			lines.append(f'    {st.where()}: {st.quote()}')
	return lines


def main(argv):
	args = argv[1:]
	listing = '--list' in args
	key = None
	if '--key' in args:
		key = args[args.index('--key') + 1]
		args.remove('--key')
		args.remove(key)
	args = [a for a in args if a != '--list']
	root = args[0] if args else \
		os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
	found = [st for st in extract(root) if not key or key in st.key]
	if listing:
		for st in sorted(found, key=lambda s: (s.key, s.run or '', s.path,
							s.line)):
			print(f'{st.key} | {st.run or "-"} | "{st.fig}" = {st.shown()} | '
			      f'{st.where()} | {st.quote()}')
		return 0
	bad = disagreements(found)
	for k, run, classes in bad:
		print('\n'.join(describe(k, run, classes)))
	print(f'{len(found)} figures, {len(bad)} stated differently')
	return 1 if bad else 0


if __name__ == '__main__':
	sys.exit(main(sys.argv))
