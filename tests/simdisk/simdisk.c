// SPDX-License-Identifier: GPL-2.0
/*
 * simdisk: a FUSE file system with one file, "disk", whose timing is known.
 *
 * Each read or write is served by the first of K units to become free, in
 * arrival order, and completes S microseconds after it starts (plus
 * size / bandwidth when -b is given). Reads return zeros and writes are
 * discarded, unless -m: then the disk holds what is written (in memory,
 * pages taken as they are first written: a disk of some GiB that holds a
 * file system costs what the file system wrote), and a read returns it. A
 * loop device with --direct-io=on on the file makes a block device of it
 * (tests/lib/simdisk.sh).
 *
 * With -S MIN_US:MAX_US each unit is a disk arm: a request that does not
 * begin where the unit's previous request ended (its head, 0 at first)
 * seeks first, for
 *	seek = MIN + (MAX - MIN) x sqrt(distance / disk size)
 * (distance in bytes: MIN for the nearest track, MAX across the whole
 * disk; the square root of a seek's acceleration and coasting), and its
 * service is S + seek (+ size / bandwidth): S stands for settling and
 * rotation. A flush does not move the head.
 *
 * With -i N the disk is also capped at N requests per second, as a cloud
 * volume with provisioned IOPS is: a token bucket of -B tokens (default 1)
 * refilled one token every 10^9 / N ns (rounded down, logged). A request
 * may not start before its token; one that finds the bucket empty waits
 * inside the device, where truestat counts its wait as service time. The
 * bucket is a GCRA (virtual scheduling): with TAT the time the next token
 * is due, a request's token is ready at TAT - (B - 1) x interval, and once
 * it starts TAT becomes max(TAT, start) + interval.
 *
 * The schedule is fixed when a request arrives, so nothing sleeps per
 * request: the receiving thread computes start and finish and puts the
 * request in a heap; one timer thread (SCHED_FIFO, 1 ns timer slack)
 * replies to each at its finish time. A pool of sleeping threads drifts;
 * this does not, and the time a reply is late by is logged, not hidden.
 *
 * With -x N:US every Nth request (seq N - 1, 2N - 1, ...) takes US
 * microseconds more: requests slow by a known amount, where they are
 * known (the test of truestat --slow).
 *
 * With -f US a flush (FUSE's fsync: the loop device sends one for each
 * REQ_OP_FLUSH it gets) is a request too, op F of 0 bytes, served by a
 * unit like the others but for US microseconds: a drive's cache flush of
 * known cost. Without -f an fsync is answered at once and not logged.
 *
 * usage: simdisk [-k UNITS] [-s SERVICE_US] [-b MB_PER_S] [-i IOPS [-B BURST]]
 *                [-x N:US] [-f FSYNC_US] [-S MIN_US:MAX_US] [-m] [-z SIZE_MB]
 *                [-l LOG] MOUNTPOINT
 *
 * The log has one line per request, in CLOCK_MONOTONIC ns (the clock of
 * bpf_ktime_get_ns), written within about 20 ms of its reply (LOG.writes
 * counts the writes: two more than there were when a request completed,
 * and its line is in the log, however late the writer ran):
 *	arrival start finish reply op offset bytes unit sent seq token seek
 * arrival: the daemon received it; start/finish: the model's times;
 * reply: when the reply began (finish plus the timer's lateness), before
 * the write to /dev/fuse that lets the kernel complete the request;
 * sent: when that write returned; unit: the unit that served it; seq: its
 * place in arrival order, from 0, so that a reader can prove that no
 * request is missing (the lines are in reply order); token: when the
 * bucket let it start, so token - arrival is how long it waited for a
 * token and start - token how long for a unit (token is the arrival
 * without -i); seek: the ns of the request's seek (0 without -S). The
 * first line gives the parameters, the bucket's interval and burst among
 * them, fsync_ns (-1: no -f), seek_min_ns and seek_max_ns (0: no -S),
 * store (1: -m) and size (bytes). So the log holds what
 * the device did, and the tests take their tolerances from it:
 * arrival..reply lies inside the block layer's issue..completion.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define DISK_INO	2
#define DISK_NAME	"disk"
#define ZERO_BYTES	(1 << 20)
#define MAX_BG		4096
#define LOG_PERIOD_NS	20000000ull
#define SPIN_NS		60000ull	/* wake this early, then spin */

