/*
 * blkrenum: make the ftrace "blk" tracer's binary trace_pipe stream
 * (options/bin=1, options/context-info=0) readable by blkparse.
 *
 * The stream is a sequence of struct blk_io_trace records (48 bytes,
 * native endian, then pdu_len bytes of payload), version 7, as written by
 * blk_trace_synthesize_old_trace() in kernel/trace/blktrace.c.  Two things
 * differ from what blktrace(8) writes:
 *   - sequence is always 0; blkparse wants a per-CPU counter (with 0 it
 *     gets very slow), so records get 1, 2, 3, ... per cpu field;
 *   - when the ring buffer overflowed, trace_pipe inserts a text line
 *     "CPU:%d [LOST %lu EVENTS]\n" (or "CPU:%d [LOST EVENTS]\n").
 *     Those lines are dropped and counted.
 * Events of other tracers/events enabled in the same (top level) buffer
 * have no binary output and appear as "type: %d\n" lines (trace_nop_print):
 * dropped and counted as other_events.  Anything else that is not a record
 * is skipped byte by byte up to the next magic and counted as garbage.
 *
 * Linux 6.19 moves the blk tracer to struct blk_io_trace2 internally; should
 * its binary output become version 8 records, they are refused, not misread.
 *
 * usage: blkrenum [MAJOR:MINOR [FROM_NS TO_NS]] < raw.bin > fixed.bin
 * With MAJOR:MINOR, records of other devices are dropped (other_devices);
 * with FROM_NS TO_NS, records stamped outside that window (the records'
 * clock: CLOCK_MONOTONIC, ns) are dropped too (outside_window).
 * same_sector counts the requests queued (Q) at a sector where another,
 * queued and not yet completed (C), already is: btt pairs a request's
 * records by sector and may time neither of such two.
 * Prints key=value counters on stderr.  Exit 0 unless reading/writing
 * failed or a record of an unknown version was seen.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC		0x65617400u	/* BLK_IO_TRACE_MAGIC */
#define VERSION		0x07u		/* BLK_IO_TRACE_VERSION */
#define HDR		48		/* sizeof(struct blk_io_trace) */
#define MAX_PDU		4096
#define MAX_CPUS	8192

struct blk_io_trace {
	uint32_t magic, sequence;
	uint64_t time, sector;
	uint32_t bytes, action, pid, device, cpu;
	uint16_t error, pdu_len;
};
_Static_assert(sizeof(struct blk_io_trace) == HDR, "blk_io_trace layout");

static unsigned char *slurp(size_t *len)
{
	size_t cap = 1 << 20, n = 0, r;
	unsigned char *buf = malloc(cap);

	while (buf && (r = fread(buf + n, 1, cap - n, stdin)) > 0) {
		n += r;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf || ferror(stdin)) {
		perror("blkrenum: read");
		exit(1);
	}
	*len = n;
	return buf;
}

struct counts {
	unsigned long long lost, lost_lines, lost_unknown, other;
};

/*
 * A text line trace_pipe puts between records at p?  Returns its length
 * (0 if none) and counts it.
 */
static size_t text_line(const unsigned char *p, size_t left, struct counts *c)
{
	char line[80];
	const unsigned char *nl;
	unsigned long long n;
	size_t len;
	int i;

	nl = memchr(p, '\n', left < sizeof(line) ? left : sizeof(line) - 1);
	if (!nl)
		return 0;
	len = nl - p + 1;
	memcpy(line, p, len);
	line[len] = 0;
	if (sscanf(line, "CPU:%d [LOST %llu EVENTS]", &i, &n) == 2) {
		c->lost += n;
		c->lost_lines++;
	} else if (!strncmp(line, "CPU:", 4) && strstr(line, " [LOST EVENTS]")) {
		c->lost_unknown++;
		c->lost_lines++;
	} else if (sscanf(line, "type: %d", &i) == 1) {
		c->other++;
	} else {
		return 0;
	}
	return len;
}

/*
 * Requests queued and not completed, by sector (those kept: one device, in
 * the window); @sector was queued again while one there was: returns 1.
 */
#define MAX_OUT 4096
static struct {
	uint64_t sector;
	uint32_t n;
} out[MAX_OUT];

static int in_flight_at(uint64_t sector, int delta)
{
	int i, free_at = -1;

	for (i = 0; i < MAX_OUT; i++) {
		if (out[i].n && out[i].sector == sector)
			break;
		if (!out[i].n && free_at < 0)
			free_at = i;
	}
	if (i == MAX_OUT) {
		if (delta < 0 || free_at < 0)
			return 0;
		i = free_at;
		out[i].sector = sector;
	}
	if (delta < 0)
		out[i].n--;
	else
		out[i].n++;
	return delta > 0 && out[i].n > 1;
}

