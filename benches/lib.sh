# Shared by the benchmark scripts (sourced): `measure NAME CMD...` runs a command
# under GNU time and prints its wall time and peak memory (kept in $W/NAME.secs and
# $W/NAME.rss); `ratio A B` prints A's time over B's.
measure() { # name, command...
  local name=$1; shift
  /usr/bin/time -v "$@" > "$W/$name.out" 2> "$W/$name.time"
  local secs rss
  secs=$(grep "Elapsed (wall clock)" "$W/$name.time" | awk '{print $NF}' | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
  rss=$(grep "Maximum resident set size" "$W/$name.time" | awk '{print $NF}')
  printf '%-36s %8.2f s  peak %7.1f MiB\n' "$name" "$secs" "$(awk -v r="$rss" 'BEGIN{print r/1024}')"
  echo "$secs" > "$W/$name.secs"; echo "$rss" > "$W/$name.rss"
}
ratio() { printf '  ratio %s / %s = %.2f\n' "$1" "$2" "$(awk -v a="$(cat "$W/$1.secs")" -v b="$(cat "$W/$2.secs")" 'BEGIN{print a/b}')"; }
