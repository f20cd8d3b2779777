# The druid actor: a small model of etcd-druid v0.38 (gardener/etcd-druid 5b90b4a7) for the
# hibernation tests, sourced by druid.sh (see its header for what it models). Every step cites
# the etcd-druid source lines it follows. Needs curl and jq, kube-sim (KSIM_URL, KSIM_DIR) and
# the token file of druid_tokens (it acts as etcd-druid's service account, token druid-token).

# One API request as etcd-druid: _dr_api METHOD PATH [BODY [CONTENT-TYPE]]. The body of the
# answer goes to $_dr_out, its HTTP status to $_dr_code (0: no answer). _dr_get PATH prints it.
_dr_api() {
    _dr_code=$(curl -s --max-time 10 --cacert "$KSIM_DIR/ca.crt" -H "Authorization: Bearer druid-token" \
        -X "$1" ${3:+-H "Content-Type: ${4:-application/merge-patch+json}"} ${3:+--data-binary "$3"} \
        -o "$_dr_out" -w '%{http_code}' "$KSIM_URL$2") || _dr_code=0
}

_dr_get() {
    _dr_api GET "$1"
    cat "$_dr_out"
}

_dr_log() { echo "$(date -u +%H:%M:%S.%N | cut -c1-12) $*" >>"$DRUID_ACTOR_LOG"; }

# Record the outcome of a spec reconcile in status.lastOperation/lastErrors, as
# recordIncompleteReconcileOperation / recordReconcileSuccessOperation do
# (internal/controller/etcd/reconcile_spec.go:34-44, 124-145). STATE: Requeue|Error|Succeeded.
_dr_status() {
    local base=$1 state=$2 code=$3 desc=$4 now errs="[]"
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    [ "$state" = Error ] &&
        errs=$(jq -cn --arg c "$code" --arg d "$desc" --arg t "$now" '[{code:$c,description:$d,observedAt:$t}]')
    _dr_api PATCH "$base/status" "$(jq -cn --arg s "$state" --arg d "$desc" --arg t "$now" --argjson e "$errs" \
        '{status:{lastErrors:$e,lastOperation:{type:"Reconcile",state:$s,description:$d,lastUpdateTime:$t}}}')" >/dev/null
}

# statefulset.go:136-173 ensurePreSyncSnapshot (getLatestPreSyncTask 177-197 lists the whole
# namespace by name prefix, no Etcd name; createPreSyncTask 200-223: full, isFinal unset).
# Prints "wait <why>" or "go <why>".
_dr_presync() {
    local ns=$1 name=$2 uid=$3 prefix=presync-snapshot-hibernation- latest idx state body
    latest=$(_dr_get "/apis/druid.gardener.cloud/v1alpha1/namespaces/$ns/etcdopstasks" |
        jq -c --arg p "$prefix" '[.items[] | select(.metadata.name | startswith($p))
            | select(.metadata.name | ltrimstr($p) | test("^[0-9]+$"))
            | {i: (.metadata.name | ltrimstr($p) | tonumber), s: (.status.state // "")}]
            | max_by(.i) // empty')
    if [ -z "$latest" ]; then
        idx=0
    else
        idx=$(jq -r .i <<<"$latest")
        state=$(jq -r .s <<<"$latest")
        case $state in
        "") echo "wait task $prefix$idx is initializing"; return ;;
        Succeeded) echo "go pre-sync snapshot $prefix$idx Succeeded"; return ;;
        Failed | Rejected)
            # statefulset.go:158-162: after maxPreSyncRetries (3) attempts, proceed without one
            [ "$idx" -ge 2 ] && { echo "go max retries exceeded, no snapshot ($prefix$idx $state)"; return; }
            idx=$((idx + 1)) ;;
        *) echo "wait task $prefix$idx is $state"; return ;;
        esac
    fi
    body=$(jq -cn --arg n "$prefix$idx" --arg e "$name" --arg u "$uid" '{apiVersion:"druid.gardener.cloud/v1alpha1",
        kind:"EtcdOpsTask", metadata:{name:$n, ownerReferences:[{apiVersion:"druid.gardener.cloud/v1alpha1",
        kind:"Etcd", name:$e, uid:$u, controller:true, blockOwnerDeletion:true}]},
        spec:{etcdName:$e, config:{onDemandSnapshot:{type:"full"}}}}')
    _dr_api POST "/apis/druid.gardener.cloud/v1alpha1/namespaces/$ns/etcdopstasks" "$body" application/json
    _dr_log "$ns/$name: created $prefix$idx ($_dr_code)"
    echo "wait waiting for pre-sync snapshot task $prefix$idx"
}