#define TA_QUEUE 1	/* __BLK_TA_QUEUE, the low 16 bits of action */
#define TA_COMPLETE 8	/* __BLK_TA_COMPLETE */

static int usage(void)
{
	fprintf(stderr, "usage: blkrenum [MAJOR:MINOR [FROM_NS TO_NS]] <in >out\n");
	return 2;
}

/* What one run counts, and what it keeps (a device, a window). */
struct run {
	int64_t dev; /* kernel dev_t: major << 20 | minor; -1: all */
	unsigned long long from_ns, to_ns;
	unsigned long long records, garbage, other_devs, outside, same_sector;
	int ncpus, bad_version, truncated, write_failed;
	struct counts c;
};

/*
 * The record at @p (@left bytes on, at offset @off): written out
 * renumbered, or dropped (another device, outside the window). Returns the
 * bytes it took, 0 when @p holds no record, -1 to stop (a version not
 * known, a record cut short, a failed write).
 */
static long one_record(struct run *r, unsigned char *p, size_t left, size_t off)
{
	static uint32_t seq[MAX_CPUS];
	struct blk_io_trace t;
	size_t size;

	if (left < HDR)
		return 0;
	memcpy(&t, p, HDR);
	if ((t.magic & 0xffffff00u) == MAGIC && (t.magic & 0xff) != VERSION) {
		fprintf(stderr, "blkrenum: record version %u at offset %zu, "
			"only %u is known\n", t.magic & 0xff, off, VERSION);
		r->bad_version = 1;
		return -1;
	}
	if (t.magic != (MAGIC | VERSION) || t.cpu >= MAX_CPUS ||
	    t.pdu_len > MAX_PDU)
		return 0;
	size = HDR + (size_t)t.pdu_len;
	if (left < size) {
		r->truncated = 1;
		return -1;
	}
	if (r->dev >= 0 && t.device != r->dev) {
		r->other_devs++;
		return size;
	}
	if (t.time < r->from_ns || t.time > r->to_ns) {
		r->outside++;
		return size;
	}
	if ((t.action & 0xffff) == TA_QUEUE)
		r->same_sector += in_flight_at(t.sector, 1);
	else if ((t.action & 0xffff) == TA_COMPLETE)
		in_flight_at(t.sector, -1);
	if (!seq[t.cpu])
		r->ncpus++;
	t.sequence = ++seq[t.cpu];
	memcpy(p, &t, HDR);
	if (fwrite(p, size, 1, stdout) != 1) {
		perror("blkrenum: write");
		r->write_failed = 1;
		return -1;
	}
	r->records++;
	return size;
}

/*
 * What is at @p when it is not a record: a text line, counted, or a byte of
 * garbage. -1: the stream ends in a record cut short.
 */
static long not_record(struct run *r, const unsigned char *p, size_t left)
{
	size_t l = text_line(p, left, &r->c);

	if (l)
		return l;
	if (left < HDR && !memchr(p, '\n', left)) {
		r->truncated = 1;
		return -1;
	}
	r->garbage++;
	return 1;
}

/* MAJOR:MINOR [FROM_NS TO_NS] into @r: 0, or -1 when malformed. */
static int parse_args(struct run *r, int argc, char **argv)
{
	unsigned int major, minor;

	if (argc != 1 && argc != 2 && argc != 4)
		return -1;
	if (argc > 1) {
		if (sscanf(argv[1], "%u:%u", &major, &minor) != 2)
			return -1;
		r->dev = (int64_t)major << 20 | minor;
	}
	if (argc > 3 && (sscanf(argv[2], "%llu", &r->from_ns) != 1 ||
			 sscanf(argv[3], "%llu", &r->to_ns) != 1))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct run r = { .dev = -1, .to_ns = UINT64_MAX };
	size_t len, off = 0;
	unsigned char *buf;
	long n;

	if (parse_args(&r, argc, argv))
		return usage();
	buf = slurp(&len);
	while (off < len) {
		n = one_record(&r, buf + off, len - off, off);
		if (!n)
			n = not_record(&r, buf + off, len - off);
		if (n < 0)
			break;
		off += n;
	}
	if (r.write_failed)
		return 1;
	if (fflush(stdout)) {
		perror("blkrenum: write");
		return 1;
	}
	fprintf(stderr, "records=%llu\ncpus=%d\nlost_events=%llu\nlost_lines=%llu\n"
		"lost_unknown=%llu\nother_events=%llu\nother_devices=%llu\n"
		"outside_window=%llu\nsame_sector=%llu\ngarbage_bytes=%llu\n"
		"truncated=%d\n", r.records, r.ncpus, r.c.lost, r.c.lost_lines,
		r.c.lost_unknown, r.c.other, r.other_devs, r.outside,
		r.same_sector, r.garbage, r.truncated);
	return r.bad_version;
}
