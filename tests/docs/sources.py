# SPDX-License-Identifier: GPL-2.0
"""The docs as text an operator reads, cut into the units a figure belongs to.

Each source (Markdown, the man page's roff, the --help text in
user/cli/opts.c) becomes a list of Scope: a clause of prose, a table row
(with its header and the paragraph above the table, its caption) or an
option's entry (--help, a .TP of the man page, an option list in a code
block). Every character keeps its offset in the file, so that a figure
is named by file:line and a self-test can change it in place.
"""
import re

# A string with each character's offset in its file.
class Text:
	__slots__ = ('s', 'pos')

	def __init__(self, s='', pos=None):
		self.s = s
		self.pos = pos if pos is not None else []

	@classmethod
	def at(cls, s, start):
		return cls(s, list(range(start, start + len(s))))

	def __getitem__(self, sl):
		return Text(self.s[sl], self.pos[sl])

	def strip(self):
		a, b = 0, len(self.s)
		while a < b and self.s[a].isspace():
			a += 1
		while b > a and self.s[b - 1].isspace():
			b -= 1
		return self[a:b]


def join(parts):
	"""The parts, each run of blanks (and each joint) made one space."""
	raw, pos = [], []
	for p in parts:
		if p.s:
			raw.append(p.s)
			raw.append('\n')
			pos.extend(p.pos)
			pos.append(p.pos[-1])
	raw = ''.join(raw)
	s, out, i = [], [], 0
	for m in BLANKS.finditer(raw):
		a, b = m.span()
		s.append(raw[i:a])
		out.extend(pos[i:a])
		s.append(' ')
		out.append(pos[a])
		i = b
	s.append(raw[i:])
	out.extend(pos[i:])
	return Text(''.join(s), out).strip()


# what join makes one space: two blanks or more, or one that is not ' '
BLANKS = re.compile(r'\s{2,}|[^\S ]')


class Scope:
	"""A unit of text a figure is read in.

	kind: 'clause' (prose), 'row' (a table row: cells, header, caption),
	'entry' (an option's description: subject is the option, first is
	True for the clause that opens the description).
	"""

	def __init__(self, kind, text, path, **kw):
		self.kind = kind
		self.text = text
		self.path = path
		self.subject = kw.get('subject')
		self.first = kw.get('first', False)
		self.cells = kw.get('cells')
		self.header = kw.get('header')
		self.caption = kw.get('caption')
		self.sentence = kw.get('sentence', text)


# Sentences end at . ! ? before a blank and a capital, a backquote, a
# bracket or a quote, outside `code` and parentheses; clauses at ; too.
ABBREV = re.compile(r'(?:\be\.g|\bi\.e|\betc|\bvs|\bcf|\bno)\.$')


def _cut(t, clauses):
	out, start, depth, code = [], 0, 0, False
	s = t.s
	for m in CUTS.finditer(s):
		i, c = m.start(), m.group()
		if c == '`':
			code = not code
		elif code:
			continue
		elif c in '([':
			depth += 1
		elif c in ')]':
			depth = max(depth - 1, 0)
		elif depth == 0 and c == ';':
			if clauses:
				out.append(t[start:i])
				start = i + 1
		elif depth == 0 and END.match(s, i) and \
				not ABBREV.search(s[max(0, i - 4):i + 1]):
			out.append(t[start:i + 1])
			start = i + 1
	out.append(t[start:])
	return [x.strip() for x in out if x.s.strip()]


CUTS = re.compile(r'[`()\[\];.!?]')
END = re.compile(r'[.!?] [A-Z`\[*"(]')


def sentences(t):
	return _cut(t, False)


def clauses(t):
	return _cut(t, True)


def prose(t, path, **kw):
	"""A paragraph's scopes: one per clause, each knowing its sentence."""
	out = []
	for n, sent in enumerate(sentences(t)):
		for m, cl in enumerate(clauses(sent)):
			out.append(Scope(kw.get('kind', 'clause'), cl, path,
					 subject=kw.get('subject'),
					 first=(n == 0 and m == 0),
					 sentence=sent))
	return out


