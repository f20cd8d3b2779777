# For the end-to-end tests that run the real backup sidecar (etcd-backup-restore's etcdbrctl,
# $WARDEN_ETCDBRCTL) beside warden-controller on kube-sim: tests/lib/snapshot.sh and
# tests/lib/controller.sh, the test skipped (77) without etcdbrctl or etcd, and snapshot.sh's
# clean-ups (processes, work dir) run by kubesim.sh's EXIT trap, the one left.
#
#   snap_restored_is PREFIX WANT   etcdbrctl restore of PREFIX, etcd started on the restored
#                                  data directory: its keys and values (snap_etcd_dump) must be
#                                  the file WANT's; SNAP_ETCD_URL, SNAP_ETCD_PID are that etcd's
. "$(dirname "${BASH_SOURCE[0]}")/snapshot.sh"
snap_need_sidecar
. "$(dirname "${BASH_SOURCE[0]}")/controller.sh"
ksim_on_exit snap_cleanups

snap_restored_is() {
    local d=$SNAP_WORK/restore-${1//\//_}
    snap_brctl_restore "$1" "$d"
    snap_etcd_start restored "$d/data" "$SNAP_RESTORE_PEER"
    snap_etcd_dump "$SNAP_ETCD_URL" >"$d.got"
    diff "$2" "$d.got" >&2 || ctl_fail "etcdbrctl restore of $1: the keys differ from $2's"
}