struct pending {
	fuse_req_t req;
	uint64_t arrival;
	uint64_t start;
	uint64_t finish;
	uint64_t reply;
	uint64_t sent;
	uint64_t off;
	uint64_t seq;
	uint64_t token;
	uint64_t seek;
	uint32_t bytes;
	uint16_t unit;
	char op;
};

struct vec {
	struct pending *v;
	size_t n;
	size_t cap;
};

static struct {
	unsigned int units;
	uint64_t service_ns;
	uint64_t bytes_per_s;
	uint64_t iops;		/* 0: no cap */
	uint64_t interval_ns;	/* 10^9 / iops */
	uint64_t burst;		/* tokens the bucket holds */
	uint64_t slow_every;	/* -x: every Nth request, 0: none */
	uint64_t slow_extra_ns;	/* takes this much more */
	int64_t fsync_ns;	/* -f: a flush's service, -1: answered at once */
	uint64_t seek_min_ns;	/* -S: the nearest seek, 0: no seeks */
	uint64_t seek_max_ns;	/* the seek across the whole disk */
	int store;		/* -m: the disk holds what is written */
	uint64_t size;
	const char *log_path;
	const char *mountpoint;
} cfg = { .units = 1, .service_ns = 2000000, .burst = 1, .size = 256ull << 20,
	    .fsync_ns = -1 };

static uint64_t *unit_free;	/* when each unit is next free */
static uint64_t *unit_head;	/* where each unit's last request ended */
static unsigned char *data;	/* -m: the disk's bytes */
static uint64_t next_seq;
static uint64_t tat;		/* the bucket: when its next token is due */
static struct vec heap;		/* pending replies, earliest finish first */
static struct vec logq;		/* replied, not yet written to the log */
static pthread_mutex_t lock;	/* priority inheritance: see init_state */
static pthread_cond_t wake;
static pthread_cond_t log_wake;
static int stopping;
static FILE *log_file;
static char zeros[ZERO_BYTES];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static struct timespec to_ts(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / 1000000000ull,
		.tv_nsec = ns % 1000000000ull,
	};

	return ts;
}

static void vec_push(struct vec *q, const struct pending *p)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 4096;
		struct pending *v = realloc(q->v, cap * sizeof(*v));

		if (!v) {
			perror("simdisk: realloc");
			abort();
		}
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n++] = *p;
}

static int earlier(const struct pending *a, const struct pending *b)
{
	if (a->finish != b->finish)
		return a->finish < b->finish;
	return a->seq < b->seq;
}

static void swap(struct pending *a, struct pending *b)
{
	struct pending t = *a;

	*a = *b;
	*b = t;
}

static void heap_push(const struct pending *p)
{
	size_t i;

	vec_push(&heap, p);
	for (i = heap.n - 1; i > 0; i = (i - 1) / 2) {
		if (!earlier(&heap.v[i], &heap.v[(i - 1) / 2]))
			break;
		swap(&heap.v[i], &heap.v[(i - 1) / 2]);
	}
}

static struct pending heap_pop(void)
{
	struct pending top = heap.v[0];
	size_t i = 0;

	heap.v[0] = heap.v[--heap.n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < heap.n && earlier(&heap.v[l], &heap.v[m]))
			m = l;
		if (r < heap.n && earlier(&heap.v[r], &heap.v[m]))
			m = r;
		if (m == i)
			break;
		swap(&heap.v[i], &heap.v[m]);
		i = m;
	}
	return top;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* -S: the seek of @p from the head of unit @u, which moves to its end. */
static uint64_t seek_ns(const struct pending *p, unsigned int u)
{
	uint64_t from = unit_head[u], d;

	if (!cfg.seek_max_ns || p->op == 'F')
		return 0;
	unit_head[u] = p->off + p->bytes;
	d = p->off > from ? p->off - from : from - p->off;
	if (!d)
		return 0;
	return cfg.seek_min_ns + (uint64_t)((double)(cfg.seek_max_ns - cfg.seek_min_ns) *
					    sqrt((double)d / (double)cfg.size));
}