# --help style option lists: "  -L, --light   text", continued indented.
OPT_HEAD = re.compile(
	r'^ {1,8}((?:-[A-Za-z0-9](?:, )?)?(?:--[A-Za-z][\w.-]*(?:\[?=[^\s\]]*\]?)?)?)'
	r'(?: {2,}|$)')


def help_scopes(lines, path, prose_too):
	"""Scopes of --help style text, given as one Text per line."""
	out, entry, head, para = [], [], None, []

	def flush():
		nonlocal entry, head, para
		if head is not None:
			out.extend(prose(join(entry), path, kind='entry',
					 subject=head.s))
		elif prose_too and para:
			out.extend(prose(join(para), path))
		entry, head, para = [], None, []

	for ln in lines:
		m = OPT_HEAD.match(ln.s)
		if m and m.group(1).startswith('-') and len(m.group(1)) > 1:
			flush()
			head = ln[m.start(1):m.end(1)]
			entry = [ln[m.end():]]
		elif head is not None and re.match(r' {8,}\S', ln.s):
			entry.append(ln)
		elif not ln.s.strip():
			flush()
		else:
			if head is not None:
				flush()
			para.append(ln)
	flush()
	return out


def _lines(src):
	off = 0
	for ln in src.splitlines(keepends=True):
		body = ln.rstrip('\n')
		yield Text.at(body, off)
		off += len(ln)


def split_row(t):
	"""A Markdown table row's cells, | inside `code` not a separator."""
	cells, start, code = [], None, False
	for i, c in enumerate(t.s):
		if c == '`':
			code = not code
		elif c == '|' and not code:
			if start is not None:
				cells.append(t[start:i].strip())
			start = i + 1
	return cells


def markdown(src, path):
	lines = list(_lines(src))
	out = []
	para, code, table = [], None, []
	caption = None

	def flush_para():
		nonlocal para, caption
		if para:
			t = join(para)
			out.extend(prose(t, path))
			caption = t
		para = []

	def flush_table():
		nonlocal table
		if len(table) >= 2 and re.match(r'^\s*\|[\s:|-]+\|?\s*$',
						table[1].s):
			header = [c.s for c in split_row(table[0])]
			for row in table[2:]:
				cells = split_row(row)
				out.append(Scope('row', join([row]), path,
						 cells=cells, header=header,
						 caption=caption))
		table = []

	for ln in lines:
		st = ln.s.strip()
		if code is not None:
			if st.startswith('```'):
				out.extend(help_scopes(code, path, False))
				code = None
				caption = None
			else:
				code.append(ln)
			continue
		if table and not st.startswith('|'):
			flush_table()
		if st.startswith('```'):
			flush_para()
			code = []
		elif not st:
			flush_para()
		elif st.startswith('#'):
			flush_para()
			out.extend(prose(join([ln]), path))
			caption = None
		elif st.startswith('|'):
			flush_para()
			table.append(ln)
		else:
			m = re.match(r'\s*(?:[-*+]|\d+\.)\s+', ln.s)
			if m:
				flush_para()
				ln = ln[m.end():]
			para.append(ln)
	flush_para()
	flush_table()
	return out


# roff: the escapes the man page uses, as the reader sees them.
ROFF_ESC = re.compile(r'\\(\(..|\[[^\]]*\]|f\(..|f.|"|.)')
ROFF_CHAR = {
	'-': '-', 'e': '\\', ' ': ' ', '~': ' ', '0': ' ', '&': '', 'c': '',
	'|': '', '^': '', '(lq': '"', '(rq': '"', '(dq': '"', '(aq': "'",
	'(em': '-', '(en': '-', '(mu': 'x', '(bu': '*', '(->': '->',
	'(>=': '>=', '(<=': '<=', '(ti': '~', '(ha': '^', '(co': '(c)',
}


