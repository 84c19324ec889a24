# report.awk - turn bench/work/report.tsv into report.md or report.json.
#
#   awk -F '\t' -v fmt=md   -f bench/report.awk bench/work/report.tsv
#   awk -F '\t' -v fmt=json -f bench/report.awk bench/work/report.tsv
#
# Input lines (tab-separated; bench/run.sh writes them):
#   M key value               machine and run facts
#   S id title                a section starts
#   T id target status        its target and verdict (met, not met, n/a)
#   C id name:type ...        its columns; type s (text), n (number),
#                             r (ratio: "median min max" in one cell)
#   R id cell ...             a row; "-" is a missing number (JSON null)
#   N id text                 a note under the table
# In JSON a row is an object keyed by column name; an r cell becomes
# {"median":..,"min":..,"max":..}.

function jstr(s) {
	gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/\t/, "\\t", s)
	return "\"" s "\""
}
function isnum(s) { return s ~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/ }
function jnum(s) { return isnum(s) ? s + 0 : "null" }
function mdcell(s, t,    a) {
	if (t == "r") {
		if (split(s, a, " ") == 3 && isnum(a[1]))
			return sprintf("%s [%s-%s]", a[1], a[2], a[3])
		return "-"
	}
	gsub(/\|/, "\\|", s)
	return s
}

$1 == "M" { mk[++nm] = $2; mv[nm] = $3; next }
$1 == "S" { id = $2; order[++ns] = id; title[id] = $3; next }
$1 == "T" { target[$2] = $3; status[$2] = $4; next }
$1 == "C" { nc[$2] = NF - 2; for (i = 3; i <= NF; i++) { split($i, a, ":"); cn[$2, i - 2] = a[1]; ct[$2, i - 2] = a[2] }; next }
$1 == "R" { r = ++nr[$2]; for (i = 3; i <= NF; i++) cell[$2, r, i - 2] = $i; next }
$1 == "N" { notes[$2, ++nn[$2]] = $3; next }

END {
	if (fmt == "md") {
		print "# stax benchmark report"
		print ""
		for (i = 1; i <= nm; i++)
			printf "- %s: %s\n", mk[i], mv[i]
		for (s = 1; s <= ns; s++) {
			id = order[s]
			printf "\n## %s\n\n", title[id]
			printf "Target: %s. Status: **%s**\n\n", target[id], status[id]
			line = "|"; sep = "|"
			for (c = 1; c <= nc[id]; c++) { line = line " " cn[id, c] " |"; sep = sep "---|" }
			print line; print sep
			for (r = 1; r <= nr[id]; r++) {
				line = "|"
				for (c = 1; c <= nc[id]; c++) {
					v = mdcell(cell[id, r, c], ct[id, c])
					if (cn[id, c] == "command" && v != "-")
						v = "`" v "`"
					line = line " " v " |"
				}
				print line
			}
			if (nn[id]) print ""
			for (k = 1; k <= nn[id]; k++)
				print "- " notes[id, k]
		}
		exit
	}
	printf "{\n  \"run\": {"
	for (i = 1; i <= nm; i++)
		printf "%s%s: %s", (i > 1 ? ", " : ""), jstr(mk[i]), jstr(mv[i])
	printf "},\n  \"sections\": ["
	for (s = 1; s <= ns; s++) {
		id = order[s]
		printf "%s\n    {\"id\": %s, \"title\": %s, \"target\": %s, \"status\": %s,\n     \"columns\": [", \
			(s > 1 ? "," : ""), jstr(id), jstr(title[id]), jstr(target[id]), jstr(status[id])
		for (c = 1; c <= nc[id]; c++)
			printf "%s{\"name\": %s, \"type\": %s}", (c > 1 ? ", " : ""), jstr(cn[id, c]), jstr(ct[id, c])
		printf "],\n     \"rows\": ["
		for (r = 1; r <= nr[id]; r++) {
			printf "%s\n      {", (r > 1 ? "," : "")
			for (c = 1; c <= nc[id]; c++) {
				v = cell[id, r, c]; t = ct[id, c]
				if (t == "n")
					jv = jnum(v)
				else if (t == "r") {
					if (split(v, a, " ") == 3)
						jv = sprintf("{\"median\": %s, \"min\": %s, \"max\": %s}", jnum(a[1]), jnum(a[2]), jnum(a[3]))
					else
						jv = "null"
				} else
					jv = jstr(v)
				printf "%s%s: %s", (c > 1 ? ", " : ""), jstr(cn[id, c]), jv
			}
			printf "}"
		}
		printf "],\n     \"notes\": ["
		for (k = 1; k <= nn[id]; k++)
			printf "%s%s", (k > 1 ? ", " : ""), jstr(notes[id, k])
		printf "]}"
	}
	printf "\n  ]\n}\n"
}
