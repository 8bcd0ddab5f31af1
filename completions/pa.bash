# SPDX-License-Identifier: Apache-2.0
# bash completion for pa-record, pa-report and pa-convert.
# Install: source it, or copy to /usr/share/bash-completion/completions/ as
# pa-record, pa-report and pa-convert (or link all three names to it).

# _pa_comma_list WORDS: complete the last item of a comma list in $cur from WORDS.
_pa_comma_list()
{
	local done=${cur%,*} last=${cur##*,} k
	[[ $cur == *,* ]] && done+=, || done=
	COMPREPLY=()
	for k in $1; do
		[[ $k == "$last"* ]] && COMPREPLY+=("$done$k")
	done
	compopt -o nospace 2>/dev/null
}

_pa_record()
{
	local cur prev i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	# After "--" the words belong to the command being profiled.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			if ((i + 1 == COMP_CWORD)); then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			return
		fi
	done

	case $prev in
	-p | --pid)
		COMPREPLY=($(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur"))
		return
		;;
	-d | --duration)
		COMPREPLY=($(compgen -W "500ms 1s 5s 10s 30s 1m 5m" -- "$cur"))
		return
		;;
	-F | --freq)
		COMPREPLY=($(compgen -W "49 99 999 4999" -- "$cur"))
		return
		;;
	-e | --event)
		_pa_comma_list "cpu-clock task-clock page-faults minor-faults major-faults
			context-switches cpu-migrations cycles instructions cache-misses
			branch-misses L1-dcache-load-misses LLC-load-misses sched:sched_switch"
		return
		;;
	-c | --count)
		COMPREPLY=($(compgen -W "1 100 10000 1000000" -- "$cur"))
		return
		;;
	-C | --cpu)
		COMPREPLY=($(compgen -W "$(seq -s ' ' 0 $(($(nproc 2>/dev/null || echo 1) - 1)))" -- "$cur"))
		return
		;;
	-G | --cgroup)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	-o | --output)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--offcpu-min)
		COMPREPLY=($(compgen -W "0 100us 500us 1ms 5ms 10ms" -- "$cur"))
		return
		;;
	--offcpu-state)
		_pa_comma_list "all sleep io preempted other"
		return
		;;
	--unwind)
		COMPREPLY=($(compgen -W "auto cfi fp dwarf" -- "$cur"))
		return
		;;
	--unwind-rows)
		COMPREPLY=($(compgen -W "1048576 4194304 16777216" -- "$cur"))
		return
		;;
	esac
	COMPREPLY=($(compgen -W "-p --pid -a --all-cpus -d --duration -F --freq
		-e --event -c --count -C --cpu -G --cgroup --all-cgroups --no-cgroups --label-env --tag
		--no-kernel -N --no-buildid-cache --offcpu --no-cpu --offcpu-min --offcpu-state
		-o --output -z -z3 --compression-level= --unwind --unwind-rows --gpu --pmu --per-pid --json --no-python --dump -q --quiet -v -vv
		--verbose -h --help --version --" -- "$cur"))
}

_pa_report()
{
	local cur prev
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	case $prev in
	-i | --input)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	-s | --sort)
		if [[ " ${COMP_WORDS[*]} " == *" --diff "* ]]; then
			COMPREPLY=($(compgen -W "self total" -- "$cur"))
		else
			_pa_comma_list "comm pid tid dso sym state cgroup container pod"
		fi
		return
		;;
	-g | --call-graph)
		COMPREPLY=($(compgen -W "caller callee none" -- "$cur"))
		return
		;;
	--pid)
		COMPREPLY=($(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur"))
		return
		;;
	--event)
		COMPREPLY=($(compgen -W "cpu-clock offcpu-time" -- "$cur"))
		return
		;;
	--debuginfod)
		COMPREPLY=($(compgen -W "${DEBUGINFOD_URLS:-}" -- "$cur"))
		return
		;;
	--percent-limit | --tid | --comm | --focus | --ignore | --rows | --fail-above | --min-samples)
		return
		;;
	esac
	# --diff BASE NEW: the files are plain arguments
	if [[ $cur != -* && " ${COMP_WORDS[*]} " == *" --diff "* ]]; then
		COMPREPLY=($(compgen -f -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -W "-i --input -s --sort --children --no-children -g
		--call-graph --percent-limit --event --pid --tid --comm --pod --container --focus
		--ignore --diff
		--diff-abs --rows --fail-above --min-samples --stdio --no-demangle
		--no-inline --debuginfod -q --quiet -h --help --version" -- "$cur"))
}

_pa_convert()
{
	local cur prev
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	case $prev in
	-i | --input | -o | --output | --diff)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--event)
		COMPREPLY=($(compgen -W "cpu-clock offcpu-time gpu-time gpu-launch" -- "$cur"))
		return
		;;
	--debuginfod)
		COMPREPLY=($(compgen -W "${DEBUGINFOD_URLS:-}" -- "$cur"))
		return
		;;
	--title | --min-width | --focus | --ignore | --pod | --container)
		return
		;;
	esac
	COMPREPLY=($(compgen -W "-i --input --pprof --folded --flamegraph --speedscope -o
		--output --event --diff --diff-abs --inverted --title --min-width --focus --ignore
		--pod --container --tid-label --no-demangle --no-inline --debuginfod -q --quiet -h --help --version" -- "$cur"))
}

_pa_gpu_attach()
{
	local cur=${COMP_WORDS[COMP_CWORD]}

	if [ "$COMP_CWORD" -eq 1 ] && [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "--check -q --quiet -h --help --version" -- "$cur"))
	else
		COMPREPLY=($(compgen -c -- "$cur"))
	fi
}

complete -F _pa_record pa-record
complete -F _pa_report pa-report
complete -F _pa_convert pa-convert
complete -F _pa_gpu_attach pa-gpu-attach
