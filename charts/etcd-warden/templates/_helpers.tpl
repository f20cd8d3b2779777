{{/* Labels every object of the release carries. */}}
{{- define "etcd-warden.labels" -}}
app.kubernetes.io/name: etcd-warden
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* Selector labels of one process: include "etcd-warden.selector" (list . "webhook") */}}
{{- define "etcd-warden.selector" -}}
app.kubernetes.io/name: etcd-warden
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{/* Image reference of a process: include "etcd-warden.image" (list . .Values.webhook.image) */}}
{{- define "etcd-warden.image" -}}
{{- $img := index . 1 -}}
{{- printf "%s:%s" $img.repository (default (index . 0).Chart.AppVersion $img.tag) -}}
{{- end }}

{{/* Username of the controller's service account. */}}
{{- define "etcd-warden.controllerUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ .Values.controller.name }}
{{- end }}

{{/* Name of the webhook configurations (validating and mutating). */}}
{{- define "etcd-warden.webhookConfigName" -}}
{{ .Release.Name }}
{{- end }}

{{/* Name of the cert-manager Certificate of the webhook. */}}
{{- define "etcd-warden.certificateName" -}}
{{ .Values.webhook.name }}
{{- end }}

{{/* Pod anti-affinity spreading the replicas of a process over nodes:
     include "etcd-warden.antiAffinity" (list . "webhook" .Values.webhook.antiAffinity) */}}
{{- define "etcd-warden.antiAffinity" -}}
{{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" (include "etcd-warden.selector" (list (index . 0) (index . 1)) | fromYaml)) -}}
podAntiAffinity:
{{- if eq (index . 2) "hard" }}
  requiredDuringSchedulingIgnoredDuringExecution:
    {{- list $term | toYaml | nindent 4 }}
{{- else if eq (index . 2) "soft" }}
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        {{- toYaml $term | nindent 8 }}
{{- else }}
{{- fail "antiAffinity must be soft or hard" }}
{{- end }}
{{- end }}

{{/* caBundle and cainjector annotation of the webhook configurations, per TLS mode. */}}
{{- define "etcd-warden.caBundle" -}}
{{- if eq .Values.tls.mode "secret" }}
caBundle: {{ required "tls.secret.caBundle is required when tls.mode is secret" .Values.tls.secret.caBundle }}
{{- end }}
{{- end }}

{{- define "etcd-warden.webhookAnnotations" -}}
{{- if eq .Values.tls.mode "certManager" }}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "etcd-warden.certificateName" . }}
{{- end }}
{{- end }}

{{/* One webhook's client configuration: include "etcd-warden.clientConfig" (list . "/webhooks/etcd") */}}
{{- define "etcd-warden.clientConfig" -}}
{{- $ := index . 0 -}}
clientConfig:
  service:
    name: {{ $.Values.webhook.name }}
    namespace: {{ $.Release.Namespace }}
    path: {{ index . 1 }}
    port: {{ $.Values.webhook.servicePort }}
  {{- with include "etcd-warden.caBundle" $ | trim }}{{ . | nindent 2 }}{{ end }}
failurePolicy: {{ $.Values.webhook.failurePolicy }}
timeoutSeconds: {{ $.Values.webhook.timeoutSeconds }}
{{- /* a third argument: the webhook's sideEffects (the Etcd webhook records prefix claims
       in Leases, the scale-down guard and member webhooks a use of break glass, never on a
       dry run: NoneOnDryRun) */}}
sideEffects: {{ if gt (len .) 2 }}{{ index . 2 }}{{ else }}None{{ end }}
{{- /* a fourth argument true: called for every namespace whatever watchNamespace says (the
       prefix claims of Etcds and of copies' and restores' destinations are cluster-wide: an
       Etcd of an unwatched namespace on a watched one's prefix mixes their backups) */}}
{{- $clusterWide := and (gt (len .) 3) (index . 3) }}
namespaceSelector:
  matchExpressions:
    {{- if and $.Values.watchNamespace (ne $.Values.watchNamespace $.Release.Namespace) (not $clusterWide) }}
    {{- /* only the watched namespace: elsewhere the caches and RBAC cannot answer */}}
    - key: kubernetes.io/metadata.name
      operator: In
      values: [{{ $.Values.watchNamespace }}]
    {{- else }}
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: [{{ $.Release.Namespace }}]
    {{- end }}
{{- end }}

{{/* The checks every render makes before anything is written. */}}
{{- define "etcd-warden.validate" -}}
{{- if not (has .Values.tls.mode (list "self" "secret" "certManager")) }}
{{- fail (printf "tls.mode must be self, secret or certManager, not %q" .Values.tls.mode) }}
{{- end }}
{{- if not (has .Values.webhook.failurePolicy (list "Fail" "Ignore")) }}
{{- fail "webhook.failurePolicy must be Fail or Ignore" }}
{{- end }}
{{- if or (lt (int .Values.webhook.timeoutSeconds) 1) (gt (int .Values.webhook.timeoutSeconds) 30) }}
{{- fail "webhook.timeoutSeconds must be between 1 and 30" }}
{{- end }}
{{- with .Values.controller.opsTaskCallTimeout }}
{{- $ms := float64 (include "etcd-warden.durationMs" .) }}
{{- if or (lt $ms 1000.0) (gt $ms 3600000.0) }}
{{- fail (printf "controller.opsTaskCallTimeout must be between 1s and 1h, not %q" .) }}
{{- end }}
{{- end }}
{{- if and .Values.webhook.networkPolicy.enabled (not .Values.webhook.networkPolicy.apiServer) }}
{{- fail "webhook.networkPolicy.apiServer is empty: the API server could not reach the webhook; name its addresses, or set webhook.networkPolicy.enabled=false" }}
{{- end }}
{{- if lt (float64 (include "etcd-warden.durationMs" .Values.tls.self.certLifetime)) 3600000.0 }}
{{- fail (printf "tls.self.certLifetime must be at least 1h, not %q" .Values.tls.self.certLifetime) }}
{{- end }}
{{- /* Values that render, and break the cluster they are installed in. */}}
{{- $w := .Values.webhook }}
{{- if and (eq (int $w.replicas) 0) (eq $w.failurePolicy "Fail") }}
{{- fail "webhook.replicas 0 with webhook.failurePolicy Fail: the API server could reach no webhook and would refuse every change of an Etcd's components; run at least one replica, or set failurePolicy Ignore" }}
{{- end }}
{{- if and $w.podDisruptionBudget.enabled (gt (int $w.replicas) 1) (not (kindIs "string" $w.podDisruptionBudget.minAvailable)) (ge (int $w.podDisruptionBudget.minAvailable) (int $w.replicas)) }}
{{- fail (printf "webhook.podDisruptionBudget.minAvailable %d with webhook.replicas %d: no webhook pod could ever be evicted and node drains would hang; set it below the replicas" (int $w.podDisruptionBudget.minAvailable) (int $w.replicas)) }}
{{- end }}
{{- if and $w.podDisruptionBudget.enabled (gt (int $w.replicas) 1) (eq (toString $w.podDisruptionBudget.minAvailable) "100%") }}
{{- fail "webhook.podDisruptionBudget.minAvailable 100%: no webhook pod could ever be evicted and node drains would hang; set it below the replicas" }}
{{- end }}
{{- if and (not .Values.controller.leaderElection.enabled) (gt (int .Values.controller.replicas) 1) }}
{{- fail (printf "controller.leaderElection.enabled false with controller.replicas %d: every replica would reconcile the same Etcds at once; enable leader election or run one replica" (int .Values.controller.replicas)) }}
{{- end }}
{{- if eq .Values.tls.mode "certManager" }}
{{- $d := float64 (include "etcd-warden.durationMs" .Values.tls.certManager.duration) }}
{{- $r := float64 (include "etcd-warden.durationMs" .Values.tls.certManager.renewBefore) }}
{{- if ge $r $d }}
{{- fail (printf "tls.certManager.renewBefore %q must be shorter than tls.certManager.duration %q: cert-manager would renew the certificate without end" .Values.tls.certManager.renewBefore .Values.tls.certManager.duration) }}
{{- end }}
{{- end }}
{{- if .Values.serviceMonitor.enabled }}
{{- $i := float64 (include "etcd-warden.promDurationMs" .Values.serviceMonitor.interval) }}
{{- $t := float64 (include "etcd-warden.promDurationMs" .Values.serviceMonitor.scrapeTimeout) }}
{{- if gt $t $i }}
{{- fail (printf "serviceMonitor.scrapeTimeout %q must not be longer than serviceMonitor.interval %q: Prometheus refuses such a scrape config" .Values.serviceMonitor.scrapeTimeout .Values.serviceMonitor.interval) }}
{{- end }}
{{- end }}
{{- end }}

{{/* Milliseconds of a duration as Prometheus reads it (1y2w3d4h5m6s7ms). */}}
{{- define "etcd-warden.promDurationMs" -}}
{{- $ms := 0.0 }}
{{- range regexFindAll "[0-9]+(ms|y|w|d|h|m|s)" (toString .) -1 }}
{{- $unit := get (dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 "d" 86400000 "w" 604800000 "y" 31536000000) (regexReplaceAll "^[0-9]+" . "") }}
{{- $ms = addf $ms (mulf (float64 (regexFind "^[0-9]+" .)) $unit) }}
{{- end }}
{{- $ms }}
{{- end }}

{{/* Milliseconds of a duration as the binaries read it (1h30m, 10m, 1.5s, 500ms). */}}
{{- define "etcd-warden.durationMs" -}}
{{- $ms := 0.0 }}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ms|s|m|h)" (toString .) -1 }}
{{- $unit := get (dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000) (regexReplaceAll "^[0-9.]+" . "") }}
{{- $ms = addf $ms (mulf (float64 (regexFind "^[0-9.]+" .)) $unit) }}
{{- end }}
{{- $ms }}
{{- end }}
