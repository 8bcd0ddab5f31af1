# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/sid-*: Debian sid's packages (or, with sid_suite set before
# sid_apt_init, another suite's) fetched through a private apt (its own sources, lists,
# cache and status under DIR/apt), the system's apt left untouched.
# The sourcing script defines cannot_fetch MESSAGE... (prints it as one line, exits 75).
#
#   sid_apt_init DIR VAR...     picks the mirror (the value of the first VAR set, else
#                               the one the system's sources name; messages suggest
#                               the first VAR) and writes DIR/apt; exports APT_CONFIG
#   sid_apt_update              fetches sid's package index
#   sid_apt_download PKG...     downloads the PKGs' .debs into a fresh DIR/debs
#   sid_apt_clean               drops the index and cache, once the .debs are unpacked
#
# Sets sid_apt (DIR/apt), sid_debs (DIR/debs) and sid_mirror.

# sid_apt_system_sources: one "URI SUITE" line per deb entry of the system's sources,
# one-line or deb822.
sid_apt_system_sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/)
				while (i < NF && $i !~ /\]$/)
					i++
			if ($i ~ /\]$/)
				i++
			print $i, $(i + 1)
		}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk 'BEGIN { RS = ""; FS = "\n" }
		{
			types = uris = suites = ""; enabled = "yes"
			for (i = 1; i <= NF; i++) {
				if ($i !~ /^[A-Za-z-]+:/)
					continue
				k = tolower($i); sub(/:.*/, "", k)
				v = $i; sub(/^[^:]*:[ \t]*/, "", v)
				if (k == "types") types = v
				else if (k == "uris") uris = v
				else if (k == "suites") suites = v
				else if (k == "enabled") enabled = tolower(v)
			}
			if (enabled == "no" || (" " types " ") !~ /[ \t]deb[ \t]/)
				next
			n = split(uris, u, /[ \t]+/); m = split(suites, s, /[ \t]+/)
			for (a = 1; a <= n; a++)
				for (b = 1; b <= m; b++)
					print u[a], s[b]
		}' "$f"
	done
}

# sid_apt_last_error LOG: apt's last error or warning that names the cause, for a
# one-line message.
sid_apt_last_error() {
	{ grep -E '^(E|W):' "$1" | grep -v 'Some index files failed' || tail -1 "$1"; } | tail -1
}

sid_apt_init() {
	local dir=$1 var codename keyring arch
	shift
	sid_mirror_var=$1
	sid_mirror=
	for var in "$@"; do
		sid_mirror=${!var:-}
		[ -z "$sid_mirror" ] || break
	done
	# The mirror that serves the system's own release (not its -security or -updates suite).
	if [ -z "$sid_mirror" ]; then
		# shellcheck source=/dev/null
		codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
		sid_mirror=$(sid_apt_system_sources | awk -v c="$codename" '$2 == c { print $1; exit }')
		[ -n "$sid_mirror" ] ||
			sid_mirror=$(sid_apt_system_sources | awk '$1 ~ /\/debian\/?$/ { print $1; exit }')
	fi
	[ -n "$sid_mirror" ] || cannot_fetch "no Debian mirror in /etc/apt/sources.list or" \
		"/etc/apt/sources.list.d/; add one, or set $sid_mirror_var=URL of a Debian mirror"
	sid_mirror=${sid_mirror%/}
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -r "$keyring" ] || cannot_fetch "$keyring missing: install debian-archive-keyring"
	arch=$(dpkg --print-architecture)

	# Of the system's configuration only the Acquire settings (proxies, date checks),
	# not its hooks or extra index targets.
	sid_apt=$dir/apt
	sid_debs=$dir/debs
	rm -rf "$sid_apt" "$sid_debs"
	mkdir -p "$sid_apt/conf.d" "$sid_apt/sources.list.d" "$sid_apt/preferences.d" \
		"$sid_apt/lists/partial" "$sid_apt/cache/archives/partial"
	: >"$sid_apt/status"
	echo "deb [signed-by=$keyring arch=$arch] $sid_mirror ${sid_suite:-sid} main" \
		>"$sid_apt/sources.list"
	{
		apt-config dump | grep '^Acquire::' | grep -v '^Acquire::IndexTargets' || true
		cat <<EOC
Dir::Etc "$sid_apt";
Dir::Etc::main "none.conf";
Dir::Etc::Parts "conf.d";
Dir::Etc::SourceList "sources.list";
Dir::Etc::SourceParts "sources.list.d";
Dir::Etc::Preferences "preferences";
Dir::Etc::PreferencesParts "preferences.d";
Dir::State "$sid_apt";
Dir::State::status "$sid_apt/status";
Dir::Cache "$sid_apt/cache";
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
APT::Sandbox::User "root";
Acquire::Languages "none";
EOC
	} >"$sid_apt/apt.conf"
	export APT_CONFIG=$sid_apt/apt.conf
}

sid_apt_update() {
	apt-get -q --error-on=any update >"$sid_apt/update.log" 2>&1 ||
		cannot_fetch "cannot fetch Debian ${sid_suite:-sid}'s package index from $sid_mirror" \
			"($(sid_apt_last_error "$sid_apt/update.log")); check network access to" \
			"$sid_mirror or set $sid_mirror_var=URL; log: $sid_apt/update.log"
}

sid_apt_download() {
	rm -rf "$sid_debs"
	mkdir -p "$sid_debs"
	(cd "$sid_debs" && apt-get -q download "$@") >"$sid_apt/download.log" 2>&1 ||
		cannot_fetch "cannot download $* from Debian ${sid_suite:-sid} at $sid_mirror" \
			"($(sid_apt_last_error "$sid_apt/download.log")); check network access, or" \
			"whether ${sid_suite:-sid} still has them; log: $sid_apt/download.log"
}

sid_apt_clean() {
	rm -rf "$sid_apt/lists" "$sid_apt/cache"
}
