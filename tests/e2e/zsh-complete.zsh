# zsh-complete.zsh - type a line into an interactive zsh (zpty) with stax's
# completion loaded, press TAB, and print the line as completion left it,
# in brackets. tests/e2e/install.sh runs it:
#   zsh -f zsh-complete.zsh COMPLETION_DIR WORK_DIR STAX_DIR CWD LINE
# zle reads keys in order, so the ^X that dumps the line runs after TAB's
# completion has finished.
zmodload zsh/zpty || exit 2
zpty z zsh -f -i
zpty -w z "PS1='> '; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -d ${(q)2}/zcompdump; path=(${(q)3} \$path); cd ${(q)4}; unsetopt beep"
zpty -w z "dump() { print -r -- \"[\$BUFFER]\" >${(q)2}/buffer.tmp && mv ${(q)2}/buffer.tmp ${(q)2}/buffer; BUFFER=; zle accept-line }; zle -N dump; bindkey '^X' dump"
rm -f $2/buffer
zpty -w -n z "$5"$'\t\C-x'
for i in {1..300}; do
	[[ -s $2/buffer ]] && break
	zpty -r -t z junk 2>/dev/null
	sleep 0.1
done
zpty -d z
cat $2/buffer