# internal/controller/etcd/reconciler.go:96-146 Reconcile, for one Etcd (JSON in $3).
_dr_reconcile() {
    local ns=$1 auto=$2 etcd=$3 name uid base gen obs op susp store replicas sts_replicas r msg ports
    name=$(jq -r .metadata.name <<<"$etcd")
    uid=$(jq -r .metadata.uid <<<"$etcd")
    base="/apis/druid.gardener.cloud/v1alpha1/namespaces/$ns/etcds/$name"
    gen=$(jq -r .metadata.generation <<<"$etcd")
    obs=$(jq -r '.status.observedGeneration // 0' <<<"$etcd")
    op=$(jq -r '.metadata.annotations // {} | (.["gardener.cloud/operation"] // .["druid.gardener.cloud/operation"] // "")' <<<"$etcd")
    susp=$(jq -r '.metadata.annotations // {} | has("druid.gardener.cloud/suspend-etcd-spec-reconcile")' <<<"$etcd")
    # reconcile_spec.go:147-165 shouldReconcileSpec: suspended -> no; auto-reconcile (on a spec
    # change, register.go:66-70) or the operation annotation -> yes
    [ "$susp" = true ] && return 0
    [ "$op" = reconcile ] || { [ "$auto" = 1 ] && [ "$gen" != "$obs" ]; } || return 0
    store=$(jq -r '.spec.backup.store != null' <<<"$etcd")
    replicas=$(jq -r '.spec.replicas // 1' <<<"$etcd")
    sts_replicas=$(_dr_get "/apis/apps/v1/namespaces/$ns/statefulsets/$name" | jq -r '.spec.replicas // 0')
    # reconcile_spec.go:61-75 preSyncEtcdResources; statefulset.go:91-107 PreSync: backup
    # enabled, StatefulSet above 0, spec.replicas 0 -> the hibernation snapshot
    if [ "$store" = true ] && [ "${sts_replicas:-0}" -gt 0 ] && [ "$replicas" = 0 ]; then
        r=$(_dr_presync "$ns" "$name" "$uid")
        if [ "${r%% *}" = wait ]; then
            _dr_status "$base" Requeue "" "${r#wait }"
            return 0
        fi
        _dr_log "$ns/$name: presync: ${r#go }"
    fi
    # syncEtcdResources: the StatefulSet's replicas (statefulset.go Sync, builder.go)
    if [ "$sts_replicas" != "$replicas" ]; then
        _dr_api PATCH "/apis/apps/v1/namespaces/$ns/statefulsets/$name" "{\"spec\":{\"replicas\":$replicas}}"
        if [ "$_dr_code" != 200 ]; then
            msg=$(jq -r '.message // "?"' "$_dr_out" 2>/dev/null || cat "$_dr_out")
            _dr_log "$ns/$name: StatefulSet sync refused ($_dr_code): $msg"
            _dr_status "$base" Error ERR_SYNC_STATEFULSET "$msg"
            return 0
        fi
        _dr_log "$ns/$name: StatefulSet scaled $sts_replicas -> $replicas"
    fi
    # the client Service's ports as etcd-druid builds them (client, server, backuprestore)
    _dr_api GET "/api/v1/namespaces/$ns/services/$name-client"
    ports=$(jq -c '[.spec.ports[]?.name]' "$_dr_out" 2>/dev/null || true)
    if [ "$_dr_code" = 200 ] && [ "$ports" != '["client","server","backuprestore"]' ]; then
        _dr_api PATCH "/api/v1/namespaces/$ns/services/$name-client" '{"spec":{"ports":[
            {"name":"client","protocol":"TCP","port":2379,"targetPort":2379},
            {"name":"server","protocol":"TCP","port":2380,"targetPort":2380},
            {"name":"backuprestore","protocol":"TCP","port":8080,"targetPort":8080}]}}'
        _dr_log "$ns/$name: client Service ports synced ($_dr_code)"
    fi
    # recordReconcileSuccessOperation clears lastErrors; reconcile_complete.go:15-56
    # completeReconcile: observedGeneration, then the operation annotation removed
    _dr_status "$base" Succeeded "" "Reconciliation succeeded"
    _dr_api PATCH "$base/status" "{\"status\":{\"observedGeneration\":$gen}}" >/dev/null
    _dr_api PATCH "$base" '{"metadata":{"annotations":{"gardener.cloud/operation":null,"druid.gardener.cloud/operation":null}}}' >/dev/null
    _dr_log "$ns/$name: reconciled generation $gen"
}

