# bash completion for redjit (installed as share/bash-completion/completions/redjit).  The
# commands and each command's options are read from the tool's own help (`redjit --help`,
# `redjit help COMMAND`), so they are always those of the redjit being completed.
_redjit() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local bin=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]}
  COMPREPLY=()
  if ((COMP_CWORD == 1)); then
    local cmds
    cmds=$("$bin" --help 2>/dev/null | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
    mapfile -t COMPREPLY < <(compgen -W "$cmds --help --version -h -V" -- "$cur")
    return
  fi
  # the option lines of the command's help: "  -t, --target T   ..." or "  --ir MODULE   ..."
  local opts
  opts=$("$bin" help "$cmd" 2>/dev/null | awk '/^options:/ {on = 1; next} on && /^$/ {exit} on && /^  -/')
  # the option before the cursor takes a value: a file, one of its choices, or nothing to offer
  local line
  line=$(printf '%s\n' "$opts" | awk -v o="$prev" '{sub(/^ +/, ""); n = split($0, w, /,? +/);
    for (i = 1; i <= n && w[i] ~ /^-/; i++) if (w[i] == o) {print; exit}}')
  if [[ -n $line && $prev == -* ]]; then
    local metavar
    metavar=$(printf '%s\n' "$line" | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^--/) {print $(i + 1); exit}}')
    case $metavar in
    FILE | MODULE) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    [A-Z]*)
      local values
      values=$("$bin" help "$cmd" 2>/dev/null | awk -v o="$prev" '
        found && /values:/ {sub(/.*values: /, ""); sub(/;.*/, ""); if ($0 ~ /\|/) {gsub(/\|/, " "); print}; exit}
        {n = split($0, w, /,? +/); for (i = 1; i <= n; i++) if (w[i] == o) found = 1}')
      [[ $prev == --target || $prev == -t ]] && values="auto"
      mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
      ;;
    esac
    [[ $metavar == [A-Z]* ]] && return
  fi
  if [[ $cur == -* ]]; then
    local names
    names=$(printf '%s\n' "$opts" | awk '{sub(/^ +/, ""); n = split($0, w, /,? +/);
      for (i = 1; i <= n && w[i] ~ /^-/; i++) print w[i]}')
    mapfile -t COMPREPLY < <(compgen -W "$names" -- "$cur")
  elif [[ $cmd == help ]]; then
    local cmds
    cmds=$("$bin" --help 2>/dev/null | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
    mapfile -t COMPREPLY < <(compgen -W "$cmds" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur") # a REQUEST file
  fi
}
complete -o filenames -o bashdefault -F _redjit redjit
