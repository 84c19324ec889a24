#!/bin/sh
# gen-page.sh - turn page.html and its scripts into C strings (make writes
# them to build/gen/page.c). usage: gen-page.sh PAGE.html SCRIPT.js...
# serve_page is the HTML, serve_page_js the scripts one after another.
str() { sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$/\\n"/' "$@"; }
html=$1
shift
printf '/* page.c - generated from page.html and %s by gen-page.sh; edit those. */\n' "$(for f in "$@"; do basename "$f"; done | tr '\n' ' ' | sed 's/ $//')"
printf '#include "serve/serve.h"\n\nconst char serve_page[] =\n'
str "$html"
printf ';\n\nconst char serve_page_js[] =\n'
str "$@"
printf ';\n'
