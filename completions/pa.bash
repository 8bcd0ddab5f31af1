# SPDX-License-Identifier: Apache-2.0
# bash completion for pa-record, pa-report and pa-convert.
# Install: source it, or copy to /usr/share/bash-completion/completions/ as
# pa-record, pa-report and pa-convert (or link all three names to it).

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
	-o | --output)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	esac
	COMPREPLY=($(compgen -W "-p --pid -a --all-cpus -d --duration -F --freq
		--no-kernel -o --output -q --quiet -v --verbose -h --help --version --" -- "$cur"))
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
		# Complete the last item of a comma list.
		local done=${cur%,*} last=${cur##*,} k
		[[ $cur == *,* ]] && done+=, || done=
		COMPREPLY=()
		for k in comm pid tid dso sym; do
			[[ $k == "$last"* ]] && COMPREPLY+=("$done$k")
		done
		compopt -o nospace 2>/dev/null
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
	--percent-limit | --tid | --comm | --event)
		return
		;;
	esac
	COMPREPLY=($(compgen -W "-i --input -s --sort --children --no-children -g
		--call-graph --percent-limit --event --pid --tid --comm --stdio --no-demangle
		-q --quiet -h --help --version" -- "$cur"))
}

_pa_convert()
{
	local cur prev
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	case $prev in
	-i | --input | -o | --output)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--event)
		return
		;;
	esac
	COMPREPLY=($(compgen -W "-i --input --pprof --folded -o --output --event -q --quiet
		-h --help --version" -- "$cur"))
}

complete -F _pa_record pa-record
complete -F _pa_report pa-report
complete -F _pa_convert pa-convert
