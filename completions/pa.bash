# SPDX-License-Identifier: Apache-2.0
# bash completion for perf-agent, pa-record, pa-report, pa-convert and pa-gpu-attach.
# Install: source it, or copy it to /usr/share/bash-completion/completions/ as
# pa-record and link pa-report, pa-convert, pa-gpu-attach and perf-agent to it (as
# make install does).
# scripts/lint-options checks that each function completes every option of its
# command's --help.

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
	--gpu-stacks)
		COMPREPLY=($(compgen -W "0 100 1000 10000" -- "$cur"))
		return
		;;
	esac
	COMPREPLY=($(compgen -W "-p --pid -a --all-cpus -d --duration -F --freq
		-e --event -c --count -C --cpu -G --cgroup --all-cgroups --no-cgroups --label-env --tag
		--no-kernel -N --no-buildid-cache --offcpu --no-cpu --offcpu-min --offcpu-state
		-o --output -z -z3 --compression-level= --unwind --unwind-rows --gpu --gpu-stacks --pmu --per-pid --json --no-python --dump -q --quiet -v -vv
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
		# --pprof takes a comma list of events, --folded one
		if [[ " ${COMP_WORDS[*]} " == *" --pprof "* ]]; then
			_pa_comma_list "cpu-clock offcpu-time gpu-time gpu-launch"
		else
			COMPREPLY=($(compgen -W "cpu-clock offcpu-time gpu-time gpu-launch" -- "$cur"))
		fi
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
	local cur i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}

	# Options come first; the first other word (or the one after "--") is the
	# command, and what follows is its own.
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--check)
			return
			;;
		--)
			((i++))
			break
			;;
		-*) ;;
		*)
			break
			;;
		esac
	done
	if ((i < COMP_CWORD)); then
		COMPREPLY=($(compgen -f -- "$cur"))
	elif [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "--check -q --quiet -h --help --version --" -- "$cur"))
	else
		COMPREPLY=($(compgen -c -- "$cur"))
	fi
}

_perf_agent()
{
	local cur prev
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	# perf-agent COMMAND ARGS: ARGS are completed as pa-COMMAND's.
	if ((COMP_CWORD > 1)); then
		case ${COMP_WORDS[1]} in
		record | report | convert | gpu-attach)
			local fn=_pa_${COMP_WORDS[1]//-/_}
			local -a words=("pa-${COMP_WORDS[1]}" "${COMP_WORDS[@]:2}")
			local COMP_CWORD=$((COMP_CWORD - 1))
			local -a COMP_WORDS=("${words[@]}")
			$fn
			return
			;;
		esac
	fi

	case $prev in
	-p | --pid)
		COMPREPLY=($(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur"))
		return
		;;
	-d | --duration | --interval | --retry-max)
		COMPREPLY=($(compgen -W "500ms 1s 5s 10s 30s 1m 5m" -- "$cur"))
		return
		;;
	-F | --freq)
		COMPREPLY=($(compgen -W "49 99 999 4999" -- "$cur"))
		return
		;;
	-o | --output-dir | --spool)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--basic-auth-file | --token-file | --cacert)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--push)
		COMPREPLY=($(compgen -W "http:// https://" -- "$cur"))
		compopt -o nospace 2>/dev/null
		return
		;;
	--spool-max)
		COMPREPLY=($(compgen -W "64M 256M 1G" -- "$cur"))
		return
		;;
	--tag | --app | --tenant)
		return
		;;
	esac
	if ((COMP_CWORD == 1)) && [[ $cur != -* ]]; then
		COMPREPLY=($(compgen -W "record report convert gpu-attach" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -W "-p --pid -a --all-cpus -d --duration -F --freq --offcpu --gpu
		--pmu --tag --profile -o --output-dir --continuous --interval --push --app --tenant
		--basic-auth-file --token-file --cacert --spool --spool-max --retry-max -q --quiet
		-h --help --version" -- "$cur"))
}

complete -F _pa_record pa-record
complete -F _pa_report pa-report
complete -F _pa_convert pa-convert
complete -F _pa_gpu_attach pa-gpu-attach
complete -F _perf_agent perf-agent
