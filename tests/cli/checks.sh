# Checks shared by the CLI tests, sourced: each failure is printed and counted in $failures,
# which finish() turns into the exit status.
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
# expect STATUS COMMAND...: runs the command, checks its exit status.
expect() {
  local status=$1
  shift
  "$@" >out.txt 2>err.txt
  local got=$?
  if [[ $got != "$status" ]]; then
    fail "exit $got, not $status: $*"
    sed 's/^/  /' err.txt | head -5
  fi
}
# same FILE1 FILE2: byte-identical files.
same() { cmp -s "$1" "$2" || fail "$1 and $2 differ"; }
contains() { grep -qF -- "$2" "$1" || fail "$1 lacks '$2': $(head -3 "$1")"; }
finish() {
  if ((failures)); then
    echo "$failures failures"
    exit 1
  fi
  echo "all $1 checks passed"
}