# internal/controller/etcdopstask/reconcile_task.go: admitTask (83-122; 110-117: rejected while another
# task of the same etcdName is not completed), then execute the on-demand snapshot
# (POST /snapshot/full[?final=true] on <etcd>-client's backup port; 200 Succeeded, another
# status Failed, a transport error retried).
_dr_executor() {
    local ns=$1 tasks t name en state final ip port url code base now
    tasks=$(_dr_get "/apis/druid.gardener.cloud/v1alpha1/namespaces/$ns/etcdopstasks")
    for t in $(jq -r '.items[] | select(.spec.etcdName != null) | select((.status.state // "") | test("^(|Pending|InProgress)$")) | .metadata.name' <<<"$tasks"); do
        base="/apis/druid.gardener.cloud/v1alpha1/namespaces/$ns/etcdopstasks/$t"
        en=$(jq -r --arg t "$t" '.items[] | select(.metadata.name == $t) | .spec.etcdName' <<<"$tasks")
        state=$(jq -r --arg t "$t" '.items[] | select(.metadata.name == $t) | .status.state // ""' <<<"$tasks")
        now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        if [ "$state" != InProgress ]; then
            if jq -e --arg t "$t" --arg e "$en" '[.items[] | select(.spec.etcdName == $e and .metadata.name != $t)
                    | select((.status.state // "") | test("^(Succeeded|Failed|Rejected)$") | not)] | length > 0' \
                    <<<"$tasks" >/dev/null; then
                _dr_api PATCH "$base/status" "$(jq -cn --arg t "$now" '{status:{state:"Rejected",lastTransitionTime:$t,
                    lastErrors:[{code:"ERR_DUPLICATE_TASK",description:"EtcdOpsTask for the same etcd is already in progress",observedAt:$t}]}}')" >/dev/null
                _dr_log "$ns/$t: Rejected (another task of $en is unfinished)"
                continue
            fi
            _dr_api PATCH "$base/status" "{\"status\":{\"state\":\"InProgress\",\"startedAt\":\"$now\",\"lastTransitionTime\":\"$now\"}}" >/dev/null
        fi
        final=$(jq -r --arg t "$t" '.items[] | select(.metadata.name == $t) | .spec.config.onDemandSnapshot.isFinal // false' <<<"$tasks")
        ip=$(_dr_get "/api/v1/namespaces/$ns/services/$en-client" | jq -r .spec.clusterIP)
        port=$(_dr_get "/apis/druid.gardener.cloud/v1alpha1/namespaces/$ns/etcds/$en" | jq -r '.spec.backup.port // 8080')
        url="http://$ip:$port/snapshot/full"
        [ "$final" = true ] && url="$url?final=true"
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -X POST "$url") || code=000
        [ "$code" = 000 ] && continue
        now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        state=Failed
        [ "$code" = 200 ] && state=Succeeded
        _dr_api PATCH "$base/status" "{\"status\":{\"state\":\"$state\",\"lastTransitionTime\":\"$now\"}}" >/dev/null
        _dr_log "$ns/$t: $state (sidecar answered $code)"
    done
}

_dr_loop() {
    local ns=$1 executor=$2 auto=$3 etcd
    _dr_out=$(mktemp "${TMPDIR:-/tmp}/druid-actor.XXXXXX")
    _dr_code=0
    trap 'rm -f "$_dr_out"' EXIT
    trap 'exit 0' TERM
    while :; do
        while IFS= read -r etcd; do
            [ -n "$etcd" ] && _dr_reconcile "$ns" "$auto" "$etcd"
        done < <(_dr_get "/apis/druid.gardener.cloud/v1alpha1/namespaces/$ns/etcds" | jq -c '.items[]?')
        [ "$executor" = 1 ] && _dr_executor "$ns"
        sleep "$DRUID_ACTOR_PERIOD"
    done
}

# Start the druid actor for the Etcds of namespace NS (see the top of this file).
#   druid_actor_start NS [--executor] [--auto-reconcile]
druid_actor_start() {
    local ns=$1 executor=0 auto=0
    shift
    while [ $# -gt 0 ]; do
        case $1 in
        --executor) executor=1 ;;
        --auto-reconcile) auto=1 ;;
        *) wh_fail "druid_actor_start: unknown option $1" ;;
        esac
        shift
    done
    DRUID_ACTOR_LOG=${DRUID_ACTOR_LOG:-$WH_DIR/druid-actor.log}
    _dr_loop "$ns" "$executor" "$auto" &
    DRUID_ACTOR_PID=$!
    ksim_on_exit druid_actor_stop
    export DRUID_ACTOR_LOG
}

# Stop the druid actor: SIGTERM, at most 5 s, then SIGKILL.
druid_actor_stop() {
    local i
    [ -n "$DRUID_ACTOR_PID" ] || return 0
    kill -TERM "$DRUID_ACTOR_PID" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        kill -0 "$DRUID_ACTOR_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$DRUID_ACTOR_PID" 2>/dev/null || true
    wait "$DRUID_ACTOR_PID" 2>/dev/null || true
    DRUID_ACTOR_PID=""
}
