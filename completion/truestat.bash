# SPDX-License-Identifier: GPL-2.0
# bash completion for truestat(8): its options; after -d/--device the disks
# (/sys/block) and partitions (/sys/class/block); --hist=fine; --units=us|ms.
# Installed by `make install` as share/bash-completion/completions/truestat;
# to try it from the source tree: . completion/truestat.bash

# The names -d accepts, one per line: disks and partitions (a partition
# traces its whole disk), sorted, each once.
_truestat_devices()
{
	local d
	for d in /sys/block/* /sys/class/block/*; do
		[[ -e $d ]] && printf '%s\n' "${d##*/}"
	done | sort -u
}

# _truestat_devices_matching PREFIX WORD: COMPREPLY gets PREFIX+name for
# each name starting with WORD (a leading /dev/ is kept, as truestat drops it).
_truestat_devices_matching()
{
	local prefix=$1 word=$2 dev= name
	if [[ $word == /dev/* ]]; then
		dev=/dev/
		word=${word#/dev/}
	fi
	while IFS= read -r name; do
		[[ $name == "$word"* ]] && COMPREPLY+=("$prefix$dev$name")
	done < <(_truestat_devices)
}

_truestat()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev= opt=
	local longs="--device --exclude --dm-names --date --json --hist --depth --light --partitions --pattern --flags --slow --slow-buffer --by --top --cgroup --pid --web.listen-address --prometheus --web.histogram-buckets --web.config.file --heatmap --units --verbose --raw-tp --version --help"
	local shorts="-c -d -N -t -j -H -D -L -p -F -v -V -h"
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# With '=' in COMP_WORDBREAKS (bash's default) "--device=lo" arrives as
	# "--device" "=" "lo"; without it, as one word.
	if [[ $cur == = ]]; then
		opt=$prev
		cur=
	elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
		opt=${COMP_WORDS[COMP_CWORD - 2]}
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		cur=${cur#*=}
		case $opt in
		--device) _truestat_devices_matching "--device=" "$cur" ;;
		--hist) [[ fine == "$cur"* ]] && COMPREPLY=(--hist=fine) ;;
		--units) mapfile -t COMPREPLY < <(compgen -W "us ms" -P "--units=" -- "$cur") ;;
		--web.histogram-buckets)
			mapfile -t COMPREPLY < <(compgen -W "short full" -P "$opt=" -- "$cur") ;;
		--heatmap | --web.config.file)
			mapfile -t COMPREPLY < <(compgen -f -P "$opt=" -- "$cur") ;;
		--cgroup) mapfile -t COMPREPLY < <(compgen -d -P "$opt=" -- "$cur") ;;
		esac
		return 0
	fi
	case $opt in
	--device) _truestat_devices_matching "" "$cur"; return 0 ;;
	--hist) [[ fine == "$cur"* ]] && COMPREPLY=(fine); return 0 ;;
	--units) mapfile -t COMPREPLY < <(compgen -W "us ms" -- "$cur"); return 0 ;;
	--web.histogram-buckets)
		mapfile -t COMPREPLY < <(compgen -W "short full" -- "$cur"); return 0 ;;
	--heatmap | --web.config.file)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return 0 ;;
	--cgroup) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return 0 ;;
	?*) return 0 ;;
	esac

	case $prev in
	-d | --device)
		_truestat_devices_matching "" "$cur"
		return 0
		;;
	--units)
		mapfile -t COMPREPLY < <(compgen -W "us ms" -- "$cur")
		return 0
		;;
	-c | --cgroup)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return 0
		;;
	--pid)
		mapfile -t COMPREPLY < <(cd /proc && compgen -W "$(echo [0-9]*)" -- "$cur")
		return 0
		;;
	--prometheus | --web.listen-address)
		return 0 # [ADDR:]PORT: nothing to offer
		;;
	esac
	case $cur in
	-d?*)	# -dloop0: the value attached to the option
		_truestat_devices_matching "-d" "${cur#-d}"
		;;
	-*)
		mapfile -t COMPREPLY < <(compgen -W "$longs $shorts" -- "$cur")
		;;
	esac
	# interval and count are numbers: nothing to offer
	return 0
}
complete -F _truestat truestat
