{{/* Names and TLS wiring of the chart-deployed BuildKit (buildkit.*); see the chart README. */}}

{{/* The StatefulSet and its headless Service share this name (<= 52 characters, a StatefulSet's limit). */}}
{{- define "ibs.buildkitName" -}}
{{- printf "%s-buildkit" (include "ibs.fullname" . | trunc 43 | trimSuffix "-") -}}
{{- end -}}

{{/* Not the service's labels: the service's Service and Deployment must not select a builder pod. */}}
{{- define "ibs.buildkitSelectorLabels" -}}
app.kubernetes.io/name: buildkit
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: {{ .Chart.Name }}
{{- end -}}

{{- define "ibs.buildkitLabels" -}}
{{ include "ibs.buildkitSelectorLabels" . }}
app.kubernetes.io/version: {{ .Values.buildkit.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/*
The BuildKit StatefulSets as a JSON list: buildkit.pools, each {name, replicas, platforms, nodeSelector,
tolerations, resources} (unset fields from buildkit.*), StatefulSet <name>-<pool>; without pools, one
pool of today's buildkit.* values named <name> (its selector unchanged, so upgrades keep it).
*/}}
{{- define "ibs.buildkitPools" -}}
{{- $bk := .Values.buildkit -}}
{{- $name := include "ibs.buildkitName" . -}}
{{- $pools := list -}}
{{- if $bk.pools -}}
{{- range $pool := $bk.pools -}}
{{- $pools = append $pools (dict
  "pool" $pool.name
  "statefulSet" (printf "%s-%s" $name $pool.name)
  "replicas" (int (default $bk.replicas $pool.replicas))
  "platforms" (default (list) $pool.platforms)
  "nodeSelector" (default $bk.nodeSelector $pool.nodeSelector)
  "tolerations" (default $bk.tolerations $pool.tolerations)
  "resources" (default $bk.resources $pool.resources)) -}}
{{- end -}}
{{- else -}}
{{- $pools = list (dict "pool" "" "statefulSet" $name "replicas" (int $bk.replicas) "platforms" (default (list) $bk.platforms) "nodeSelector" $bk.nodeSelector "tolerations" $bk.tolerations "resources" $bk.resources) -}}
{{- end -}}
{{- toJson $pools -}}
{{- end -}}

{{/* Each pod's host name in the namespace, <statefulset>-N.<headless>, as a JSON list. */}}
{{- define "ibs.buildkitHosts" -}}
{{- $name := include "ibs.buildkitName" . -}}
{{- $hosts := list -}}
{{- range $pool := include "ibs.buildkitPools" . | fromJsonArray -}}
{{- range $i := until (int $pool.replicas) -}}
{{- $hosts = append $hosts (printf "%s-%d.%s" $pool.statefulSet $i $name) -}}
{{- end -}}
{{- end -}}
{{- toJson $hosts -}}
{{- end -}}

{{/* The server certificate's DNS names: every pod, short and fully qualified, as a JSON list. */}}
{{- define "ibs.buildkitServerNames" -}}
{{- $ns := .Release.Namespace -}}
{{- $domain := .Values.buildkit.clusterDomain -}}
{{- $names := list -}}
{{- range $host := include "ibs.buildkitHosts" . | fromJsonArray -}}
{{- $names = concat $names (list $host (printf "%s.%s" $host $ns) (printf "%s.%s.svc" $host $ns) (printf "%s.%s.svc.%s" $host $ns $domain)) -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/*
The service's BUILDER_ENDPOINT: tcp://<host>:<port> of every pod, comma-separated, each followed by
=<platform>+<platform> when its pool declares platforms (docs/fleet.md).
*/}}
{{- define "ibs.buildkitEndpoints" -}}
{{- $port := int .Values.buildkit.port -}}
{{- $name := include "ibs.buildkitName" . -}}
{{- $endpoints := list -}}
{{- range $pool := include "ibs.buildkitPools" . | fromJsonArray -}}
{{- $declared := ternary "" (printf "=%s" (join "+" $pool.platforms)) (empty $pool.platforms) -}}
{{- range $i := until (int $pool.replicas) -}}
{{- $endpoints = append $endpoints (printf "tcp://%s-%d.%s:%d%s" $pool.statefulSet $i $name $port $declared) -}}
{{- end -}}
{{- end -}}
{{- join "," $endpoints -}}
{{- end -}}

{{/* generated, existingSecret or certManager. */}}
{{- define "ibs.buildkitTlsSource" -}}
{{- if .Values.buildkit.tls.existingSecret -}}existingSecret
{{- else if .Values.buildkit.tls.certManager.issuerRef.name -}}certManager
{{- else -}}generated
{{- end -}}
{{- end -}}

{{/* The Secret the chart generates (and reuses on upgrade). */}}
{{- define "ibs.buildkitGeneratedSecret" -}}
{{- printf "%s-tls" (include "ibs.buildkitName" .) -}}
{{- end -}}

{{/* The Secret holding the server's ca.crt, tls.crt and tls.key. */}}
{{- define "ibs.buildkitServerSecret" -}}
{{- $source := include "ibs.buildkitTlsSource" . -}}
{{- if eq $source "existingSecret" -}}{{ .Values.buildkit.tls.existingSecret }}
{{- else if eq $source "certManager" -}}{{ printf "%s-server-tls" (include "ibs.buildkitName" .) }}
{{- else -}}{{ include "ibs.buildkitGeneratedSecret" . }}
{{- end -}}
{{- end -}}