/*
 * The first unit to become free (the lowest on a tie) takes the request,
 * once its token is ready.
 */
static void schedule(struct pending *p)
{
	unsigned int u, best = 0;

	for (u = 1; u < cfg.units; u++)
		if (unit_free[u] < unit_free[best])
			best = u;
	p->unit = best;
	p->token = p->arrival;
	if (cfg.iops) {
		uint64_t early = (cfg.burst - 1) * cfg.interval_ns;

		if (tat > early)
			p->token = max_u64(p->arrival, tat - early);
	}
	p->start = max_u64(p->token, unit_free[best]);
	if (cfg.iops)
		tat = max_u64(tat, p->start) + cfg.interval_ns;
	p->seek = seek_ns(p, best);
	p->finish = p->start + p->seek +
		    (p->op == 'F' ? (uint64_t)cfg.fsync_ns : cfg.service_ns);
	if (cfg.slow_every && p->seq % cfg.slow_every == cfg.slow_every - 1)
		p->finish += cfg.slow_extra_ns;
	if (cfg.bytes_per_s)
		p->finish += p->bytes * 1000000000ull / cfg.bytes_per_s;
	unit_free[best] = p->finish;
}

static void submit(fuse_req_t req, char op, const char *buf, size_t size,
		   off_t off)
{
	struct pending p = { .req = req, .op = op, .off = off };

	p.arrival = now_ns();
	if ((uint64_t)off >= cfg.size)
		size = 0;
	else if (size > cfg.size - off)
		size = cfg.size - off;
	if (op == 'R' && size > ZERO_BYTES)
		size = ZERO_BYTES;
	p.bytes = size;
	if (op == 'W' && data)
		memcpy(data + off, buf, size);
	pthread_mutex_lock(&lock);
	p.seq = next_seq++;
	schedule(&p);
	heap_push(&p);
	if (heap.v[0].seq == p.seq)
		pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
}

static void reply(struct pending *p)
{
	p->reply = now_ns();
	if (p->op == 'R')
		fuse_reply_buf(p->req, data ? (char *)data + p->off : zeros,
			       p->bytes);
	else if (p->op == 'F')
		fuse_reply_err(p->req, 0);
	else
		fuse_reply_write(p->req, p->bytes);
	p->sent = now_ns();
}

static void set_realtime(int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	int err;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err)
		fprintf(stderr, "simdisk: SCHED_FIFO: %s (timing less exact)\n",
			strerror(err));
}

