# Shared by frontier.sh and frontier_rows.sh (sourced, after $build is set):
# the program, `expand` for lists such as 1-5 or 1,2,4, and $tmp, the folder of
# the runs' JSON (FRONTIER_RUNS=DIR keeps them there and reuses those present).
bin="$build/mhaq"
[[ -x "$bin" ]] || { echo "build $bin first (cmake --build $build --target mhaq)"; exit 2; }
expand() { python3 -c 'import sys
out=[]
for p in sys.argv[1].split(","):
    a,_,b=p.partition("-"); out+=list(range(int(a),int(b or a)+1))
print(" ".join(map(str,out)))' "$1"; }
if [[ -n "${FRONTIER_RUNS:-}" ]]; then
  tmp=$FRONTIER_RUNS
  mkdir -p "$tmp"
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
fi
