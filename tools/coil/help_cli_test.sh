#!/usr/bin/env bash
# Every command `coil help` lists answers --help (and -h) with its usage on stdout and exit
# status 0; a usage error prints the same text on stderr with status 2.
set -uo pipefail
coil=tools/coil/coil
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }

commands=$($coil help | awk '/^  [a-z]+ /{print $1}' | sort -u)
[ "$(wc -w <<<"$commands")" -ge 12 ] && pass "help lists commands: $(echo $commands)" ||
  fail help_lists "$commands"
for c in $commands; do
  case $c in version | help) continue ;; esac
  for flag in --help -h; do
    out=$($coil $c $flag 2>/tmp/help_err.$$); status=$?
    if [ "$status" -eq 0 ] && grep -q "^usage: coil $c" <<<"$out" && [ ! -s /tmp/help_err.$$ ]; then
      pass "$c $flag"
    else
      fail "$c $flag" "status $status, stdout: $(head -2 <<<"$out"), stderr: $(head -2 /tmp/help_err.$$)"
    fi
  done
done
# Asked for, the usage is not an error; a wrong call is (stderr, status 2).
out=$($coil run 2>&1 >/dev/null); status=$?
[ "$status" -eq 2 ] && grep -q '^usage: coil run' <<<"$out" && pass "run without FILE: usage on stderr, 2" ||
  fail run_no_file "status $status: $out"
out=$($coil ops extra 2>&1 >/dev/null); status=$?
[ "$status" -eq 2 ] && pass "ops with an argument: status 2" || fail ops_extra "status $status: $out"
rm -f /tmp/help_err.$$
[ "$fails" -eq 0 ]