/* Replies to each request at its finish time. */
static void *timer_main(void *arg)
{
	set_realtime(20);
	pthread_mutex_lock(&lock);
	while (!stopping) {
		struct pending p;
		struct timespec ts;

		if (!heap.n) {
			pthread_cond_wait(&wake, &lock);
			continue;
		}
		if (heap.v[0].finish > now_ns() + SPIN_NS) {
			ts = to_ts(heap.v[0].finish - SPIN_NS);
			pthread_cond_timedwait(&wake, &lock, &ts);
			continue;
		}
		p = heap_pop();
		pthread_mutex_unlock(&lock);
		while (now_ns() < p.finish)
			;
		reply(&p);
		pthread_mutex_lock(&lock);
		vec_push(&logq, &p);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void write_log(const struct vec *q)
{
	size_t i;

	for (i = 0; i < q->n; i++) {
		const struct pending *p = &q->v[i];

		fprintf(log_file, "%llu %llu %llu %llu %c %llu %u %u %llu %llu %llu %llu\n",
			(unsigned long long)p->arrival,
			(unsigned long long)p->start,
			(unsigned long long)p->finish,
			(unsigned long long)p->reply, p->op,
			(unsigned long long)p->off, p->bytes, p->unit,
			(unsigned long long)p->sent,
			(unsigned long long)p->seq,
			(unsigned long long)p->token,
			(unsigned long long)p->seek);
	}
	fflush(log_file);
}

/* How many times the log was written, in LOG.writes (renamed into place). */
static void count_write(void)
{
	static unsigned long long writes;
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *f;

	if (!cfg.log_path)
		return;
	snprintf(path, sizeof(path), "%s.writes", cfg.log_path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%llu\n", ++writes);
	if (fclose(f) == 0)
		rename(tmp, path);
}

/* Writes the log every 20 ms, away from the timer thread. */
static void *log_main(void *arg)
{
	struct vec out = { 0 };
	int last = 0;

	pthread_mutex_lock(&lock);
	while (!last) {
		struct vec t;
		struct timespec ts = to_ts(now_ns() + LOG_PERIOD_NS);

		if (!stopping)
			pthread_cond_timedwait(&log_wake, &lock, &ts);
		last = stopping;
		t = logq;
		logq = out;
		logq.n = 0;
		out = t;
		pthread_mutex_unlock(&lock);
		write_log(&out);
		count_write();
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	free(out.v);
	return NULL;
}

static void fill_attr(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_nlink = 1;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return;
	}
	st->st_mode = S_IFREG | 0600;
	st->st_size = cfg.size;
	st->st_blksize = 4096;
	st->st_blocks = cfg.size / 512;
}

static void sd_init(void *data, struct fuse_conn_info *conn)
{
	/* the kernel's default of 12 would cap the disk's concurrency */
	conn->max_background = MAX_BG;
	conn->congestion_threshold = MAX_BG;
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
}

static void sd_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { .attr_timeout = 3600,
				      .entry_timeout = 3600 };

	if (parent != FUSE_ROOT_ID || strcmp(name, DISK_NAME)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = DISK_INO;
	fill_attr(DISK_INO, &e.attr);
	fuse_reply_entry(req, &e);
}

static void sd_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct stat st;

	if (ino != FUSE_ROOT_ID && ino != DISK_INO) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(ino, &st);
	fuse_reply_attr(req, &st, 3600);
}

static void sd_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != DISK_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	fuse_reply_open(req, fi);
}

static void sd_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	submit(req, 'R', NULL, size, off);
}

static void sd_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	submit(req, 'W', buf, size, off);
}

static void sd_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	if (cfg.fsync_ns < 0)
		fuse_reply_err(req, 0);
	else
		submit(req, 'F', NULL, 0, 0);
}

static const struct fuse_lowlevel_ops sd_ops = {
	.init = sd_init,
	.lookup = sd_lookup,
	.getattr = sd_getattr,
	.open = sd_open,
	.read = sd_read,
	.write = sd_write,
	.fsync = sd_fsync,
};

static void usage(void)
{
	fprintf(stderr, "usage: simdisk [-k UNITS] [-s SERVICE_US] "
			"[-b MB_PER_S] [-i IOPS [-B BURST]] [-x N:US] [-f FSYNC_US] "
			"[-S MIN_US:MAX_US] [-m] [-z SIZE_MB] [-l LOG] MOUNTPOINT\n");
	exit(2);
}

static uint64_t number(const char *s, uint64_t min)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v < min)
		usage();
	return v;
}

/* A:B (-x N:US, -S MIN_US:MAX_US): A at least @min_a, B at least 1. */
static void pair(char *arg, uint64_t min_a, uint64_t *a, uint64_t *b)
{
	char *colon = strchr(arg, ':');

	if (!colon)
		usage();
	*colon = 0;
	*a = number(arg, min_a);
	*b = number(colon + 1, 1);
}

