#!/usr/bin/env zsh
# SPDX-License-Identifier: Apache-2.0
# zsh_complete.zsh DIR LINE...: for each LINE, what zsh's completion offers at its end,
# as after a TAB: a line "> LINE", then the candidates, sorted, one per line.
#
# An interactive zsh runs in a pseudo-terminal (zpty) with a scratch ZDOTDIR whose
# .zshrc puts DIR first in $fpath and runs compinit; compadd is wrapped to write down
# what each completion function offers, and a post-completion hook says when it is
# done, so nothing here sleeps for a guessed time.
zmodload zsh/zpty || exit 2
emulate -L zsh

dir=${1:A}
shift
zd=$(mktemp -d) || exit 2
# No EXIT trap: zpty's child shells would run it too, and remove zd under the others.
bail() {
	print -u2 -r -- "zsh_complete: $1"
	zpty -d z 2>/dev/null
	rm -rf -- $zd
	exit 2
}

cat >$zd/.zshrc <<EOF
fpath=($dir \$fpath)
autoload -U compinit && compinit -u -d $zd/.zcompdump
unsetopt auto_list list_ambiguous auto_menu
setopt no_beep
PS1=''
_zc_done() { print -r -- done >>$zd/done }
_zc_complete() { comppostfuncs+=(_zc_done); _complete }
zstyle ':completion:*' completer _zc_complete
compadd() {
	if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
		builtin compadd "\$@"
		return
	fi
	local -a hits
	builtin compadd -A hits "\$@"
	(( \$#hits )) && print -rl -- \$hits >>$zd/out
	builtin compadd "\$@"
}
precmd() { print -r -- ready >>$zd/ready }
EOF

# wait_for FILE: until it exists, draining the terminal; 1 after 20 s.
wait_for() {
	local i junk
	for i in {1..200}; do
		[[ -e $1 ]] && return 0
		while zpty -rt z junk 2>/dev/null; do :; done
		sleep 0.1
	done
	return 1
}

for line in "$@"; do
	rm -f $zd/out $zd/done $zd/ready
	zpty z "exec env ZDOTDIR=$zd TERM=dumb zsh -i" || bail "cannot start zsh in a pty"
	wait_for $zd/ready || bail "zsh did not start"
	zpty -w -n z "$line"$'\t'
	wait_for $zd/done || bail "no completion for: $line"
	zpty -d z
	print -r -- "> $line"
	[[ -e $zd/out ]] && sort -u $zd/out
done
rm -rf -- $zd
exit 0
