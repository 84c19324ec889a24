# bash completion for stax, installed as
# $(PREFIX)/share/bash-completion/completions/stax by make install.
#
# The commands and each command's options are read from the stax being
# completed ("stax help", "stax help CMD"), so they cannot disagree with
# it: options are the -x and --long words of the usage lines and of the
# option lines (indented 2-4 spaces) of its help; the values of an
# option come from "--opt a|b|c" in the usage lines.

# _stax_help_words STAX CMD: the options CMD's help lists, one a line
_stax_help_words() {
	"$1" help "$2" 2>/dev/null | awk '
	function grab(s,   t) {
		while (match(s, /(^|[^A-Za-z0-9-])--?[A-Za-z][A-Za-z0-9-]*/)) {
			t = substr(s, RSTART, RLENGTH)
			sub(/^[^-]/, "", t)
			print t
			s = substr(s, RSTART + RLENGTH)
		}
	}
	NR == 1 && /^usage:/ { u = 1 }
	u && /^[ \t]*$/ { u = 0 }
	u { sub(/^usage: [^ ]+ [^ ]+/, ""); grab($0); next }
	/^(  |   |    )-/ { s = $0; sub(/^ +/, "", s); sub(/  .*/, "", s); grab(s) }
	END { print "--help" }' | sort -u
}

# _stax_help_values STAX CMD OPTION: the values "OPTION a|b|c" lists
_stax_help_values() {
	"$1" help "$2" 2>/dev/null | awk -v opt="$3" '
	NR == 1 && /^usage:/ { u = 1 }
	u && /^[ \t]*$/ { exit }
	u {
		n = split($0, w, /[][ ()]+/)
		for (i = 1; i < n; i++)
			if (w[i] == opt && w[i + 1] ~ /^[a-z0-9-]+(\|[a-z0-9-]+)+$/) {
				m = split(w[i + 1], v, "|")
				for (j = 1; j <= m; j++)
					print v[j]
			}
	}' | sort -u
}

_stax() {
	local stax=$1 cur=${COMP_WORDS[COMP_CWORD]} prev= cmd i values
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$("$stax" help 2>/dev/null | awk '
			/^commands:/ { on = 1; next }
			on && /^  [a-z]/ { print $1 }
			on && /^$/ { exit }')" -- "$cur"))
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	# record -- CMD ARGS: complete the command line
	if [ "$cmd" = record ]; then
		for ((i = 2; i < COMP_CWORD; i++)); do
			if [ "${COMP_WORDS[i]}" = -- ]; then
				if declare -F _command_offset >/dev/null; then
					_command_offset $((i + 1))
				elif [ $((i + 1)) -eq "$COMP_CWORD" ]; then
					COMPREPLY=($(compgen -c -- "$cur"))
				else
					COMPREPLY=($(compgen -f -- "$cur"))
				fi
				return 0
			fi
		done
	fi
	[ "$cmd" = help ] && {
		COMPREPLY=($(compgen -W "$("$stax" help 2>/dev/null | awk '
			/^commands:/ { on = 1; next }
			on && /^  [a-z]/ { print $1 }
			on && /^$/ { exit }')" -- "$cur"))
		return 0
	}
	case $prev in
	-i | --input)
		# recordings (and perf.data), and directories to reach them
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -X '!*.data' -- "$cur") $(compgen -d -- "$cur"))
		return 0
		;;
	-o | --output)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0
		;;
	-*)
		values=$(_stax_help_values "$stax" "$cmd" "$prev")
		if [ -n "$values" ]; then
			COMPREPLY=($(compgen -W "$values" -- "$cur"))
			return 0
		fi
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_stax_help_words "$stax" "$cmd")" -- "$cur"))
		return 0
	fi
	# a query's FILE (import: a perf.data, diff: two recordings)
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen -f -X '!*.data' -- "$cur") $(compgen -d -- "$cur"))
	return 0
}
complete -F _stax stax
