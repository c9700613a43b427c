# Writes the man page redjit.1 from the CLI's own help text, so the page says what
# `redjit --help` and `redjit help COMMAND` say (docs/CLI.md, "Man page and completion").
#   cmake -DREDJIT=<the built redjit> -DOUT=<redjit.1> -DVERSION=X.Y.Z -P cmake/man.cmake
foreach(var REDJIT OUT VERSION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "man.cmake: -D${var}=... is required")
  endif()
endforeach()

# Text as roff shows it verbatim between .nf and .fi: backslashes escaped, a leading . or '
# guarded, - as a minus sign (so it copies and pastes as typed).
function(rj_roff text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(rj_help out)
  execute_process(COMMAND ${REDJIT} ${ARGN} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "man.cmake: `redjit ${ARGN}` failed (${rc})")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

rj_help(overview --help)
# the commands: the overview's lines "  NAME  summary" after "commands:"
string(REGEX MATCH "commands:\n(  [a-z]+ [^\n]*\n)+" listed "${overview}")
string(REGEX MATCHALL "\n  [a-z]+" names "${listed}")
rj_roff("${overview}" body)
set(page ".TH REDJIT 1 \"\" \"redjit ${VERSION}\" \"User Commands\"
.SH NAME
redjit \\- JIT\\-compiled GPU reductions: PTX, dispatch, run and bench of a request
.SH SYNOPSIS
.B redjit
.I COMMAND
[\\fIREQUEST\\fR] [\\fIOPTIONS\\fR]
.SH DESCRIPTION
The text of
.BR \"redjit \\-\\-help\" :
.PP
.nf
${body}.fi
.SH COMMANDS
Each command's text is that of
.BR \"redjit help\" \" COMMAND\".
")
foreach(name ${names})
  string(STRIP "${name}" name)
  rj_help(text help ${name})
  rj_roff("${text}" body)
  string(APPEND page ".SS ${name}\n.nf\n${body}.fi\n")
endforeach()
string(APPEND page ".SH SEE ALSO
The reference of the command line, with every output and exit status:
.I docs/CLI.md
(installed in share/doc/redjit/docs/); the request format:
.IR docs/REQUESTS.md .
")
file(WRITE ${OUT} "${page}")
