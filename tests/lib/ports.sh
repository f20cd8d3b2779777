# Free TCP ports of 127.0.0.1 for a test script's servers. Sourced by kubesim.sh and
# snapshot.sh (and so by every script that sources one of them):
#
#   free_port [RECORD]
#
# prints a port nobody listens on, picked at random below the ephemeral range (32768 and up
# on Linux): a port there may become the local port of any outgoing connection of any test
# running beside this one between being picked and being bound, and the server then fails to
# start. With RECORD (a file), never a port recorded there before, and the port is recorded:
# it runs in command substitutions, so two ports asked for before either is bound (a server's
# client and peer ports) are never the same.
free_port() {
    local p f=${1:-}
    while :; do
        p=$((20000 + RANDOM % 12000))
        [ -n "$f" ] && grep -qx "$p" "$f" 2>/dev/null && continue
        (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
        [ -z "$f" ] || echo "$p" >>"$f"
        echo "$p"
        return
    done
}