{{/* The Secret holding the service's client pair (and ca.crt). */}}
{{- define "ibs.buildkitClientSecret" -}}
{{- if eq (include "ibs.buildkitTlsSource" .) "certManager" -}}{{ printf "%s-client-tls" (include "ibs.buildkitName" .) }}
{{- else -}}{{ include "ibs.buildkitServerSecret" . }}
{{- end -}}
{{- end -}}

{{/* Volume items laying the client pair out as ca.crt, tls.crt, tls.key (never the server's key). */}}
{{- define "ibs.buildkitClientItems" -}}
{{- if eq (include "ibs.buildkitTlsSource" .) "certManager" -}}
- { key: ca.crt, path: ca.crt }
- { key: tls.crt, path: tls.crt }
- { key: tls.key, path: tls.key }
{{- else -}}
- { key: ca.crt, path: ca.crt }
- { key: client.crt, path: tls.crt }
- { key: client.key, path: tls.key }
{{- end -}}
{{- end -}}

{{/*
The generated TLS material as JSON (base64 values): the release's Secret when it exists (lookup), its
server certificate re-signed by its CA when the pod names changed, else new. Computed once per render
and kept in .Values, so that every include (the Secret, the pods' checksums) sees the same material.
*/}}
{{- define "ibs.buildkitGeneratedData" -}}
{{- $tls := .Values.buildkit.tls -}}
{{- if not (hasKey $tls "_generated") -}}
{{- $serverCn := include "ibs.buildkitName" . -}}
{{- $names := include "ibs.buildkitServerNames" . | fromJsonArray -}}
{{- $namesSum := include "ibs.buildkitServerNames" . | sha256sum -}}
{{- $days := int $tls.validityDays -}}
{{- $previous := lookup "v1" "Secret" .Release.Namespace (include "ibs.buildkitGeneratedSecret" .) -}}
{{- $data := dict -}}
{{- if hasKey (dig "data" dict $previous) "ca.key" -}}
{{- $data = deepCopy $previous.data -}}
{{- if ne (dig "metadata" "annotations" "image-build-service/server-names-sha256" "" $previous) $namesSum -}}
{{- $ca := buildCustomCert (index $data "ca.crt") (index $data "ca.key") -}}
{{- $server := genSignedCert $serverCn nil $names $days $ca -}}
{{- $_ := set $data "tls.crt" ($server.Cert | b64enc) -}}
{{- $_ := set $data "tls.key" ($server.Key | b64enc) -}}
{{- end -}}
{{- else -}}
{{- $ca := genCA (printf "%s-ca" $serverCn) $days -}}
{{- $server := genSignedCert $serverCn nil $names $days $ca -}}
{{- $client := genSignedCert (include "ibs.fullname" .) nil nil $days $ca -}}
{{- $data = dict "ca.crt" ($ca.Cert | b64enc) "ca.key" ($ca.Key | b64enc) "tls.crt" ($server.Cert | b64enc) "tls.key" ($server.Key | b64enc) "client.crt" ($client.Cert | b64enc) "client.key" ($client.Key | b64enc) -}}
{{- end -}}
{{- $_ := set $tls "_generated" $data -}}
{{- end -}}
{{- toJson $tls._generated -}}
{{- end -}}

{{/* Bytes of a size value (digits and an optional Kubernetes suffix, as the schema allows). */}}
{{- define "ibs.bytes" -}}
{{- $text := toString . -}}
{{- $digits := regexFind "^[0-9]+" $text -}}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "P" 1000000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "Pi" 1125899906842624 -}}
{{- $unit := trimPrefix $digits $text -}}
{{- if not (hasKey $units $unit) }}{{ fail (printf "%q is not a size" $text) }}{{ end -}}
{{- mul (int64 $digits) (get $units $unit) -}}
{{- end -}}

{{/*
The daemons' garbage-collection limits in bytes, as JSON strings: each set value, else a share of
buildkit.cache.size (maxUsedSpace 80 %, reservedSpace 10 %, minFreeSpace 10 %).
*/}}
{{- define "ibs.buildkitGc" -}}
{{- $gc := .Values.buildkit.gc -}}
{{- $size := include "ibs.bytes" .Values.buildkit.cache.size | int64 -}}
{{- $share := dict "maxUsedSpace" 80 "reservedSpace" 10 "minFreeSpace" 10 -}}
{{- $out := dict -}}
{{- range $key, $percent := $share -}}
{{- $value := get $gc $key -}}
{{- $_ := set $out $key (ternary (include "ibs.bytes" $value) (toString (div (mul $size $percent) 100)) (ne $value "")) -}}
{{- end -}}
{{- if gt (int64 $out.reservedSpace) (int64 $out.maxUsedSpace) -}}
{{- fail (printf "buildkit.gc.reservedSpace (%s bytes) must not exceed maxUsedSpace (%s bytes)" $out.reservedSpace $out.maxUsedSpace) -}}
{{- end -}}
{{- if gt (int64 $out.maxUsedSpace) $size -}}
{{- fail (printf "buildkit.gc.maxUsedSpace (%s bytes) must not exceed buildkit.cache.size (%d bytes)" $out.maxUsedSpace $size) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
