# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# lib.sh: what scripts/compare.sh, knee.sh, demo.sh and tests/lib/*.sh
# share. Sourcing it only defines functions (and may be done twice); the
# options (set -euo pipefail) are the caller's, and so is $ME, the name
# die and note put before a message.
#
#	die STATUS MESSAGE	"$ME: MESSAGE" on stderr, exit STATUS
#	note MESSAGE		"$ME: MESSAGE" on stderr
#	opt_value OPTS "$@"	an option with a value, by the table OPTS
#	opt_int OPT VALUE LOW HIGH TEXT	a whole number in range, or exit 2
#	opt_decimal OPT VALUE TEXT	a decimal number (5, 0.5), or exit 2
#	need_cmd CMD [WHERE]	CMD on PATH, or exit 1 saying where it is from
#	need_root WHY		root, or exit 1 saying why it is needed
#	need_fuse_and_loop	FUSE and a free loop device, or exit 1 saying
#				which is missing (the simulated disk's needs)
#	find_truestat		$TRUESTAT: the one built beside scripts/, else
#				$TRUESTAT, else the one on PATH; or exit 1
#	last_error FILE...	the last line that says something (not blank,
#				not libbpf's chatter) of a tool's stderr
#	wait_for PID SECONDS CMD...	poll CMD until it succeeds
#	wait_line PID FILE PATTERN WHAT ERRFILE	wait_for FILE to hold PATTERN,
#				or exit 1 saying why WHAT did not start
#	stop_pid PID [SECONDS [SIGNAL]]	end PID, by SIGKILL if need be

die() {
	echo "${ME:-${0##*/}}: $2" >&2
	exit "$1"
}

note() {
	echo "${ME:-${0##*/}}: $*" >&2
}

# opt_value OPTS "$@": when $1 is an option of OPTS (the name of an
# associative array: option -> the variable it sets), as "--name VALUE" or
# "--name=VALUE", sets the variable and OPT_N (how many words it took, for
# shift); else status 1. A missing VALUE is a usage error.
# shellcheck disable=SC2034 # OPT_N: for the caller
opt_value() {
	local -n _opts=$1
	local name=${2%%=*}
	[[ $name == --?* && -n ${_opts[$name]+set} ]] || return 1
	if [[ $2 == *=* ]]; then
		printf -v "${_opts[$name]}" '%s' "${2#*=}"
		OPT_N=1
	else
		(($# >= 3)) || die 2 "$2 needs a value (--help for usage)"
		printf -v "${_opts[$name]}" '%s' "$3"
		OPT_N=2
	fi
}

# opt_int OPT VALUE LOW HIGH TEXT: "bad OPT 'VALUE': TEXT" unless VALUE is a
# whole number from LOW to HIGH
opt_int() {
	[[ $2 =~ ^[0-9]+$ ]] && (($2 >= $3 && $2 <= $4)) && return 0
	die 2 "bad $1 '$2': $5"
}

# opt_decimal OPT VALUE TEXT: the same for a decimal number (5, 0.5, .5)
opt_decimal() {
	[[ $2 =~ ^[0-9]*\.?[0-9]+$ ]] || die 2 "bad $1 '$2': $3"
}

need_cmd() {
	command -v "$1" >/dev/null || die 1 "$1 is not installed${2:+ ($2)}"
}

need_root() {
	((EUID == 0)) || die 1 "needs root ($1)"
}

need_fuse_and_loop() {
	local err
	[[ -c /dev/fuse ]] || die 1 "no FUSE: /dev/fuse is missing (modprobe fuse; a container needs --device /dev/fuse)"
	[[ -c /dev/loop-control ]] || compgen -G '/dev/loop[0-9]*' >/dev/null ||
		die 1 "cannot create loop devices: no /dev/loop-control and no /dev/loopN (modprobe loop)"
	# a free one (made now if need be): the one error FUSE cannot explain later
	err=$(losetup -f 2>&1 >/dev/null) || die 1 "cannot create loop devices: ${err:-losetup -f failed}"
}

# find_truestat: a script run from the source tree measures the truestat
# built there, not an older one installed
find_truestat() {
	local built
	built=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/truestat
	if [[ -x $built ]]; then
		TRUESTAT=$built
	elif [[ -n ${TRUESTAT:-} ]]; then
		[[ -x $TRUESTAT ]] || die 1 "TRUESTAT=$TRUESTAT is not an executable"
	elif ! TRUESTAT=$(command -v truestat); then
		die 1 "truestat not found: build it (make) or put it on PATH"
	fi
}

last_error() {
	grep -hv '^libbpf' "$@" 2>/dev/null | grep -v '^$' | tail -1
}

# wait_for PID SECONDS CMD...: runs CMD (its stderr dropped) every 0.05 s
# until it succeeds: status 0; 1 as soon as PID (if not empty) has ended,
# 2 after SECONDS (whole seconds)
wait_for() {
	local pid=$1 n=$(($2 * 20)) i
	shift 2
	for ((i = 0; i < n; i++)); do
		"$@" 2>/dev/null && return 0
		[[ -z $pid ]] || kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 2
}

# START_GUARD: the seconds a tool may take to start (truestat to attach)
# before it counts as hung. A guard, not a measure: truestat attaches in
# 1.2-1.3 s on a 2-core VM (most of it the verifier), a few seconds on a
# machine three times slower; a start that ends early says why at once.
START_GUARD=60

# wait_line PID FILE PATTERN WHAT ERRFILE: until FILE holds PATTERN,
# START_GUARD s at most; should WHAT (PID) end first, ERRFILE's last error
# says why
wait_line() {
	local rc=0
	wait_for "$1" "$START_GUARD" grep -q "$3" "$2" || rc=$?
	((rc != 1)) || die 1 "$4 failed: $(last_error "$5")"
	((rc == 0)) || die 1 "$4 did not start within $START_GUARD s"
}

_pid_gone() {
	! kill -0 "$1" 2>/dev/null
}

# stop_pid PID [SECONDS [SIGNAL]]: SIGNAL (default INT, on which our tools
# end cleanly), SECONDS (default 5) to end on it, then SIGKILL; reaped if a
# child. An empty PID, or one already gone, is no process: bash 5.2's wait
# for a child it has reaped already hangs in an EXIT trap that interrupted
# a wait for it (compare.sh's Ctrl-C during iostat's window).
stop_pid() {
	[[ -n $1 ]] || return 0
	kill "-${3:-INT}" "$1" 2>/dev/null || return 0
	wait_for "" "${2:-5}" _pid_gone "$1" || true
	kill -9 "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