static void parse(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "k:s:b:i:B:x:f:S:mz:l:")) != -1) {
		switch (c) {
		case 'k':
			cfg.units = number(optarg, 1);
			break;
		case 's':
			cfg.service_ns = number(optarg, 0) * 1000;
			break;
		case 'b':
			cfg.bytes_per_s = number(optarg, 1) * 1000000;
			break;
		case 'i':
			cfg.iops = number(optarg, 1);
			break;
		case 'B':
			cfg.burst = number(optarg, 1);
			break;
		case 'x':
			pair(optarg, 1, &cfg.slow_every, &cfg.slow_extra_ns);
			cfg.slow_extra_ns *= 1000;
			break;
		case 'f':
			cfg.fsync_ns = number(optarg, 0) * 1000;
			break;
		case 'S':
			pair(optarg, 0, &cfg.seek_min_ns, &cfg.seek_max_ns);
			cfg.seek_min_ns *= 1000;
			cfg.seek_max_ns *= 1000;
			break;
		case 'm':
			cfg.store = 1;
			break;
		case 'z':
			cfg.size = number(optarg, 1) << 20;
			break;
		case 'l':
			cfg.log_path = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || cfg.units > 65535 ||
	    cfg.iops > 1000000000 || cfg.burst > 1000000 ||
	    cfg.seek_min_ns > cfg.seek_max_ns)
		usage();
	if (cfg.iops)
		cfg.interval_ns = 1000000000ull / cfg.iops;
	cfg.mountpoint = argv[optind];
}

static int init_state(void)
{
	pthread_condattr_t ca;
	pthread_mutexattr_t ma;

	unit_free = calloc(cfg.units, sizeof(*unit_free));
	unit_head = calloc(cfg.units, sizeof(*unit_head));
	log_file = fopen(cfg.log_path ? cfg.log_path : "/dev/null", "w");
	if (cfg.store) {
		/* anonymous: zeros until written, memory only where written */
		data = mmap(NULL, cfg.size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (data == MAP_FAILED)
			data = NULL;
	}
	if (!unit_free || !unit_head || !log_file || (cfg.store && !data)) {
		perror("simdisk");
		return -1;
	}
	fprintf(log_file, "# units %u service_ns %llu bytes_per_s %llu iops %llu interval_ns %llu burst %llu slow_every %llu slow_extra_ns %llu fsync_ns %lld seek_min_ns %llu seek_max_ns %llu store %d size %llu\n",
		cfg.units, (unsigned long long)cfg.service_ns,
		(unsigned long long)cfg.bytes_per_s,
		(unsigned long long)cfg.iops,
		(unsigned long long)cfg.interval_ns,
		(unsigned long long)cfg.burst,
		(unsigned long long)cfg.slow_every,
		(unsigned long long)cfg.slow_extra_ns,
		(long long)cfg.fsync_ns,
		(unsigned long long)cfg.seek_min_ns,
		(unsigned long long)cfg.seek_max_ns, cfg.store,
		(unsigned long long)cfg.size);
	fprintf(log_file, "# arrival start finish reply op offset bytes unit sent seq token seek\n");
	fflush(log_file);
	/* the log thread runs at normal priority and must not hold up the
	 * timer thread when it is preempted holding the lock */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&lock, &ma);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wake, &ca);
	pthread_cond_init(&log_wake, &ca);
	return 0;
}

static int serve(struct fuse_session *se)
{
	pthread_t timer, logger;
	int ret;

	if (pthread_create(&timer, NULL, timer_main, NULL) ||
	    pthread_create(&logger, NULL, log_main, NULL)) {
		fprintf(stderr, "simdisk: cannot start threads\n");
		return -1;
	}
	/* above normal threads, below the timer: arrivals are not delayed */
	set_realtime(10);
	ret = fuse_session_loop(se);
	pthread_mutex_lock(&lock);
	stopping = 1;
	pthread_cond_signal(&wake);
	pthread_cond_signal(&log_wake);
	pthread_mutex_unlock(&lock);
	pthread_join(timer, NULL);
	pthread_join(logger, NULL);
	fclose(log_file);
	return ret;
}

int main(int argc, char **argv)
{
	char *fargv[] = { argv[0], "-o", "allow_other,fsname=simdisk", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se;
	int ret = 1;

	parse(argc, argv);
	if (init_state())
		return 1;
	se = fuse_session_new(&args, &sd_ops, sizeof(sd_ops), NULL);
	if (!se)
		return 1;
	if (fuse_set_signal_handlers(se))
		goto out_destroy;
	if (fuse_session_mount(se, cfg.mountpoint))
		goto out_signals;
	ret = serve(se) ? 1 : 0;
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_destroy:
	fuse_session_destroy(se);
	return ret;
}
