# bash completion for stax, installed as
# $(PREFIX)/share/bash-completion/completions/stax by make install.
#
# The commands and each command's options are read from the stax being
# completed ("stax help", "stax help CMD"), so they cannot disagree with
# it: options are the -x and --long words of the usage lines and of the
# option lines (indented 2-4 spaces) of its help; what an option takes
# comes from them too: its values ("--opt a|b|c"), a file (FILE), or a
# word to type (nothing is offered then, not recordings).

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

# _stax_help_arg STAX CMD OPTION: what OPTION takes, from CMD's help: a
# first line "values" (then the values: "--opt a|b|c" in the usage or
# the option's line), "file" (an argument named FILE or PERF.DATA) or
# "word" (a value to type, nothing to offer); nothing for a flag. A short
# option is its long one's alias ("-f, --format FORMAT").
_stax_help_arg() {
	# the usage lines come first but name the long option, the option
	# lines name both: read the help twice, option lines first
	{ "$1" help "$2" 2>/dev/null | grep -E '^(  |   |    )-'; "$1" help "$2" 2>/dev/null; } | awk -v opt="$3" '
	# what OPTION of this help takes: "values" and the values (usage
	# "--opt a|b|c", or an option line "-x, --opt a|b|c"), "file" (an
	# argument named FILE or PERF.DATA), "word" (a value to type: nothing
	# to offer), or nothing (a flag)
	function choices(s,   n, m, j, v) {
		sub(/\[.*/, "", s)
		if (s !~ /^[a-z0-9-]+(\|[a-z0-9-]+)+$/)
			return 0
		m = split(s, v, "|")
		for (j = 1; j <= m; j++)
			vals[v[j]] = 1
		return 1
	}
	/^usage:/ { u = 1 }
	u && /^[ \t]*$/ { u = 0 }
	u {
		n = split($0, w, /[][ ()]+/)
		for (i = 1; i < n; i++)
			if (w[i] == opt || w[i] == alt)
				if (choices(w[i + 1]))
					kind = "values"
		next
	}
	/^(  |   |    )-/ {
		s = $0
		sub(/^ +/, "", s)
		sub(/  .*/, "", s)
		# "-f, --format FORMAT" or "--pid PID" or "-g"
		ns = split(s, f, /,? +/)
		long = ""; short = ""; arg = ""
		for (i = 1; i <= ns; i++) {
			if (f[i] ~ /^--/) long = f[i]
			else if (f[i] ~ /^-/) short = f[i]
			else if (arg == "") arg = f[i]
		}
		if (opt != long && opt != short)
			next
		alt = opt == long ? short : long
		if (arg == "")
			flag = 1
		else if (choices(arg))
			kind = "values"
		else if (arg ~ /^(FILE|PERF\.DATA|DIR)$/ && kind == "")
			kind = "file"
		else if (kind == "")
			kind = "word"
	}
	END {
		if (kind != "")
			print kind
		if (kind == "values")
			for (v in vals)
				print v
	}'
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
		values=$(_stax_help_arg "$stax" "$cmd" "$prev")
		case $values in
		values*)
			COMPREPLY=($(compgen -W "$(echo "$values" | sed 1d)" -- "$cur"))
			return 0
			;;
		file*)
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -f -- "$cur"))
			return 0
			;;
		word*)
			return 0 # a number, a name, a regex: nothing to offer
			;;
		esac
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
