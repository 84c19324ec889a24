#!/bin/sh
# roots_list.sh - bench/roots.awk counts rooted stacks for bench and for
# tests (runtime_go.sh) from a copy of src/unwind/roots.c's list (awk
# cannot read C): the copy must name exactly the functions roots.c makes
# roots (ROOT_K_ROOT and ROOT_K_CONTEXT), the ones stax info and flame
# count by (view_is_root_name()).
. "$(dirname "$0")/lib.sh"

c=$(sed -n 's/^[[:space:]]*{ "\([^"]*\)", ROOT_K_\(ROOT\|CONTEXT\) },.*/\1/p' "$ROOT/src/unwind/roots.c" | sort)
a=$(awk '/split\("/,/", r, " "\)/' "$ROOT/bench/roots.awk" | sed 's/, r, " ")//; s/split(//' |
	tr -d '\\"\t' | tr ' ' '\n' | grep -v '^$' | sort)
if [ -z "$c" ]; then
	fail "roots.c's list" "no root found in src/unwind/roots.c (its format changed?)"
elif [ "$c" = "$a" ]; then
	ok "bench/roots.awk names the $(echo "$c" | wc -l) roots of src/unwind/roots.c"
else
	fail "bench/roots.awk names the roots of src/unwind/roots.c" "only in roots.c: $(echo "$c" | grep -vxF "$a" | tr '\n' ' ')| only in roots.awk: $(echo "$a" | grep -vxF "$c" | tr '\n' ' ')"
fi
done_testing