def roff_text(t):
	"""One line's text, escapes resolved, each character its offset."""
	s, pos, i = [], [], 0
	for m in ROFF_ESC.finditer(t.s):
		for k in range(i, m.start()):
			s.append(t.s[k])
			pos.append(t.pos[k])
		e = m.group(1)
		if e == '"':
			i = len(t.s)
			break
		rep = '' if e[0] in 'f[' and e not in ROFF_CHAR else \
			ROFF_CHAR.get(e, '')
		for c in rep:
			s.append(c)
			pos.append(t.pos[m.start()])
		i = m.end()
	for k in range(i, len(t.s)):
		s.append(t.s[k])
		pos.append(t.pos[k])
	return Text(''.join(s), pos)


def roff_args(t):
	"""A macro line's arguments: blank separated, "quoted" kept whole."""
	args = []
	for m in re.finditer(r'"((?:[^"]|"")*)"|(\S+)', t.s):
		g = 1 if m.group(1) is not None else 2
		args.append(t[m.start(g):m.end(g)])
	return args


ALTERNATING = {'BR', 'RB', 'IR', 'RI', 'BI', 'IB'}
BREAKS = {'PP', 'P', 'LP', 'TP', 'IP', 'HP', 'SH', 'SS', 'TQ', 'SY', 'YS',
	  'sp', 'RS', 'RE', 'TH'}


def roff(src, path):
	out, para, subject = [], [], None
	nofill = False
	state = {'tp': False}

	def flush():
		nonlocal para, subject
		if para:
			t = join(para)
			if subject:
				out.extend(prose(t, path, kind='entry',
						 subject=subject))
			else:
				out.extend(prose(t, path))
		para = []

	for ln in _lines(src):
		st = ln.s
		if st.startswith(('.\\"', "'\\\"")):
			continue
		m = re.match(r'^[.\']\s*([A-Za-z]+)\s*', st)
		if m:
			name = m.group(1)
			rest = ln[m.end():]
			if name in ('nf', 'EX'):
				flush()
				nofill = True
				continue
			if name in ('fi', 'EE'):
				nofill = False
				continue
			if name in BREAKS:
				flush()
				subject = None
				state['tp'] = name in ('TP', 'TQ')
				if name in ('SH', 'SS'):
					out.extend(prose(join([roff_text(rest)]),
							 path))
				continue
			if name in ALTERNATING:
				parts = [roff_text(a) for a in roff_args(rest)]
				text = Text(''.join(p.s for p in parts),
					    sum((p.pos for p in parts), []))
			elif name in ('B', 'I', 'SM', 'SB'):
				text = join([roff_text(a) for a in roff_args(rest)])
			elif name == 'OP':
				text = join([roff_text(a) for a in roff_args(rest)])
			else:
				continue
		else:
			text = roff_text(ln)
		if nofill:
			continue
		if state['tp']:
			# the line after .TP is the item's tag: an option or not
			state['tp'] = False
			if re.match(r'\s*-', text.s):
				subject = text.s
			else:
				para.append(text)
			continue
		para.append(text)
	flush()
	return out


def c_help(src, path):
	"""The --help text: the string literals of ts_usage in opts.c."""
	m = re.search(r'const char ts_usage\[\] =(.*?);\s*$', src, re.S | re.M)
	if not m:
		return []
	text_s, text_p = [], []
	for lit in re.finditer(r'"((?:[^"\\]|\\.)*)"', m.group(1)):
		base = m.start(1) + lit.start(1)
		body = lit.group(1)
		k = 0
		while k < len(body):
			c = body[k]
			if c == '\\' and k + 1 < len(body):
				c = {'n': '\n', 't': '\t'}.get(body[k + 1],
								body[k + 1])
				text_s.append(c)
				text_p.append(base + k)
				k += 2
				continue
			text_s.append(c)
			text_p.append(base + k)
			k += 1
	whole = Text(''.join(text_s), text_p)
	lines, start = [], 0
	for i, c in enumerate(whole.s):
		if c == '\n':
			lines.append(whole[start:i])
			start = i + 1
	lines.append(whole[start:])
	return help_scopes(lines, path, True)


def parse(path, src):
	if path.endswith('.md'):
		return markdown(src, path)
	if re.search(r'\.[1-9]$', path):
		return roff(src, path)
	if path.endswith('.c'):
		return c_help(src, path)
	raise ValueError(path)
