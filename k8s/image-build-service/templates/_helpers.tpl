{{/* Name of the release's objects: <release>-image-build-service, or the release name when it already says so. */}}
{{- define "ibs.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ibs.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "ibs.labels" -}}
{{ include "ibs.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Prometheus label selector of this release's targets (the ServiceMonitor keeps the Service name as job). */}}
{{- define "ibs.promSelector" -}}
namespace="{{ .Release.Namespace }}",job="{{ include "ibs.fullname" . }}"
{{- end -}}

{{/* The settings file: the service's settings sections of the values, empty strings left out (unset). */}}
{{- define "ibs.settings" -}}
{{- $build := dict -}}
{{- range $key, $value := .Values.build -}}
{{- if not (and (kindIs "string" $value) (eq $value "")) -}}
{{- $_ := set $build $key $value -}}
{{- end -}}
{{- end -}}
{{- $settings := dict
  "service" .Values.service
  "sshHostKeyPolicy" .Values.sshHostKeyPolicy
  "insecureRegistries" .Values.insecureRegistries
  "git" .Values.git
  "build" $build
  "logs" .Values.logs
  "retention" .Values.retention
  "usage" .Values.usage
  "prebuilds" (dict "reconcileIntervalSeconds" .Values.prebuilds.reconcileIntervalSeconds "refreshIntervalSeconds" .Values.prebuilds.refreshIntervalSeconds)
  "events" (dict "retrySeconds" .Values.events.retrySeconds) -}}
{{- $builder := dict -}}
{{- with .Values.builder.endpoint -}}
{{- $_ := set $builder "endpoint" . -}}
{{- end -}}
{{- with .Values.builder.tls.serverName -}}
{{- $_ := set $builder "tls" (dict "serverName" .) -}}
{{- end -}}
{{- if $builder -}}
{{- $_ := set $settings "builder" $builder -}}
{{- end -}}
{{- /* auth.mode off with no issuer or rule: no auth section, the settings of the contract as they were. */ -}}
{{- with .Values.auth -}}
{{- if or (eq .mode "enforce") .issuers .rules -}}
{{- $auth := dict "mode" .mode "issuers" .issuers "rules" .rules -}}
{{- with .browser -}}
{{- if .issuer -}}
{{- $_ := set $auth "browser" (dict "issuer" .issuer "clientId" .clientId "scopes" .scopes "redirectUrl" .redirectUrl "sessionHours" .sessionHours) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $settings "auth" $auth -}}
{{- end -}}
{{- end -}}
{{- toYaml $settings -}}
{{- end -}}

{{- define "ibs.gitCredentialsSecret" -}}
{{- .Values.gitCredentials.existingSecret | default (printf "%s-git-credentials" (include "ibs.fullname" .)) -}}
{{- end -}}

{{- define "ibs.buildSecretsSecret" -}}
{{- .Values.buildSecrets.existingSecret | default (printf "%s-build-secrets" (include "ibs.fullname" .)) -}}
{{- end -}}

{{- define "ibs.registryAuthSecret" -}}
{{- .Values.registryAuth.existingSecret | default (printf "%s-registry-auth" (include "ibs.fullname" .)) -}}
{{- end -}}

{{- define "ibs.errorTrackingSecret" -}}
{{- .Values.errorTracking.existingSecret | default (printf "%s-error-tracking" (include "ibs.fullname" .)) -}}
{{- end -}}

{{- define "ibs.hasGitCredentials" -}}
{{- if or .Values.gitCredentials.existingSecret .Values.gitCredentials.entries }}true{{ end -}}
{{- end -}}

{{- define "ibs.hasPrebuildConfigurations" -}}
{{- if or .Values.prebuilds.existingConfigMap .Values.prebuilds.configurations }}true{{ end -}}
{{- end -}}

{{- define "ibs.hasBuildSecrets" -}}
{{- if or .Values.buildSecrets.existingSecret .Values.buildSecrets.entries }}true{{ end -}}
{{- end -}}

{{- define "ibs.eventSubscriptionsSecret" -}}
{{- .Values.events.existingSecret | default (printf "%s-event-subscriptions" (include "ibs.fullname" .)) -}}
{{- end -}}

{{- define "ibs.hasEventSubscriptions" -}}
{{- if or .Values.events.existingSecret .Values.events.subscriptions }}true{{ end -}}
{{- end -}}

{{- define "ibs.hasErrorTracking" -}}
{{- if or .Values.errorTracking.existingSecret .Values.errorTracking.dsn }}true{{ end -}}
{{- end -}}

{{- define "ibs.redisSecret" -}}
{{- .Values.redis.existingSecret | default (printf "%s-redis" (include "ibs.fullname" .)) -}}
{{- end -}}

{{- define "ibs.hasRedis" -}}
{{- if or .Values.redis.existingSecret .Values.redis.url }}true{{ end -}}
{{- end -}}

{{/* A Redis Cluster (redis.clusterNodes) or Sentinels (redis.sentinels) instead of one server. */}}
{{- define "ibs.hasRedisCluster" -}}
{{- if or .Values.redis.clusterNodes .Values.redis.sentinels }}true{{ end -}}
{{- end -}}

{{/* The Secret holding the service's TLS files for the builders; empty when there is none. */}}
{{- define "ibs.builderTlsSecret" -}}
{{- $tls := .Values.builder.tls -}}
{{- if .Values.buildkit.enabled -}}{{ include "ibs.buildkitClientSecret" . }}
{{- else if $tls.existingSecret -}}{{ $tls.existingSecret }}
{{- else if or $tls.ca $tls.cert $tls.key -}}{{ printf "%s-builder-tls" (include "ibs.fullname" .) }}
{{- end -}}
{{- end -}}

{{/* The files of that Secret as the pod sees them (ca.crt, tls.crt, tls.key), as a JSON list. */}}
{{- define "ibs.builderTlsFiles" -}}
{{- $tls := .Values.builder.tls -}}
{{- if or .Values.buildkit.enabled $tls.existingSecret -}}
{{- toJson (list "ca.crt" "tls.crt" "tls.key") -}}
{{- else -}}
{{- $files := list -}}
{{- if $tls.ca }}{{ $files = append $files "ca.crt" }}{{ end -}}
{{- if $tls.cert }}{{ $files = append $files "tls.crt" }}{{ end -}}
{{- if $tls.key }}{{ $files = append $files "tls.key" }}{{ end -}}
{{- toJson $files -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the static token list (tokens.yaml): the team's, or the chart's from auth.tokens. */}}
{{- define "ibs.authTokensSecret" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth-tokens" (include "ibs.fullname" .)) -}}
{{- end -}}

{{- define "ibs.hasAuthTokens" -}}
{{- if or .Values.auth.existingSecret .Values.auth.tokens }}true{{ end -}}
{{- end -}}

{{/* Who the service's NetworkPolicy lets in, in words (the install notes). */}}
{{- define "ibs.networkPolicySources" -}}
{{- $from := list -}}
{{- with .Values.networkPolicy.ingressNamespace }}{{ $from = append $from (printf "%s (ingress controller)" .) }}{{ end -}}
{{- with .Values.networkPolicy.prometheusNamespace }}{{ $from = append $from (printf "%s (Prometheus)" .) }}{{ end -}}
{{- $from = append $from (printf "%s (this release)" .Release.Namespace) -}}
{{- join ", " $from -}}
{{- end -}}
